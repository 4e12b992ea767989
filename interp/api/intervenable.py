"""``IntervenableModel``: a classifier, its tokenizer and a task, bound once; vectors, interventions and DAS in memory.

Usage::

    import interp
    lab = interp.IntervenableModel("runs/demo/model", "monli")        # or load_model(...) / a module + tokenizer, and a Task
    examples = lab.bind(lab.task.examples(("pmonli", "nmonli_test"), per_split=50, seed=0))   # or the list itself
    X = lab.vectors(examples, "blocks.2.hook_resid_post@w_h")          # float32 [n, tokens, d_model]
    res = lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h")
    res.iia("lexrel"), res.cliques("lexrel"), res.to_frame(), res.save("iv.h5")
    das = lab.train_das(examples, "blocks.2.hook_resid_post@w_h", "lexrel", k=16)    # DasResult: held-out IIA, untrained baseline, history
    lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h", intervention=das).iia("lexrel")

The design, in the words of pyvene's ``IntervenableModel`` and TransformerLens' ``run_with_cache``: strings (a model,
a task, a location) are resolved into objects once, here; the results are objects with named fields
(:class:`~interp.api.results.InterchangeResult`) that save themselves. The face is thin: how the model runs is its
runner's (:mod:`interp.backends`: the engine, or a TransformerLens bridge, each with its reference), what is reused
between calls is the bound example set's (:class:`~interp.api.example_set.ExampleSet`), what a call computes is
:mod:`interp.api.interchange`'s, :mod:`interp.api.das`'s or :mod:`interp.api.evaluation`'s, and writing a file is the
result's. Hooks are removed in ``finally`` and the model's weights are never changed: DAS trains the intervention only.
"""

from __future__ import annotations

import warnings
from typing import Callable, Sequence

from jaxtyping import Float
from torch import Tensor

