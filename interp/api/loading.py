"""Strings into objects, once: a model (a name, a path, or a model object with its tokenizer) and a task (a name, a path, or a ``Task``).

Usage::

    import interp
    model = interp.load_model("runs/demo/model")          # a checkpoint directory, "minilm", or a hub name in the local cache
    model = interp.load_model(hf_model, tokenizer)         # a model built or edited in memory
    task = interp.load_task("monli")                       # "mqnli" with data_file=, "fragment:NAME", "my_tasks.py:make_task", or a Task

A :class:`Classifier` is the model, its fast tokenizer and where it came
from; everything above takes it (or, as a convenience, the string it is
loaded from). Nothing here reads a file the caller did not name.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from interp.core.checks import check_int
from interp.core.errors import ConfigError, ModelError, OutputError, named, renamed
from interp.hooks import n_layers
from interp.hooks.architecture import architecture
from interp.hooks.inputs import InputFormat, input_format
from interp.models.labels import MAPPED, LabelReading, check_label_map, label_config, mapped_reading, parse_label_map
from interp.models.decoders import DecoderClassifier, template_of
from interp.models.checkpoint import check_finite
from interp.models.loading import as_decoder_classifier, checkpoint_labels, has_classifier_head, is_bare_causal_lm, load_classifier, model_sha256, resolve_model
from interp.tasks import Task, resolve_task, resolve_tasks, task_for_file

# What a job reads of a checkpoint spec before (or instead of) loading it: its config or its weights file alone
# (:mod:`interp.models.loading`), named here so that jobs stand on ``api``.
from interp.models.loading import INITS, model_identity, model_is_decoder, model_layers, model_width  # noqa: E402

__all__ = ["INITS", "Classifier", "ModelIdentity", "checkpoint_labels", "classifier_for", "load_model", "load_task", "model_identity", "model_is_decoder", "model_layers",
           "model_sha256", "model_width", "resolve_task", "resolve_tasks", "task_for_file"]


#: The name of a :class:`Classifier` built in memory, loaded from no checkpoint.
IN_MEMORY = "<in memory>"


@dataclass(eq=False)
class Classifier:
    """A sequence classifier in eval mode, its fast tokenizer, and its provenance.

    Attributes:
        module: the Hugging Face ``...ForSequenceClassification`` model (never mutated by ``interp``'s hooks).
        tokenizer: its fast tokenizer (character offsets are needed to find a role's tokens).
        name: the spec it was loaded from (``minilm``, a path, a hub name), or ``"<in memory>"``.
        history: after :func:`interp.api.training.fine_tune`, one record per epoch (``loss``, nats).
        settings: after :func:`interp.api.training.fine_tune`, its settings (epochs, lr, batch size, seed, ...) and
            the model it started from; :meth:`save` records them.
    """

    module: Any
    tokenizer: Any
    name: str = IN_MEMORY
    history: list = field(default_factory=list)
    settings: dict = field(default_factory=dict)
    _sha256: str | None = field(default=None, repr=False)
    _hashed: tuple | None = field(default=None, repr=False)

    def save(self, path: str | Path, *, overwrite: bool = False) -> Path:
        """Write the classifier as a checkpoint folder that ``interp`` and transformers load: ``model.safetensors``,
        ``config.json`` (with the labels), the tokenizer's files and ``training.json`` (its fine-tuning settings and
        per-epoch history, where :func:`~interp.api.training.fine_tune` made it, and the environment), written last;
        the folder appears only complete.

        Returns:
            ``path``, to pass to :func:`load_model` or any command's ``--model``.

        Raises:
            OutputError: naming ``path``: it exists (without ``overwrite``), is not a checkpoint interp wrote (with
                ``overwrite``: only such a folder is replaced), or cannot be written.
        """
        from interp.core.environment import environment
        from interp.core.outputs import partial_path, require_writable
        from interp.models.training import TRAINING_FILE, finished_run, save_checkpoint

        out = Path(path)
        if out.exists() or out.is_symlink():
            if not overwrite:
                raise OutputError(f"{named('path', out)} already exists; choose another path or pass `overwrite=True`")
            if not out.is_dir() or out.is_symlink() or finished_run(out) is None:
                raise OutputError(f"{named('path', out)} is not a checkpoint interp wrote (no {TRAINING_FILE} beside model.safetensors); "
                                  "`overwrite=True` replaces only such a folder")
        with renamed(out="path"):
            require_writable(out)
        record = {"saved_by": "Classifier.save", "source": self.name, "config": dict(self.settings), "epochs": list(self.history),
                  "environment": environment()}  # fmt: skip
        with renamed(out="path"):
            return save_checkpoint(self.module, self.tokenizer, record, out, partial_path(out))

    @property
    def labels(self) -> tuple[str, ...]:
        """The classifier's label names in id order, as its ``id2label`` spells them."""
        return checkpoint_labels(self.module.config)

    @property
    def template(self):
        """How a decoder joins a pair (:class:`~interp.hooks.templates.Template`); ``None`` for an encoder, which reads two segments."""
        return template_of(self.module)

    @property
    def input_format(self) -> InputFormat:
        """How the model reads a pair (:mod:`interp.hooks.inputs`): its :attr:`template` (a decoder, read at its last
        token) or :data:`~interp.hooks.inputs.SEGMENTS` (an encoder, two segments read at [CLS])."""
        return input_format(self.template)

    @property
    def decoder(self) -> bool:
        """Whether the model is a decoder: it reads a pair joined by :attr:`template` at its last token (``last``)."""
        return self.input_format.decoder

    @property
    def reading_record(self) -> dict:
        """What every file of a decoder records of how it read each pair: ``template`` (its text) and, for a causal LM
        read through label words, ``label_words``; ``{}`` for an encoder (two segments, its head at [CLS])."""
        if not self.decoder:
            return {}
        words = getattr(self.module, "label_words", None)
        return {"template": self.template.text, **({"label_words": dict(words)} if words else {})}

    @property
    def n_layers(self) -> int:
        """Transformer blocks."""
        return n_layers(self.module)

    @property
    def n_heads(self) -> int:
        """Attention heads per block."""
        return int(self.module.config.num_attention_heads)

    @property
    def d_model(self) -> int:
        """Width of the residual stream."""
        return int(self.module.config.hidden_size)

    @property
    def device(self):
        """Where the weights are (a ``torch.device``)."""
        return next(self.module.parameters()).device

    @property
    def sha256(self) -> str:
        """What identifies the weights in files: the checkpoint's ``model.safetensors`` SHA-256, else a hash of the tensors
        in memory (made again when they have changed since, :attr:`weights_state`)."""
        if self._sha256 is None or (self.name == IN_MEMORY and self._hashed != self.weights_state):
            self._hashed = self.weights_state
            self._sha256 = model_sha256(self.name) if self.name != IN_MEMORY else _state_sha256(self.module)
        return self._sha256

    @property
    def weights_state(self) -> tuple:
        """What changes when the weights change in memory: each parameter's storage, version counter, dtype and device.
        An example set bound to the model is dropped when it differs, and a result refuses to name weights that
        changed after it was computed (:class:`ModelIdentity`)."""
        return tuple((p.data_ptr(), p._version, p.dtype, str(p.device)) for p in self.module.parameters())

    def identity(self) -> "ModelIdentity":
        """This classifier's name, and its weights as they are now, to be hashed when a file is written."""
        return ModelIdentity(self.name, self, self.weights_state)

    def reading(self, task: Task, *, complete: bool = False) -> LabelReading:
        """How this classifier's labels read as ``task``'s (:meth:`~interp.tasks.base.Task.read_labels`): by name, in any
        order, extra labels folded (a three-label model on MoNLI reads contradiction as neutral).

        Args:
            complete: require a model label for every task label (interchange interventions and DAS compare the
                model's label with the causal model's on every pair; scoring accuracy does not need it).

        Raises:
            ModelError: naming ``model=``: labels that cannot be read as the task's.
        """
        reading = mapped_reading(lambda: task.read_labels(self.labels, model=self.name), self.module, self.name)
        if complete and not reading.complete:
            lacking = [x for j, x in enumerate(task.labels) if reading.scored[j] != j]
            raise ModelError(f"`model=`: {self.name} has labels {self.labels} and none for task {task.name!r}'s "
                             f"{', '.join(lacking)}; interventions need a label for each of {', '.join(task.labels)}")  # fmt: skip
        return reading

    def to(self, device) -> "Classifier":
        """Move the model to ``device`` (``"cpu"``, ``"cuda"``, a ``torch.device``); returns self."""
        self.module.to(device)
        return self


@dataclass(frozen=True)
class ModelIdentity:
    """Which model a result came from: its name, and the SHA-256 of its weights, hashed only when a file is written.

    Attributes:
        name: the spec the model was loaded from, or ``"<in memory>"``.
        stored: the SHA-256 a file recorded (a result read back from it); ``None`` for a result computed in memory.
    """

    name: str
    classifier: Classifier | None = field(default=None, repr=False, compare=False)
    state: tuple | None = field(default=None, repr=False, compare=False)
    stored: str | None = None

    @property
    def sha256(self) -> str:
        """The weights' SHA-256 (:attr:`Classifier.sha256`), hashed now the first time.

        Raises:
            ConfigError: the weights changed in memory after the result was computed: the file could not name them.
        """
        if self.stored is not None:
            return self.stored
        if self.classifier is None or self.classifier.weights_state != self.state:
            raise ConfigError(f"save: the weights of model {self.name!r} changed after this result was computed, so a file could not "
                              "name the weights it came from; compute it again, or save it before changing the weights")  # fmt: skip
        return self.classifier.sha256


def _state_sha256(module) -> str:
    import torch

    digest = hashlib.sha256()
    for key, value in sorted(module.state_dict().items()):
        digest.update(key.encode())
        digest.update(value.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def load_model(model, tokenizer=None, *, labels: tuple[str, ...] | None = None, seed: int | None = None,
               label_map=None, template: str | None = None, label_words=None) -> Classifier:  # fmt: skip
    """A :class:`Classifier` from a spec or from objects already in memory.

    Args:
        model: ``"minilm"`` (the embedded model), a checkpoint directory, a hub
            name in the local cache, a :class:`Classifier` (returned as is), or a
            ``...ForSequenceClassification`` module (then ``tokenizer`` is required).
        tokenizer: the fast tokenizer of an in-memory ``model``.
        labels: for an encoder checkpoint without a classification head, the labels of a new,
            randomly initialised head (seeded by ``seed``); a checkpoint with a head keeps its own.
        label_map: what the head's label ids mean where its ``id2label`` does not say (``LABEL_0``...):
            ``"0=contradiction,1=neutral,2=entailment"``, a dict or the names in id order. A checkpoint's
            loaded config is relabelled; an in-memory module is copied first (the caller's is left as it is).
        template, label_words: a decoder's (:func:`interp.models.loading.load_classifier`): the text joining the pair,
            and for a causal LM read as a classifier one one-token word per label (``{"entailment": " yes", ...}``).

    Raises:
        ConfigError: naming ``labels=`` (fewer than two, or not distinct names) or ``seed=``.
        ModelError: as :func:`interp.models.loading.load_classifier` (safetensors only, a family of
            :mod:`interp.hooks.architecture`, a fast tokenizer); an in-memory module without a tokenizer
            or without a head, or of another family.
    """
    if labels is not None:
        if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) < 2:
            raise ConfigError(f"{named('labels', repr(labels))}: give the new head's label names, at least two (e.g. task.labels)")
        odd = [x for x in labels if not isinstance(x, str) or not x.strip() or not x.isprintable()]
        if odd or len(set(labels)) != len(labels):
            raise ConfigError(f"{named('labels', repr(tuple(labels)))}: label names must be distinct printable strings")
    check_int(seed, "seed", least=0, optional=True)
    if isinstance(model, Classifier):
        if label_map is None:
            return model
        relabelled = load_model(model.module, model.tokenizer, label_map=label_map)
        relabelled.name = model.name  # the same weights: a checkpoint's SHA-256 still names them
        return relabelled
    if isinstance(model, (str, Path)):
        module, tok = load_classifier(str(model), labels=labels, seed=seed, label_map=label_map, template=template, label_words=label_words)
        return Classifier(module, tok, str(model))
    if tokenizer is None:
        raise ModelError(f"`model=`: an in-memory {type(model).__name__} needs its tokenizer (load_model(model, tokenizer))")
    try:
        arch = architecture(model)
    except ConfigError as exc:
        raise ModelError(f"`model=`: {exc}") from None
    if arch.decoder and not isinstance(model, DecoderClassifier):  # a decoder read at its last token
        model, tokenizer = as_decoder_classifier(model, tokenizer, IN_MEMORY, template, label_words)
    config = getattr(model, "config", None)
    if config is None or not (has_classifier_head(config) or hasattr(model, "classifier") or isinstance(model, DecoderClassifier)):
        raise ModelError(f"`model=`: a {type(model).__name__} is not a sequence classifier; give a ...ForSequenceClassification model")
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError("`tokenizer=`: token roles need a fast (Rust) tokenizer with character offsets")
    check_finite(model, IN_MEMORY)
    if label_map is not None:
        names = parse_label_map(label_map, int(config.num_labels))
        check_label_map(checkpoint_labels(config), names, "<in memory>")
        model = copy.deepcopy(model)
        for key, value in label_config(names).items():
            setattr(model.config, key, value)
        setattr(model, MAPPED, ",".join(f"{i}={x}" for i, x in enumerate(names)))
    model.eval()
    return Classifier(model, tokenizer)


def classifier_for(model, task: Task, *, label_map=None, complete: bool = True, template: str | None = None, label_words=None) -> Classifier:
    """A :class:`Classifier` for ``task``'s interventions: a checkpoint spec loaded with its own head (none is made up),
    or a ``Classifier`` as it is; either way with labels that read as the task's (:meth:`Classifier.reading`), with
    one for each of the task's unless ``complete`` is false (caching activations reads no prediction).

    Raises:
        ModelError: a checkpoint without a classification head; labels that cannot be read as the task's.
        ConfigError: naming ``label_map=``, as :func:`load_model`.
    """
    if isinstance(model, (str, Path)):
        if template is None and label_words is None and task.reading and is_bare_causal_lm(str(model)):
            task = fit_task(model, task)
            template, label_words = task.reading.get("template"), task.reading.get("label_words")  # the task says how
        model = Classifier(*load_classifier(str(model), require_head=True, label_map=label_map, template=template, label_words=label_words), str(model))
    elif label_map is not None:
        model = load_model(model, label_map=label_map)
    model = load_model(model)
    model.reading(task, complete=complete)
    return model


def fit_task(model, task: Task, tokenizer=None) -> Task:
    """``task`` as ``model`` reads it: where ``model`` names a pretrained causal LM (neither a head nor label words of its
    own) and the task changes with a tokenizer (:attr:`Task.for_tokenizer <interp.tasks.base.Task.for_tokenizer>`:
    IOI's one-token names, city attributes' first tokens), the task for that model's tokenizer (``tokenizer`` if
    given); else ``task`` itself. What a tokenizer drops is the task's ``dropped``.

    Raises:
        ModelError: as :func:`~interp.models.loading.resolve_model`.
    """
    if task.for_tokenizer is None or not isinstance(model, (str, Path)) or not is_bare_causal_lm(str(model)):
        return task
    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(resolve_model(str(model)).location, use_fast=True, trust_remote_code=False)
    return task.for_tokenizer(tokenizer)


def reinitialised(model: Classifier, seed: int = 0) -> Classifier:
    """``model``'s architecture and reading (its template, label words, head labels) with every weight drawn afresh
    (seeded by ``seed``), as transformers initialises the family: the control of "The Non-Linear Representation
    Dilemma" (Sutter et al. 2025, §5), on which learned featurizers can reach high IIA without any trained structure.

    Raises:
        ConfigError: naming ``model=``: a classifier made in memory, whose checkpoint cannot be loaded again by name.
    """
    try:
        module, tokenizer = load_classifier(model.name, init="random", seed=seed, **model.reading_record)
    except (ModelError, ConfigError) as exc:
        raise ConfigError(f"{named('model', repr(model.name))}: cannot load it again with re-initialised weights ({exc}); give "
                          "a checkpoint folder or a packaged model by name") from None  # fmt: skip
    return Classifier(module, tokenizer, f"{model.name} (re-initialised, seed {seed})")


def load_model_for(model, task: Task, tokenizer=None) -> Classifier:
    """:func:`load_model` for ``task``: a pretrained causal LM named by a spec (one with neither a classification head
    nor label words of its own) is read as the task says (:attr:`Task.reading <interp.tasks.base.Task.reading>`: IOI
    through its names); anything else as :func:`load_model` loads it.

    Raises:
        As :func:`load_model`.
    """
    if isinstance(model, (str, Path)) and tokenizer is None and task.reading and is_bare_causal_lm(str(model)):
        return load_model(model, template=task.reading.get("template"), label_words=task.reading.get("label_words"))
    return load_model(model, tokenizer)


def load_task(task, *, data_dir: str | None = None, data_file: str | None = None, verify_checksums: bool = True) -> Task:
    """A :class:`~interp.tasks.base.Task` from a name, a ``file.py:function`` / ``module:function``, or a ``Task`` (returned as is).

    Args:
        task: ``monli``, ``mqnli``, ``fragment:NAME``, ``monotonicity-fragment``, ``logic-fragment``, ``monotonicity``, a user's function, or a ``Task``.
        data_dir: where MoNLI's (or the fragments') released files lie (else ``$INTERP_MONLI_DIR`` / ``$INTERP_FRAGMENTS_DIR``).
        data_file: the generated file a file task reads (``mqnli``, ``monotonicity-fragment``, ``logic-fragment``, ``monotonicity``).
        verify_checksums: check the released files' SHA-256.

    Raises:
        ConfigError: naming ``task=``: an unknown name, a function that fails or returns no ``Task``.
        DataError: the data are missing or spoiled (when the task loads them).
    """
    if isinstance(task, Task):
        return task
    if not isinstance(task, str):
        raise ConfigError(f"`task=`: give a task name, a 'file.py:function', or a Task, not a {type(task).__name__}")
    return resolve_task(task, data_dir=data_dir, verify_checksums=verify_checksums, data_file=data_file)
