"""``IntervenableModel``: a classifier, its tokenizer and a task, bound once; vectors, interventions and DAS in memory.

Usage::

    import interp
    lab = interp.IntervenableModel("runs/demo/model", "monli")        # or load_model(...) / a module + tokenizer, and a Task
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=50, seed=0)
    X = lab.vectors(examples, "blocks.2.hook_resid_post@w_h")          # float32 [n, tokens, d_model]
    res = lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h")
    res.iia("lexrel"), res.cliques("lexrel"), res.to_frame()
    das = lab.train_das(examples, "blocks.2.hook_resid_post@w_h", "lexrel", k=16)    # DasResult: held-out IIA, untrained baseline, history
    lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h", intervention=das).iia("lexrel")

The design, in the words of pyvene's ``IntervenableModel`` and
TransformerLens' ``run_with_cache``: strings (a model, a task, a location)
are resolved into objects once, here; the results are objects with named
fields that hold tensors and arrays (:class:`~interp.api.results.InterchangeResult`),
and writing a file is a method of the result, not the only way to see it.
Behind every call sits the fast engine (:mod:`interp.engine.batched`, and
:mod:`interp.engine.pair_suffix` for trained interventions) or, with
``naive=True``, the reference of one hooked pass per pair
(:mod:`interp.engine.naive`); the tests hold the two equal. Hooks are
removed in ``finally`` and the model's weights are never changed: DAS trains
the intervention only.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from jaxtyping import Float
from torch import Tensor

from interp.analysis.chance import chance_messages, split_accuracies
from interp.analysis.iia import summarize_matrices
from interp.api.loading import Classifier, classifier_for, load_model, load_task
from interp.api import das
from interp.api.das_result import DasResult
from interp.api.results import InterchangeResult, InterchangeSet
from interp.api.specs import DataSpec, RunSpec
from interp.backends import Backend, check_backend_name, get_backend
from interp.causal import interchange_codes
from interp.core.devices import pick_device, rank_device
from interp.core.errors import ConfigError, InterpWarning, named, renamed, warn
from interp.engine.batched import precision, vectors_and_logits
from interp.engine.interventions import Interchange, Intervention
from interp.engine.naive import naive_interchange, naive_intervene
from interp.engine.pair_suffix import PairSuffix
from interp.files.interventions import FORMAT, check_variable_names, save_interventions
from interp.hooks.architecture import batch_inputs
from interp.hooks.encoding import Encoded, check_wordpiece_rule, collate, encode_examples, location_tokens
from interp.hooks.locations import Location, parse_locations
from interp.models.evaluation import predict_logits
from interp.models.labels import LabelReading
from interp.tasks import Task


class IntervenableModel:
    """A model bound to a task: the vectors at a location, interchange interventions with any intervention module, DAS.

    pyvene's ``IntervenableModel`` wraps a model with interventions configured at construction and runs one forward
    call per batch of base and source inputs, returning the intervened outputs. This one binds a model to a *task*
    instead: a location names a token role of the task (``@w_h``), the interventions are given per call
    (:meth:`interchange`'s ``intervention=``), every base is run against every source with the prefix up to the
    location computed once, and the result is read against the task's causal model
    (:class:`~interp.api.results.InterchangeResult`: IIA, its nulls and intervals, cliques) rather than returned
    as raw outputs. Every call takes the examples first, then the location (:meth:`vectors`, :meth:`interchange`,
    :meth:`train_das`).

    Args:
        model: a :class:`~interp.api.loading.Classifier`, a spec (``"minilm"``, a checkpoint directory), or a
            ``...ForSequenceClassification`` module with ``tokenizer``.
        task: a :class:`~interp.tasks.base.Task` or its name (``"monli"``, ...; ``data_dir`` / ``data_file`` as :func:`load_task`).
        wordpiece: which WordPiece token stands for a split word: ``first``, ``last`` or ``all``.
        device: ``"cpu"``, ``"cuda"``, ``"auto"``; ``None`` leaves the model where it is.
        batch_size: pairs per suffix pass; ``None``: 256 on CPU, from free memory on a GPU.
        backend: who runs vanilla interchanges and reads vectors: ``hf`` (the model's own modules and the
            engine) or ``transformer-lens`` (a TransformerBridge over a copy, made on first use; :mod:`interp.backends`).
        complete: ``False`` accepts a model whose labels do not cover every one of the task's (enough to read vectors:
            :meth:`vectors`, :meth:`run_with_cache`; not to read predictions as the task's).

    Raises:
        ModelError: the model's labels cannot be read as the task's (by name, in any order, extra labels folded:
            :meth:`~interp.api.loading.Classifier.reading`), or the model lacks one of them.
        ConfigError: an unknown ``wordpiece`` rule, ``device`` or ``backend``.
    """

    def __init__(self, model, task, *, tokenizer=None, wordpiece: str = "first", device: str | None = None,
                 batch_size: int | None = None, data_dir: str | None = None, data_file: str | None = None,
                 backend: str = "hf", complete: bool = True) -> None:  # fmt: skip
        self.task: Task = load_task(task, data_dir=data_dir, data_file=data_file)
        self.model: Classifier = load_model(model, tokenizer)
        self.reading: LabelReading = self.model.reading(self.task, complete=complete)
        self.wordpiece = check_wordpiece_rule(wordpiece)
        self.batch_size = batch_size
        self.backend_name = check_backend_name(backend)
        if device is not None:
            self.model.to(pick_device(device))
        self._encoded: dict[str, Encoded] = {}
        self._backend: Backend | None = None
        self._shared: dict | None = None  # inside _interchange_set: what every location's result shares, computed once
        self._memo: dict | None = None  # inside interp.api.das.reuse: the pairs, predictions and pair runner DAS calls share

    @classmethod
    def from_specs(cls, model, data: DataSpec, run: RunSpec = RunSpec(), *, variables: Sequence[str] = (),
                   splits: Sequence[str] = (), complete: bool = True) -> "IntervenableModel":  # fmt: skip
        """The edge of a job: the task ``data`` names resolved once (``variables`` and ``splits`` checked against it),
        the model loaded with its own head and placed on ``run``'s device (under ``torchrun``, this process's GPU),
        bound with ``run``'s WordPiece rule, batch size and backend.

        ``model``: a checkpoint spec or a :class:`~interp.api.loading.Classifier`. Draw the examples with
        ``sample.draw(lab.task)`` (:class:`~interp.api.specs.SampleSpec`). ``complete``: as the constructor's.

        Raises:
            ConfigError, DataError: as :meth:`~interp.api.specs.DataSpec.load`; a device that is not there.
            ModelError: a checkpoint without a classification head, or labels that cannot be read as the task's.
        """
        task = data.load(variables=variables, splits=splits)
        lab = cls(classifier_for(model, task, complete=complete), task, wordpiece=run.wordpiece, batch_size=run.batch_size,
                  backend=run.backend, complete=complete)  # fmt: skip
        lab.model.to(pick_device(rank_device(run.device)))
        return lab

    def __repr__(self) -> str:
        return f"IntervenableModel(model={self.model.name!r}, task={self.task.name!r}, wordpiece={self.wordpiece!r})"

    # -- inputs ------------------------------------------------------------------------------------------------

    def encode(self, examples: Sequence) -> list[Encoded]:
        """The examples tokenized with every role's token positions (:func:`interp.hooks.encoding.encode_examples`), cached by id."""
        todo = [e for e in examples if e.id not in self._encoded]
        for e, enc in zip(todo, encode_examples(todo, self.model.tokenizer, self.wordpiece, self.task.labels)):
            self._encoded[e.id] = enc
        return [self._encoded[e.id] for e in examples]

    def locations(self, locations: str, variables: Sequence[str] = ()) -> list[Location]:
        """Every location ``locations`` names: comma-separated, ``all``, ``aligned``; a bare site stands for ``variables``' aligned roles.

        Raises:
            ConfigError: malformed, out of range for the model, or a role the task lacks.
        """
        return parse_locations(locations, self.model.n_layers, self.task.roles, self.task.default_roles(variables), self.model.n_heads)

    def location(self, location: str | Location, variables: Sequence[str] = ()) -> Location:
        """One :class:`~interp.hooks.locations.Location`; a bare site (no ``@ROLE``) stands for ``variables``' aligned roles.

        Raises:
            ConfigError: naming ``location=``: malformed, out of range for the model, a role the task lacks, or several locations.
        """
        if isinstance(location, Location):
            return location
        if not isinstance(location, str):
            raise ConfigError(f"{named('location')} must be a location string (e.g. blocks.2.hook_resid_post@w_h) or a Location, "
                              f"got {type(location).__name__}")
        found = self.locations(location, variables)
        if len(found) != 1:
            raise ConfigError(f"{named('location', repr(location))} names {len(found)} locations; give one (e.g. blocks.2.hook_resid_post@w_h)")
        return found[0]

    # -- reading ---------------------------------------------------------------------------------------------------

    def predict(self, examples: Sequence) -> Float[Tensor, "n labels"]:
        """The model's logits on each example, float32 ``[n, n_model_labels]`` on CPU (no intervention), in the model's
        own label order (:attr:`reading` reads them as the task's).

        Raises:
            ConfigError: naming ``examples=``: not a non-empty list of the task's examples.
        """
        examples = self.task.check_examples(examples)
        return predict_logits(self.model.module, self.encode(examples), self.model.tokenizer.pad_token_id)

    def vectors(self, examples: Sequence, location: str | Location) -> Float[Tensor, "n tokens width"]:
        """Each example's vectors at ``location``: float32 ``[n, tokens, width]`` on CPU.

        ``tokens`` is the number of tokens the location covers (one per role;
        every piece under ``wordpiece="all"``), ``width`` is d_model, or
        d_head at one head's ``attn.hook_z``. The same vectors as
        :func:`interp.engine.naive.naive_vector`'s batch-1 pass. The examples come first, then the location, as in
        :meth:`interchange` and :meth:`train_das`; the older order ``vectors(location, examples)`` still works, with
        a :class:`DeprecationWarning`.
        """
        if isinstance(examples, (str, Location)):  # the older order: vectors(location, examples)
            _old_order("vectors(location, examples)", "vectors(examples, location)")
            examples, location = location, examples
        loc = self.location(location)
        examples = self.task.check_examples(examples)
        flat = self.source_vectors(loc, examples).cpu()
        return flat.view(len(examples), -1, loc.token_width(self.model.module.config))

    def width(self, examples: Sequence, location: str | Location) -> int:
        """How many numbers ``location``'s vector holds on ``examples`` (tokens × d_model, or × d_head at one head's
        ``attn.hook_z``): the size an intervention there acts on, and the largest ``k`` of a subspace.

        Raises:
            ConfigError: naming the location and the first example that lacks one of its roles, or whose token count
                differs from the others' (``wordpiece="all"``).
        """
        loc = self.location(location)
        tokens = location_tokens(self.encode(list(examples)), loc.roles, f"location {loc}")
        return len(tokens[0]) * loc.token_width(self.model.module.config)

    def run_with_cache(self, examples: Sequence, locations: Sequence[Location]) -> dict[Location, Float[Tensor, "n flat"]]:
        """One forward pass of ``examples`` as one padded batch, reading every location at once: each location's float32
        ``[n, tokens × width]`` on CPU (TransformerLens' ``run_with_cache``, at this task's token roles). The same
        vectors as :meth:`vectors`, which runs the model once per location; the model is not changed.
        """
        encoded = self.encode(examples)
        batch = collate(encoded, self.model.tokenizer.pad_token_id)
        with torch.no_grad():
            trace = self.backend.read(batch_inputs(self.model.module, batch, self.model.device), batch["positions"], list(locations))
        return {loc: trace[loc].float().cpu() for loc in locations}

    def precision(self, name: str):
        """A context (``with lab.precision("bf16"): ...``) in which the model runs in fp32, with TF32 GPU matmuls, or in
        bfloat16 (:func:`interp.engine.batched.precision`); the weights are restored exactly when it ends.

        Raises:
            ConfigError: ``name`` is not one of fp32, tf32, bf16.
        """
        return precision(self.model.module, name)

    @property
    def backend(self) -> Backend:
        """The :mod:`~interp.backends` backend vanilla interchanges run on, made on first use (a bridge copies the model)."""
        if self._backend is None:
            self._backend = get_backend(self.backend_name, self.model.module, self.model.tokenizer)
        return self._backend

    def source_vectors(self, location: Location, sources: Sequence) -> Float[Tensor, "n flat"]:
        """Each source's vector at ``location``, flattened: float32 ``[n, tokens × width]`` on the model's device."""
        return self.backend.source_vectors(self.encode(sources), location)

    def interchange_logits(self, bases: Sequence, sources: Sequence | Tensor, location: Location, *,
                           on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
        """The engine alone: logits ``[len(bases), n_sources, n_model_labels]`` (float32, CPU) of every base with the vector at
        ``location`` replaced by each source's, no causal model read.

        ``sources`` are examples, or their vectors already read (``[n_sources, tokens × width]``, from
        :meth:`source_vectors` or an activation cache). ``on_rows(k)`` is told after each k pairs.
        """
        vectors = sources if isinstance(sources, Tensor) else self.source_vectors(location, sources)
        return self.backend.interchange_logits(self.encode(bases), vectors, location, batch_size=self.batch_size, on_rows=on_rows)

    def split_accuracies(self, examples: Sequence, own: np.ndarray | None = None, *, warn_at_chance: bool = True) -> list[dict]:
        """The model's accuracy on each split among ``examples``, with its Wilson interval, beside the majority label's share
        (:func:`interp.analysis.chance.split_accuracies`); with ``warn_at_chance``, an
        :class:`~interp.core.errors.InterpWarning` for every split where the model is not above chance.

        ``own``: the model's own task label ids on ``examples`` when already computed (``None``: predicted here).
        """
        examples = list(examples)
        own = self.reading.predict(self.predict(examples)) if own is None else own
        gold = np.array([self.task.labels.index(e.label) for e in examples])
        rows = split_accuracies([getattr(e, "split", "examples") for e in examples], gold, own)
        if warn_at_chance:
            for message in chance_messages(rows, f"model {self.model.name!r}"):
                warn(message)
        return rows

    def evaluate(self, examples: Sequence):
        """The model's accuracy on each split among ``examples``, its predictions read as the task's labels
        (:attr:`reading`: by name, in any order, extra labels folded), beside chance; warns at chance as
        :meth:`split_accuracies` does.

        Returns:
            A ``pandas.DataFrame``, one row per split (in order of first appearance): ``split``, ``examples``,
            ``accuracy`` with ``accuracy_low`` and ``accuracy_high`` (0..1, the 95% Wilson interval), ``majority`` (the
            most common gold label's share, the null), ``at_chance`` (the interval does not lie above it), and per task
            label ``recall_<label>``: accuracy on the examples of that gold label (NaN where the split has none).

        Raises:
            ConfigError: naming ``examples=``: not a non-empty list of the task's examples.
        """
        import pandas as pd

        examples = self.task.check_examples(examples)
        own = self.reading.predict(self.predict(examples))
        gold = np.array([self.task.labels.index(e.label) for e in examples])
        splits = np.array([getattr(e, "split", "examples") for e in examples], dtype=object)
        rows = []
        for r in self.split_accuracies(examples, own):
            where = splits == r["split"]
            row = {"split": r["split"], "examples": r["examples"], "accuracy": float(r["accuracy"]), "accuracy_low": r["accuracy"].low,
                   "accuracy_high": r["accuracy"].high, "majority": float(r["majority"]), "at_chance": r["at_chance"]}  # fmt: skip
            for j, label in enumerate(self.task.labels):
                mine = where & (gold == j)
                row[f"recall_{label}"] = float((own[mine] == j).mean()) if mine.any() else float("nan")
            rows.append(row)
        return pd.DataFrame(rows)

    # -- interventions ---------------------------------------------------------------------------------------

    def interchange(
        self,
        bases: Sequence,
        sources: Sequence,
        location: str | Location | Sequence[str | Location],
        *,
        variables: Sequence[str] | None = None,
        intervention: Intervention | None = None,
        naive: bool = False,
    ) -> InterchangeResult | InterchangeSet:
        """Run the model on every base with the vectors at ``location`` replaced, for every source.

        The interchange intervention (Geiger, Richardson & Potts 2020, §6.2)
        by default; with ``intervention`` any module of
        :mod:`interp.engine.interventions` writes ``intervention(base vector,
        source vector)`` instead (a trained DAS subspace: Geiger et al. 2024, §3).

        Args:
            bases, sources: the task's examples (the same list twice for the square set the graph and files need).
            location: where (one location; a bare site stands for ``variables``' roles); a list or tuple of locations
                runs each and returns an :class:`~interp.api.results.InterchangeSet` (one table, one file).
            variables: whose counterfactuals to compute (``None``: every variable of the task).
            naive: use the one-pass-per-pair reference instead of the engine.

        Returns:
            An :class:`InterchangeResult` with ``logits`` ``[n_bases, n_sources, n_model_labels]``; for a list of
            locations, an :class:`~interp.api.results.InterchangeSet` of them. With the Hugging Face backend a vanilla
            interchange runs the model once over bases and sources
            (:func:`~interp.engine.batched.vectors_and_logits`): that pass gives the sources' vectors and the model's
            own predictions, which the nulls need, so they cost no second pass.

        Raises:
            ConfigError: a variable the task lacks, a location an example lacks, an intervention
                of another width, a trained intervention at a component site.
        """
        if isinstance(location, (list, tuple)):
            return self._interchange_set(bases, sources, location, variables=variables, intervention=intervention, naive=naive)
        with renamed(examples="bases"):
            bases = self.task.check_examples(bases)
        with renamed(examples="sources"):
            sources = self.task.check_examples(sources)
        intervention = getattr(intervention, "intervention", intervention)  # a DasResult stands for its trained module
        if intervention is not None and not isinstance(intervention, Intervention):
            raise ConfigError(f"{named('intervention')} must be an Intervention (RotatedSubspace, ...) or a DasResult, got {type(intervention).__name__}")
        variables = tuple(self.task.variables if variables is None else variables)
        with renamed(variable="variables"):
            for variable in variables:
                self.task.check_variable(variable)
        check_variable_names(variables)
        loc = self.location(location, variables)
        model = self.model.module
        base_enc, source_enc = self.encode(bases), self.encode(sources)
        tokens = location_tokens(base_enc + source_enc, loc.roles, f"`bases=`, `sources=` at location {loc}")  # one token count for all
        vanilla = intervention is None or isinstance(intervention, Interchange)
        width = len(tokens[0]) * loc.token_width(self.model.module.config)
        if not vanilla and intervention.width != width:
            raise ConfigError(f"`intervention=`: its width {intervention.width} is not location {loc}'s {width}")
        pad = self.model.tokenizer.pad_token_id
        own = None  # the model's own logits on every example, where a pass the interchange needs anyway gives them
        if naive:
            logits = (naive_interchange(model, base_enc, source_enc, loc, pad) if vanilla
                      else naive_intervene(model, base_enc, source_enc, loc, intervention, pad))  # fmt: skip
        elif vanilla and self.backend_name == "hf" and (self._shared is None or self._shared_key(bases, sources, variables) not in self._shared):
            every = _every(bases, sources)  # one pass reads the sources' vectors and every example's own logits
            vectors, own = vectors_and_logits(model, self.encode(every), loc)
            row = {e.id: i for i, e in enumerate(every)}
            logits = self.interchange_logits(bases, vectors[[row[e.id] for e in sources]], loc)
        elif vanilla:
            logits = self.interchange_logits(bases, sources, loc)
        else:
            runner = PairSuffix(model, base_enc + source_enc, loc)
            rows = torch.arange(len(bases)).repeat_interleave(len(sources))
            cols = torch.arange(len(sources)).repeat(len(bases)) + len(bases)
            intervention.to(runner.vectors.device).eval()
            with torch.no_grad():
                logits = runner.logits(rows, cols, intervention, self.batch_size).view(len(bases), len(sources), -1)
        return self._result(bases, sources, base_enc, source_enc, loc, variables, logits.float().cpu(), own)

    def _interchange_set(self, bases, sources, locations: Sequence, **options) -> InterchangeSet:
        """:meth:`interchange` at each of ``locations``, gathered in one :class:`InterchangeSet` that saves into one file."""
        if not locations:
            raise ConfigError("`location=` names no location; give one, or a list of several")
        results: dict[str, InterchangeResult] = {}
        self._shared = {}  # the counterfactuals and the model's own predictions: the same at every location
        try:
            with warnings.catch_warnings():  # a chance warning once, not once per location
                for i, location in enumerate(locations):
                    if i == 1:
                        warnings.simplefilter("ignore", InterpWarning)
                    result = self.interchange(bases, sources, location, **options)
                    if str(result.location) in results:
                        raise ConfigError(f"{named('location', str(result.location))} is named twice")
                    results[str(result.location)] = result
        finally:
            self._shared = None
        first = next(iter(results.values()))
        order = [r.location for r in results.values()]
        with renamed(examples="bases"):
            rows = self.task.check_examples(bases)

        def write(path: Path) -> None:  # square (save() checks); the file's attributes name every location
            meta = {**first.meta, "locations": [str(loc) for loc in order]}
            self.write(path, rows, order, lambda index, loc: results[str(loc)].logits.numpy(), meta=meta, causal_pred=first.causal_pred,
                       values=list(first.values.values()), base_pred=first.base_pred)  # fmt: skip

        return InterchangeSet(results, _writer=write)

    @staticmethod
    def _shared_key(bases, sources, variables) -> tuple:
        """What identifies a set's shared context: the bases', the sources' ids and the variables."""
        return tuple(e.id for e in bases), tuple(e.id for e in sources), tuple(variables)

    def _result(self, bases, sources, base_enc, source_enc, loc: Location, variables, logits, own=None) -> InterchangeResult:
        labels = tuple(self.task.labels)
        key = self._shared_key(bases, sources, variables)
        shared = None if self._shared is None else self._shared.get(key)
        if shared is None:
            shared = self._shared_context(bases, sources, variables, own)
            if self._shared is not None:
                self._shared[key] = shared
        causal_name, causal_pred, base_pred, source_pred, values, source_values = shared
        meta = self.file_meta(causal_name, variables, [loc], unit_size=len(bases))
        result = InterchangeResult(
            location=loc, labels=labels, base_ids=tuple(e.id for e in bases), source_ids=tuple(e.id for e in sources),
            logits=logits, base_pred=base_pred, source_pred=source_pred,
            base_label=np.array([labels.index(e.label) for e in bases], dtype=np.int8),
            causal_pred=causal_pred, values=values, source_values=source_values, meta=meta,
            read=self.reading.read,
        )  # fmt: skip

        def write(path: Path) -> None:  # square (save() checks): what the result holds is the file's
            self.write(path, bases, [loc], lambda index, _: logits.numpy(), meta=meta, causal_pred=causal_pred,
                       values=list(values.values()), base_pred=base_pred)  # fmt: skip

        result._writer = write
        return result

    def _shared_context(self, bases, sources, variables, own_logits=None) -> tuple:
        """What a result needs besides its logits, the same at every location: the causal model's name, the
        counterfactuals, the model's own predictions of bases and sources (a warning where a split is at chance),
        and every variable's values on bases and on sources. ``own_logits``: the model's logits on :func:`_every`'s
        examples, where the interchange's own pass read them (``None``: predicted here)."""
        task = self.task
        every = _every(bases, sources)
        causal = task.build_causal_model(every)
        causal_pred = self._counterfactuals(causal, bases, sources, variables)
        own = self.reading.predict(self.predict(every) if own_logits is None else own_logits)
        self.split_accuracies(every, own)
        row = {e.id: i for i, e in enumerate(every)}
        values = {v: task.values(causal, bases, v) for v in task.variables}
        source_values = {v: task.values(causal, sources, v) for v in task.variables}
        return causal.name, causal_pred, own[[row[e.id] for e in bases]], own[[row[e.id] for e in sources]], values, source_values

    def _counterfactuals(self, causal, bases: Sequence, sources: Sequence, variables: Sequence[str]) -> dict[str, np.ndarray]:
        """Each variable's interchange counterfactual as label ids: int8 ``[n_bases, n_sources]`` (Geiger et al. 2020, §6.2)."""
        base_inputs, source_inputs = [self.task.inputs(e) for e in bases], [self.task.inputs(e) for e in sources]
        return {v: interchange_codes(causal, base_inputs, source_inputs, v, self.task.labels) for v in variables}

    def file_meta(self, causal_model: str, variables: Sequence[str], locations: Sequence[Location], *, unit_size: int,
                  precision: str = "fp32") -> dict:  # fmt: skip
        """The attributes of an interventions file of this model and task (:mod:`interp.files.interventions`):
        what a later run compares to reuse it, and what the probe, clique and report commands read."""
        return {
            "format": FORMAT, **self.task.file_attrs(variables), "causal_model": causal_model, "variables": list(variables),
            "model": self.model.name, "model_sha256": self.model.sha256, "wordpiece": self.wordpiece, "labels": list(self.task.labels),
            "locations": [str(loc) for loc in locations], "unit_size": unit_size, "precision": precision,
            **({"backend": self.backend_name} if self.backend_name != "hf" else {}),
            **({} if self.reading.identity else {"model_labels": list(self.reading.model_labels), "model_read": list(self.reading.read)}),
        }  # fmt: skip

    def write(self, path: str | Path, examples: Sequence, locations: Sequence[Location],
              logits_at: Callable[[int, Location], np.ndarray], *, meta: dict,
              location_attrs: Callable[[int], dict] | None = None, causal_pred: dict[str, np.ndarray] | None = None,
              values: list | None = None, base_pred: np.ndarray | None = None) -> Path:  # fmt: skip
        """Write the interventions file (:mod:`interp.files.interventions`) of ``examples`` × ``examples`` at ``locations``.

        ``logits_at(index, location)`` gives float32 ``[n, n, n_model_labels]``, one location at a time. The causal
        model's counterfactuals for ``meta["variables"]`` (int8 ``[n, n]`` each), every variable's values and the
        model's own predictions (``[n]``) are computed here unless given (a result passes its own); the file is
        written by :func:`interp.files.interventions.save_interventions` (whole, or not at all).
        """
        task, examples = self.task, list(examples)
        if causal_pred is None or values is None:
            causal = task.build_causal_model(examples)
            causal_pred = self._counterfactuals(causal, examples, examples, meta["variables"])
            values = [task.values(causal, examples, v) for v in task.variables]
        if base_pred is None:
            base_pred = self.reading.predict(self.predict(examples))
        label = np.array([task.labels.index(e.label) for e in examples], dtype=np.int8)
        codes = {v.variable: v.codes for v in values}

        def summary(variable: str, loc: Location, model_pred: np.ndarray) -> dict:  # IIA with its intervals, kept beside the matrices
            found = summarize_matrices(str(loc), variable, model_pred, causal_pred[variable], codes[variable], label, base_pred)
            return {"summary": json.dumps(found)}

        return save_interventions(path, meta, examples, self.encode(examples), task.roles, base_pred, values, causal_pred, list(locations),
                                  logits_at, location_attrs, summary)  # fmt: skip

    # -- distributed alignment search ------------------------------------------------------------------------

    def train_das(
        self,
        examples: Sequence,
        location: str | Location,
        variable: str,
        *,
        k: int | None = None,
        kind: str = "rotated",
        n_pairs: int = 1000,
        epochs: int = 2,
        lr: float = 1e-3,
        batch_size: int = 64,
        seed: int = 0,
        test_share: float = 0.2,
        test_pairs: int = 200,
        on_step: Callable[[float], None] | None = None,
        on_blocks: Callable[[int, int], None] | None = None,
        warn_unlearned: bool = True,
    ) -> DasResult:
        """Train a subspace intervention so that the intervened model follows the causal model's counterfactuals on ``variable``;
        score it, and the same intervention untrained, on held-out pairs.

        Distributed alignment search (Geiger, Wu, Potts, Icard & Goodman 2024,
        §3; ``kind="boundless"``: Wu et al. 2023, §3): ``examples`` are split
        (seeded, ``test_share`` held out: :func:`interp.causal.pairs.split_examples`);
        ``n_pairs`` balanced counterfactual pairs among the training part
        (:func:`interp.causal.pairs.counterfactual_pairs`, half of them
        changing the output), the model frozen, the intervention's parameters
        trained with Adam on cross-entropy; ``test_pairs`` pairs among the
        held-out part score it after every epoch and at the end. The untrained
        baseline is the same kind and ``k`` with the initial parameters, on the
        same held-out pairs; an :class:`~interp.core.errors.InterpWarning`
        names both figures when the trained IIA does not clear it. Vanilla
        interchange and the localist baseline (the best block of ``k``
        coordinates) are scored on the same pairs (:mod:`interp.api.das`).

        Args:
            examples, location, variable: in the order of :meth:`vectors` and :meth:`interchange` (examples first); the
                older order ``train_das(variable, location, examples)`` still works, with a :class:`DeprecationWarning`.
            k: dimensions of the subspace (``rotated``, ``lowrank``); ignored by ``boundless``.
            kind: ``rotated`` (DAS), ``lowrank`` (the same function, width × k parameters) or ``boundless``.
            on_step: told each optimizer step's loss (nats per pair), e.g. for a progress bar.
            on_blocks: told ``(blocks scored, blocks in all)`` while the localist baseline's block is chosen: every
                block of ``k`` coordinates on up to 256 training pairs, ``width // k × 256`` suffix runs, which at a
                small ``k`` can take longer than training.
            warn_unlearned: ``False`` leaves the warnings (a split at chance, no gain over the untrained baseline) to the caller.

        Returns:
            A :class:`~interp.api.das_result.DasResult`: the trained module (``.intervention``, eval mode; pass the
            result or the module to :meth:`interchange` as ``intervention=``), held-out IIA, the untrained baseline
            and their difference with 95% intervals over the held-out examples, vanilla interchange and the localist
            baseline, and the per-epoch history.

        Raises:
            ConfigError: naming ``variable=``, ``location=`` (component sites are refused), ``k=``, ``kind=``,
                ``epochs=``, ``lr=``, ``batch_size=``, ``test_share=`` or ``test_pairs=``.
        """
        if isinstance(examples, str):  # the older order: train_das(variable, location, examples)
            _old_order("train_das(variable, location, examples)", "train_das(examples, location, variable)")
            examples, variable = variable, examples
        return das.train(self, examples, location, variable, k=k, kind=kind, n_pairs=n_pairs, epochs=epochs, lr=lr,
                         batch_size=batch_size, seed=seed, test_share=test_share, test_pairs=test_pairs, on_step=on_step,
                         on_blocks=on_blocks, warn_unlearned=warn_unlearned)  # fmt: skip

    def score_das(self, examples: Sequence, intervention: Intervention | DasResult, location: str | Location, variable: str, *,
                  seed: int = 0, test_share: float = 0.2, test_pairs: int = 200) -> dict[str, dict]:  # fmt: skip
        """Score a trained intervention, and vanilla interchange, on the held-out pairs :meth:`train_das` draws with the
        same ``seed``, ``test_share`` and ``test_pairs`` (:func:`interp.api.das.score`: its return value and errors).
        With a run's own settings this reproduces its held-out IIA, e.g. of an intervention read back from a file."""
        module = intervention.intervention if isinstance(intervention, DasResult) else intervention
        return das.score(self, examples, module, location, variable, seed=seed, test_share=test_share, test_pairs=test_pairs)


def _old_order(old: str, new: str) -> None:
    """Warn that a call used the argument order of earlier releases (it still works, for one more release)."""
    warnings.warn(f"IntervenableModel.{old} is the older argument order; write {new} (examples first, then the location)",
                  DeprecationWarning, stacklevel=3)  # fmt: skip


def _every(bases: Sequence, sources: Sequence) -> list:
    """The examples among ``bases`` and ``sources``, each once, in order of first appearance."""
    return list({e.id: e for e in [*bases, *sources]}.values())