from interp.api import ablation, das, joint, joint_das, paths
from interp.api.das_result import DasResult
from interp.api.evaluation import evaluation_frame, split_accuracies
from interp.api.example_set import Binding, ExampleSet
from interp.api.interchange import interchange, interchange_set
from interp.api.loading import Classifier, classifier_for, fit_task, load_model, load_model_for, load_task
from interp.api.objects import Intervention, Location, SiteGradients
from interp.api.results import InterchangeResult, InterchangeSet
from interp.api.screen import ScreenResult, screen, screen_locations
from interp.api.specs import DataSpec, RunSpec
from interp.backends import check_backend_name, get_runner
from interp.core.devices import pick_device, rank_device
from interp.core.checks import check_bool
from interp.core.errors import ConfigError, named, renamed
from interp.files.interventions import check_variable_names
from interp.hooks.encoding import check_wordpiece_rule, encode_examples, location_tokens
from interp.hooks.inputs import parse_model_locations
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
    as raw outputs. Every call takes the examples first (a list of the task's examples, or an
    :class:`~interp.api.example_set.ExampleSet` from :meth:`bind`), then the location.

    Args:
        model: a :class:`~interp.api.loading.Classifier`, a spec (``"minilm"``, a checkpoint directory), or a
            ``...ForSequenceClassification`` module with ``tokenizer``.
        task: a :class:`~interp.tasks.base.Task` or its name (``"monli"``, ...; ``data_dir`` / ``data_file`` as :func:`load_task`).
        wordpiece: which WordPiece token stands for a split word: ``first``, ``last`` or ``all``.
        device: ``"cpu"``, ``"cuda"``, ``"auto"``; ``None`` leaves the model where it is.
        batch_size: pairs per suffix pass; ``None``: 256 on CPU, from free memory on a GPU.
        backend: the runner (:mod:`interp.backends`): ``hf`` (the model's own modules and the engine) or
            ``transformer-lens`` (a TransformerBridge over a copy, made on first use).
        complete: ``False`` accepts a model whose labels do not cover every one of the task's (enough to read vectors:
            :meth:`vectors`, :meth:`run_with_cache`; not to read predictions as the task's).
        compile: an encoder's: run the interchange's suffix through ``torch.compile`` (:mod:`interp.engine.compiled`:
            BERT-layout encoders; CUDA graphs on a GPU); ``None``: on for CUDA in calls of at least 2^20 pairs, off on a
            CPU, where compiling costs tens of seconds per location that only long runs recover. ``runner.compile_stats``
            says what it did (:class:`~interp.backends.hf.EncoderRunner`).
        prefix_reuse: a decoder's: each base's positions before the intervened token run once for all its sources
            (``None`` or ``True``, the default); ``False`` runs every position of every pair (the reference it equals;
            :class:`~interp.backends.hf.DecoderRunner`).

    Raises:
        ModelError: the model's labels cannot be read as the task's (by name, in any order, extra labels folded:
            :meth:`~interp.api.loading.Classifier.reading`), or the model lacks one of them.
        ConfigError: an unknown ``wordpiece`` rule, ``device`` or ``backend``; at first use, ``compile=True`` with the
            transformer-lens backend, on a decoder or (at an interchange) on a device that cannot compile, or
            ``prefix_reuse=False`` on an encoder (:func:`~interp.backends.get_runner`).
    """

    def __init__(self, model, task, *, tokenizer=None, wordpiece: str = "first", device: str | None = None,
                 batch_size: int | None = None, data_dir: str | None = None, data_file: str | None = None,
                 backend: str = "hf", complete: bool = True, compile: bool | None = None, prefix_reuse: bool | None = None) -> None:  # fmt: skip
        self.task: Task = fit_task(model, load_task(task, data_dir=data_dir, data_file=data_file), tokenizer)
        self.model: Classifier = load_model_for(model, self.task, tokenizer)  # a bare causal LM read as the task says
        self.reading: LabelReading = self.model.reading(self.task, complete=complete)
        self.wordpiece = check_wordpiece_rule(wordpiece)
        self.batch_size = batch_size
        self.backend_name = check_backend_name(backend)
        self.compile = check_bool(compile, "compile", optional=True)
        self.prefix_reuse = check_bool(prefix_reuse, "prefix_reuse", optional=True)
        if device is not None:
            self.model.to(pick_device(device))
        self._binding: Binding | None = None  # the runner, made on first use (a bridge copies the model)
        self._state: tuple | None = None  # the weights the binding was made for
        self._set: ExampleSet | None = None  # the last example set bound (the module docstring of example_set: its lifetime)

    @classmethod
    def from_specs(cls, model, data: DataSpec, run: RunSpec = RunSpec(), *, variables: Sequence[str] = (),
                   splits: Sequence[str] = (), complete: bool = True) -> "IntervenableModel":  # fmt: skip
        """The edge of a job: the task ``data`` names resolved once (``variables`` and ``splits`` checked against it),
        the model loaded with its own head and placed on ``run``'s device (under ``torchrun``, this process's GPU),
        bound with ``run``'s WordPiece rule, batch size, backend and compile switch.

        ``model``: a checkpoint spec or a :class:`~interp.api.loading.Classifier`. Draw the examples with
        ``sample.draw(lab.task)`` (:class:`~interp.api.specs.SampleSpec`). ``complete``: as the constructor's.

        Raises:
            ConfigError, DataError: as :meth:`~interp.api.specs.DataSpec.load`; a device that is not there.
            ModelError: a checkpoint without a classification head, or labels that cannot be read as the task's.
        """
        task = fit_task(model, data.load(variables=variables, splits=splits))
        lab = cls(classifier_for(model, task, complete=complete), task, wordpiece=run.wordpiece, batch_size=run.batch_size,
                  backend=run.backend, complete=complete, compile=run.compile, prefix_reuse=run.prefix_reuse)  # fmt: skip
        lab.model.to(pick_device(rank_device(run.device)))
        return lab

    def __repr__(self) -> str:
        return f"IntervenableModel(model={self.model.name!r}, task={self.task.name!r}, wordpiece={self.wordpiece!r})"

    # -- binding ---------------------------------------------------------------------------------------------------

    @property
    def runner(self):
        """The :class:`~interp.backends.base.Runner` every call runs the model through, made on first use and again
        after the weights change (a bridge wraps a copy of them)."""
        return self._bound().runner

    def _bound(self) -> Binding:
        state = self.model.weights_state
        if self._state != state:  # the weights changed: nothing computed before holds, a bridge's copy included
            self._set = self._binding = None
        if self._binding is None:
            runner = get_runner(self.backend_name, self.model.module, self.model.tokenizer, compile=self.compile, prefix_reuse=self.prefix_reuse)
            self._binding, self._state = Binding(self.task, self.model, self.reading, self.wordpiece, runner), state
        return self._binding

    def bind(self, examples: Sequence) -> ExampleSet:
        """The task's ``examples`` bound to this model: an :class:`~interp.api.example_set.ExampleSet` that every call
        taking examples accepts and that keeps what they reuse (the module docstring of :mod:`interp.api.example_set`
        states for how long). The same examples again give the same set; a list all of whose examples the last set
        holds gives its :meth:`~interp.api.example_set.ExampleSet.subset`.

        Raises:
            ConfigError: naming ``examples=``: not a non-empty list of the task's examples; an example whose roles
                cannot be aligned.
        """
        binding = self._bound()
        held = self._set
        if isinstance(examples, ExampleSet) and examples.binding is binding and examples.state == self._state:
            return examples
        examples = self.task.check_examples(examples)
        if held is not None and held.binding is binding and held.has(examples):
            return held if held.ids == tuple(e.id for e in examples) else held.subset(examples)
        encoded = encode_examples(examples, self.model.tokenizer, self.wordpiece, self.task.labels, self.model.template)
        self._set = ExampleSet(examples, encoded, binding, self._state)
        return self._set

    def encode(self, examples: Sequence) -> list:
        """The examples tokenized with every role's token positions (:func:`interp.hooks.encoding.encode_examples`)."""
        return self.bind(examples).encoded

    def locations(self, locations: str, variables: Sequence[str] = ()) -> list[Location]:
        """Every location ``locations`` names: comma-separated, ``all``, ``aligned``; a bare site stands for ``variables``' aligned roles.
        On a decoder the token the classifier reads is ``last`` (``all`` and the aligned roles name it so); ``cls`` reaches it too.

        Raises:
            ConfigError: malformed, out of range for the model, or a role the task lacks.
        """
        return parse_model_locations(locations, self.model.n_layers, self.task.roles, self.task.default_roles(variables), self.model.n_heads,
                                     decoder=self.model.decoder)  # fmt: skip

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
        return self.bind(examples).logits()

    def vectors(self, examples: Sequence, location: str | Location) -> Float[Tensor, "n tokens width"]:
        """Each example's vectors at ``location``: float32 ``[n, tokens, width]`` on CPU.

        ``tokens`` is the number of tokens the location covers (one per role; every piece under ``wordpiece="all"``),
        ``width`` is d_model, or d_head at one head's ``attn.hook_z``; the vectors of a batch-1 pass. The older order
        ``vectors(location, examples)`` still works, with a :class:`DeprecationWarning`. The engine's runners run only the
        blocks up to the location (a probe needs no logits; the TransformerLens and naive references run the whole
        model); :meth:`source_vectors` runs the whole model, whose logits the nulls read.
        """
        examples, location = _examples_first(examples, location, "vectors")
        loc = self.location(location)
        flat = self.bind(examples).vectors(loc, logits=False).cpu()
        return flat.view(flat.shape[0], -1, loc.token_width(self.model.module.config))

    def source_vectors(self, examples: Sequence, location: str | Location) -> Float[Tensor, "n flat"]:
        """Each example's vector at ``location``, flattened: float32 ``[n, tokens × width]`` on the model's device (the
        example set's, read once). The older order ``source_vectors(location, examples)`` warns."""
        examples, location = _examples_first(examples, location, "source_vectors")
        return self.bind(examples).vectors(self.location(location))

    def width(self, examples: Sequence, location: str | Location) -> int:
        """How many numbers ``location``'s vector holds on ``examples`` (tokens × d_model, or × d_head at one head's
        ``attn.hook_z``): the size an intervention there acts on, and the largest ``k`` of a subspace.

        Raises:
            ConfigError: naming the location and the first example that lacks one of its roles, or whose token count
                differs from the others' (``wordpiece="all"``).
        """
        loc = self.location(location)
        tokens = location_tokens(self.encode(examples), loc.roles, f"location {loc}")
        return len(tokens[0]) * loc.token_width(self.model.module.config)

    def run_with_cache(self, examples: Sequence, locations: str | Sequence[str | Location]) -> dict[Location, Float[Tensor, "n flat"]]:
        """One forward pass of ``examples`` as one padded batch, reading every location at once: each location's float32
        ``[n, tokens × width]`` on CPU (TransformerLens' ``run_with_cache``, at this task's token roles). The same
        vectors as :meth:`vectors`, which runs the model once per location; the model is not changed.

        ``examples``: the task's, one's own (:func:`interp.examples`), or plain strings and ``(premise, hypothesis)``
        pairs (read at ``cls``, the token the classifier reads); ``locations``: a comma-separated string or a list.
        """
        return self.runner.read(self.encode(examples), self.locations(locations) if isinstance(locations, str) else [self.location(loc) for loc in locations])

    def gradients(self, examples: Sequence, locations: Sequence[str | Location]) -> dict[Location, SiteGradients]:
        """Each location's activations and the gradient of every label's logit with respect to them, float32
        ``[n, width]`` and ``[n, n_model_labels, width]`` on CPU (:meth:`~interp.backends.base.Runner.gradients`: what
        attribution patching linearises with; the weights get no gradient)."""
        return self.runner.gradients(self.encode(examples), [self.location(loc) for loc in locations])

    def precision(self, name: str):
        """A context (``with lab.precision("bf16"): ...``) in which the model runs in fp32, with TF32 GPU matmuls, or in
        bfloat16; the weights are restored exactly when it ends (what was computed inside is dropped with them).

        Raises:
            ConfigError: ``name`` is not one of fp32, tf32, bf16, or the runner runs fp32 only.
        """
        return self.runner.precision(name)

    def interchange_logits(self, bases: Sequence, sources: Sequence | Tensor, location: Location, *,
                           on_rows: Callable[[int], None] | None = None) -> Float[Tensor, "bases sources labels"]:  # fmt: skip
        """The runner alone: logits ``[len(bases), n_sources, n_model_labels]`` (float32, CPU) of every base with the
        vector at ``location`` replaced by each source's, no causal model read.

        ``sources`` are examples, or their vectors already read (``[n_sources, tokens × width]``, from
        :meth:`source_vectors` or an activation cache). ``on_rows(k)`` is told after each k pairs.
        """
        vectors = sources if isinstance(sources, Tensor) else self.source_vectors(sources, location)
        return self.runner.interchange_logits(self.encode(bases), vectors, location, batch_size=self.batch_size, on_rows=on_rows)

    def split_accuracies(self, examples: Sequence, own=None, *, warn_at_chance: bool = True) -> list[dict]:
        """The model's accuracy on each split among ``examples``, with its Wilson interval, beside the majority label's share
        (:func:`interp.api.evaluation.split_accuracies`); with ``warn_at_chance``, an
        :class:`~interp.core.errors.InterpWarning` for every split where the model is not above chance.

        ``own``: the model's own task label ids on ``examples`` when already computed (``None``: the example set's).
        """
        bound = self.bind(examples)
        return split_accuracies(bound.binding, bound.examples, bound.own_labels() if own is None else own, warn_at_chance=warn_at_chance)

    def evaluate(self, examples: Sequence):
        """The model's accuracy on each split among ``examples``, its predictions read as the task's labels
        (:attr:`reading`: by name, in any order, extra labels folded), beside chance: a ``pandas.DataFrame``
        (:func:`interp.api.evaluation.evaluation_frame`: its columns); warns at chance as :meth:`split_accuracies` does.

        Raises:
            ConfigError: naming ``examples=``: not a non-empty list of the task's examples.
        """
        bound = self.bind(examples)
        return evaluation_frame(bound.binding, bound.examples, bound.own_labels())

    # -- interventions ---------------------------------------------------------------------------------------

    def interchange(self, bases: Sequence, sources: Sequence, location: str | Location | Sequence[str | Location], *,
                    variables: Sequence[str] | None = None, intervention: Intervention | None = None,
                    naive: bool = False) -> InterchangeResult | InterchangeSet:  # fmt: skip
        """Run the model on every base with the vectors at ``location`` replaced, for every source.

        The interchange intervention (Geiger, Richardson & Potts 2020, §6.2) by default; with ``intervention`` any
        module of :mod:`interp.engine.interventions` writes ``intervention(base vector, source vector)`` instead (a
        trained DAS subspace: Geiger et al. 2024, §3). :func:`interp.api.interchange.interchange` runs it.

        Args:
            bases, sources: the task's examples (the same list twice for the square set the graph and files need).
            location: where (one location; a bare site stands for ``variables``' roles); a list or tuple of locations
                is a sweep: each location interchanged on its own, one after another, never several together (pyvene
                patches a list of representations together), returned as an
                :class:`~interp.api.results.InterchangeSet` (one table, one file).
            variables: whose counterfactuals to compute (``None``: every variable of the task).
            naive: use the runner's one-pass-per-pair reference instead of its fast path.

        Returns:
            An :class:`InterchangeResult` with ``logits`` ``[n_bases, n_sources, n_model_labels]``; for a list of
            locations, an :class:`~interp.api.results.InterchangeSet` of them.

        Raises:
            ConfigError: a variable the task lacks, a location an example lacks, an intervention
                of another width, a trained intervention at a component site.
        """
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
        every = self.bind(list({e.id: e for e in [*bases, *sources]}.values()))
        options = dict(variables=variables, intervention=intervention, naive=naive, batch_size=self.batch_size)
        if isinstance(location, (list, tuple)):
            if not location:
                raise ConfigError("`location=` names no location; give one, or a list of several")
            return interchange_set(every, bases, sources, [self.location(loc, variables) for loc in location], **options)
        return interchange(every, bases, sources, self.location(location, variables), **options)

    #: ``lab.ablate(examples, location, kind="zero" | "mean", reference=None)`` and ``lab.steer(examples, location, vector,
    #: scale=1.0)``: logits float32 ``[n, n_model_labels]`` (:mod:`interp.api.ablation`).
    #: ``lab.interchange_jointly(bases, {variable: sources}, alignment={variable: location}, per_base=16, seed=0)``: each
    #: variable written from its own source in one run (:class:`~interp.api.joint.JointResult`, :mod:`interp.api.joint`);
    #: ``lab.train_das_jointly(examples, alignment, k=16)``: a DAS subspace per variable, trained together on such runs
    #: (:class:`~interp.api.joint_das.JointDasResult`, :mod:`interp.api.joint_das`).
    #: ``lab.path_patch(bases, sources, sender, receiver=None)``: logits ``[bases, sources, labels]`` with the sender's
    #: change reaching the readout (or a later head's query, key or value input) through the residual stream alone;
    #: ``lab.path_patch_sweep(bases, sources, "heads@cls")``: direct beside total effect per sender (:mod:`interp.api.paths`).
    ablate, steer, interchange_jointly, train_das_jointly, path_patch, path_patch_sweep = (
        ablation.ablate, ablation.steer, joint.interchange_jointly, joint_das.train_das_jointly, paths.path_patch, paths.path_patch_sweep)  # fmt: skip

    def screen(self, bases: Sequence, sources: Sequence, locations: str = "all", *, variable: str, confirm: int = 0, seed: int = 0,
               qk_fix: bool | None = None, graddrop: bool | None = None, progress: bool = False) -> ScreenResult:  # fmt: skip
        """Estimate ``variable``'s IIA at every location, for every base with every source, by attribution patching
        (one forward and one backward pass per example and label; Nanda 2023, Syed, Rager & Conmy 2023), rank, and with
        ``confirm`` K run the exact interchange at the top K and at K drawn at random from the rest, with their
        agreement (:mod:`interp.api.screen`).

        ``bases``, ``sources``: the task's examples (the same list twice for the square set). ``locations``: ``all``
        (every residual, component and head location at every role), ``heads``, ``components`` or a comma-separated
        list. ``qk_fix`` and ``graddrop``: AtP*'s refinements (Kramár et al. 2024, §3), the hf backend's (``None``: on
        there, off on transformer-lens). ``progress``: bars for the gradient pass (examples) and the estimates (locations).

        Raises:
            ConfigError: naming ``bases=``, ``sources=``, ``variable=``, ``locations=``, ``confirm=``, ``qk_fix=`` or
                ``graddrop=``.
        """
        with renamed(examples="bases"):
            bases = self.task.check_examples(bases)
        with renamed(examples="sources"):
            sources = self.task.check_examples(sources)
        variable = self.task.check_variable(variable)
        found = screen_locations(self.locations, self.model.input_format.roles(self.task.roles), locations)
        every = self.bind(list({e.id: e for e in [*bases, *sources]}.values()))
        return screen(every, bases, sources, found, variable, confirm=confirm, seed=seed, qk_fix=qk_fix, graddrop=graddrop, progress=progress)

    # -- distributed alignment search ------------------------------------------------------------------------

    def train_das(self, examples: Sequence, location: str | Location, variable: str, *, k: int | None = None, kind: str = "rotated",
                  n_pairs: int = 1000, epochs: int = 2, lr: float = 1e-3, batch_size: int = 64, seed: int = 0,
                  test_share: float = 0.2, test_pairs: int = 200, on_step: Callable[[float], None] | None = None,
                  on_blocks: Callable[[int, int], None] | None = None, warn_unlearned: bool = True, featurizer=None) -> DasResult:  # fmt: skip
        """Train a subspace intervention so that the intervened model follows the causal model's counterfactuals on ``variable``;
        score it, and the same intervention untrained, on held-out pairs (:func:`interp.api.das.train`).

        Distributed alignment search (Geiger, Wu, Potts, Icard & Goodman 2024, §3; ``kind="boundless"``: Wu et al.
        2023, §3): ``examples`` are split (seeded, ``test_share`` held out: :func:`interp.causal.pairs.split_examples`);
        ``n_pairs`` balanced counterfactual pairs among the training part (half of them changing the output), the
        model frozen, the intervention's parameters trained with Adam on cross-entropy; ``test_pairs`` pairs among the
        held-out part score it after every epoch and at the end. The untrained baseline is the same kind and ``k``
        with the initial parameters, on the same held-out pairs; an :class:`~interp.core.errors.InterpWarning` names
        both figures when the trained IIA does not clear it. Vanilla interchange and the localist baseline (the best
        block of ``k`` coordinates) are scored on the same pairs.

        Args:
            examples, location, variable: in the order of :meth:`vectors` and :meth:`interchange` (examples first); the
                older order ``train_das(variable, location, examples)`` still works, with a :class:`DeprecationWarning`.
            k: dimensions of the subspace of a ``sized`` kind (``rotated``, ``lowrank``); not taken by ``boundless``.
            kind: any trainable kind of :data:`interp.engine.interventions.REGISTRY`: ``rotated`` (DAS), ``lowrank``
                (the same function, width × k parameters), ``boundless`` (its size learned), ``dbm`` (a learned mask
                over the neurons, or over ``featurizer``), or one of your own; or ``dbm-pca``, ``dbm-sae``: a mask over
                a basis fitted on the training examples (:mod:`interp.api.featurized`; MIB's featurizers).
            featurizer: with ``kind="dbm"``, the :class:`~interp.engine.featurizers.Featurizer` whose features the
                mask chooses among (an SAE from :func:`interp.files.saes.load_sae`, a PCA basis, a rotation).
            on_step: told each optimizer step's loss (nats per pair), e.g. for a progress bar.
            on_blocks: told ``(blocks scored, blocks in all)`` while the localist baseline's block is chosen: every
                block of ``k`` coordinates on up to 256 training pairs, ``width // k × 256`` suffix runs.
            warn_unlearned: ``False`` leaves the warnings (a split at chance, no gain over the untrained baseline) to the caller.

        Returns:
            A :class:`~interp.api.das_result.DasResult`: the trained module (``.intervention``, eval mode; pass the
            result or the module to :meth:`interchange` as ``intervention=``), held-out IIA, the untrained baseline
            and their difference with 95% intervals over the held-out examples (or their groups), vanilla interchange and the localist
            baseline, and the per-epoch history.

        Raises:
            ConfigError: naming ``variable=``, ``location=`` (component sites are refused), ``k=``, ``kind=``,
                ``epochs=``, ``lr=``, ``batch_size=``, ``test_share=`` or ``test_pairs=``.
        """
        if isinstance(examples, str):  # the older order: train_das(variable, location, examples)
            _old_order("train_das(variable, location, examples)", "train_das(examples, location, variable)", stacklevel=3)
            examples, variable = variable, examples
        self.task.check_variable(variable)
        loc = self.location(location, (variable,))
        return das.train(self.bind(examples), loc, variable, k=k, kind=kind, n_pairs=n_pairs, epochs=epochs, lr=lr, batch_size=batch_size,
                         seed=seed, test_share=test_share, test_pairs=test_pairs, on_step=on_step, on_blocks=on_blocks,
                         warn_unlearned=warn_unlearned, featurizer=featurizer)  # fmt: skip

    def score_das(self, examples: Sequence, intervention: Intervention | DasResult, location: str | Location, variable: str, *,
                  seed: int = 0, test_share: float = 0.2, test_pairs: int = 200) -> dict[str, dict]:  # fmt: skip
        """Score a trained intervention, and vanilla interchange, on the held-out pairs :meth:`train_das` draws with the
        same ``seed``, ``test_share`` and ``test_pairs`` (:func:`interp.api.das.score`: its return value and errors).
        With a run's own settings this reproduces its held-out IIA, e.g. of an intervention read back from a file."""
        self.task.check_variable(variable)
        module = intervention.intervention if isinstance(intervention, DasResult) else intervention
        return das.score(self.bind(examples), module, self.location(location, (variable,)), variable, seed=seed,
                         test_share=test_share, test_pairs=test_pairs)  # fmt: skip


def _old_order(old: str, new: str, stacklevel: int = 4) -> None:
    """Warn that a call used the argument order of earlier releases (it still works, for one more release)."""
    warnings.warn(f"IntervenableModel.{old} is the older argument order; write {new} (examples first, then the location)",
                  DeprecationWarning, stacklevel=stacklevel)  # fmt: skip


def _examples_first(examples, location, call: str) -> tuple:
    """``(examples, location)`` of a call that may use the older order ``call(location, examples)`` (which warns)."""
    if isinstance(examples, (str, Location)):
        _old_order(f"{call}(location, examples)", f"{call}(examples, location)")
        return location, examples
    return examples, location
