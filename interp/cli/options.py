"""The option groups commands share, and the parsing of comma-separated values.

Each group is a decorator: its click options, and what the command receives
instead of them. ``data``, ``sample`` and ``run`` are the library's spec
objects (:mod:`interp.api.specs`), passed on as they are; ``model`` and
``label_map`` the model as named; :func:`settings` gathers any options into
one dict of the job config's own fields (``TrainConfig(**fit, ...)``), so that
no command takes more than a dozen parameters.

Nothing here imports torch: ``interp --help`` and every command's ``--help``
stay fast (the specs are imported when a command runs).
"""

from __future__ import annotations

import functools
from typing import Callable

import click

from interp.core.errors import ConfigError
from interp.models.settings import EMBEDDED, FineTuneSettings

#: The fine-tuning defaults ``train``, ``demo`` and ``inoculate`` show: the library's own.
TRAIN = FineTuneSettings()
#: A fine-tuning's batch: part of its recipe (it changes what is learnt), not of how the model runs.
TRAIN_BLOCKS = click.option("--train-blocks", type=int, default=None,
                            help="Train only the last N blocks, the final norm and the head, the rest frozen [default: every weight].")
LORA_RANK = click.option("--lora-rank", type=int, default=None,
                         help="Train LoRA adapters of this rank on every block's linear layers (and the head), the pretrained weights "
                              "frozen, merged into them at the end (needs peft); 0: none [default: none, or the packaged model's recipe].")
LORA_ALPHA = click.option("--lora-alpha", type=float, default=None, help="LoRA's scale is alpha / rank [default: twice --lora-rank].")
TRAIN_BATCH = click.option("--batch-size", type=int, default=TRAIN.batch_size, show_default=True, help="Examples per training step.")
BASE_MODEL = EMBEDDED

SPLITS_HELP = "comma-separated MoNLI splits: pmonli, nmonli_train, nmonli_test (or pmonli_train / pmonli_heldout, PMoNLI's fixed 80/20 split)"
PAIRS_PER_PASS = "(base, source) pairs per forward pass [default: 256 on CPU, from free memory on a GPU]."


def listed(value: str, option: str) -> tuple[str, ...]:
    """A comma-separated option as a tuple; empty is an error except for --eval-splits."""
    names = tuple(s.strip() for s in value.split(",") if s.strip())
    if not names and option != "--eval-splits":
        raise ConfigError(f"{option} names nothing")
    return names


def numbers(value: str, option: str, kind: type = int) -> tuple:
    """A comma-separated list of ``kind`` (int or float); an empty item (``1,,2``, ``1,``) is refused, not skipped."""
    names = listed(value, option)  # its own message for a list naming nothing
    if any(not item.strip() for item in value.split(",")):
        raise ConfigError(f"{option} {value!r} has an empty item; give comma-separated {'integers' if kind is int else 'numbers'}")
    try:
        return tuple(kind(v) for v in names)
    except ValueError:
        raise ConfigError(f"{option} takes comma-separated {'integers' if kind is int else 'numbers'}, got {value!r}") from None


def ints(value: str, option: str) -> tuple[int, ...]:
    """A comma-separated list of integers."""
    return numbers(value, option, int)


def model_recipe(model: str, *groups: dict) -> None:
    """Fill ``groups`` (a command's settings, by their click names: the fine-tuning's, how the model is read) in place
    with a packaged model's own recipe (:attr:`interp.models.gguf.Packaged.recipe`) where the command line left a
    setting at its default; a route the user chose (``--train-blocks``) keeps the recipe's adapters out, and a head's
    ``--label-map`` its label words; ``--lora-rank 0`` (no adapters) and ``--label-words none`` (a new head) say no to
    each. What was taken is said on stderr."""
    from interp.models.gguf import PACKAGED

    for group in groups:  # the explicit "none" of a setting a recipe may fill: no adapters, a new head
        if group.get("lora_rank") == 0:
            group["lora_rank"] = None
        if isinstance(group.get("label_words"), str) and group["label_words"].strip().lower() == "none":
            group["label_words"] = None
    spec = PACKAGED.get(str(model))
    if spec is None or not spec.recipe:
        return
    context = click.get_current_context()
    found = {name: group for group in groups for name in group}
    given = {name for name in found if context.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)}
    kept_out = {"lora_rank": "train_blocks", "label_words": "label_map"}  # a recipe's part that another choice replaces
    taken = {}
    for name, value in spec.recipe:
        if name in found and name not in given and kept_out.get(name) not in given:
            taken[name] = found[name][name] = value
    if taken:
        flags = " ".join(f"--{name.replace('_', '-')} " + (f"{value:g}" if isinstance(value, float) else repr(value) if isinstance(value, str) else f"{value}")
                         for name, value in taken.items())  # fmt: skip
        click.echo(f"{model}: its fine-tuning recipe {flags} (give a flag to change it)", err=True)


def option_group(options: list, gather: Callable[..., dict]):
    """A decorator adding ``options`` to a command that receives ``gather(**their values)`` instead of them."""

    def decorate(function):
        @functools.wraps(function)
        def command(*args, **kwargs):
            own = {name: kwargs.pop(name) for name in names}
            return function(*args, **kwargs, **gather(**own))

        before = len(getattr(command, "__click_params__", []))
        for option in reversed(options):
            command = option(command)
        names = [param.name for param in command.__click_params__[before:]]
        return command

    return decorate


def settings(name: str, *options):
    """``options`` gathered into one dict, received as ``name``: a job config's own fields, under their click names."""
    return option_group(list(options), lambda **values: {name: values})


def _specs():
    """:mod:`interp.api.specs`, imported when a command runs (``interp --help`` stays fast)."""
    from interp.api import specs

    return specs


DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                        help="MoNLI directory (default: $INTERP_MONLI_DIR); with --task fragment:NAME or fragments, the semantic fragments' (default: $INTERP_FRAGMENTS_DIR).")  # fmt: skip
SKIP_CHECKSUMS = click.option("--skip-checksums", is_flag=True, help="Do not compare file SHA-256 sums with the released MoNLI.")
TASK = click.option("--task", default="monli", show_default=True,
                    help="monli, ioi (indirect-object identification), city-attributes (a city's country and continent), mqnli, monotonicity-fragment, logic-fragment or monotonicity (with --data-file), fragment:NAME (a semantic fragment), or your own: path/to/task.py:make_task or package.module:make_task (a function returning an interp Task).")  # fmt: skip
DATA_FILE = click.option("--data-file", type=click.Path(dir_okay=False), default=None,
                         help="A generated file: what --task mqnli (interp mqnli), monotonicity-fragment or logic-fragment (interp fragments generate), monotonicity (interp monotonicity generate) or monli (interp monli-generate) reads; with the default task, an MQNLI file; with city-attributes, a city table of your own (city,country,continent). Or, for any task, your own examples: one JSON object a line (premise, hypothesis, words, label, values), read as the task's one split, own.")  # fmt: skip


def data(task: bool = True):
    """--task and --data-file (with ``task``), --data-dir, --skip-checksums: the command receives ``data``, a
    :class:`~interp.api.specs.DataSpec` (without ``task``: a dict of the last two, where released data lie)."""
    if not task:
        return option_group([DATA_DIR, SKIP_CHECKSUMS], lambda data_dir, skip_checksums: {"data": {"data_dir": data_dir, "verify_checksums": not skip_checksums}})
    return option_group(
        [TASK, DATA_FILE, DATA_DIR, SKIP_CHECKSUMS],
        lambda task, data_file, data_dir, skip_checksums: {"data": _specs().DataSpec(task, data_file, data_dir, not skip_checksums)},
    )


def sample(splits_help: str, splits_default: str | None = None, *, max_examples: str | None = "A seeded random subset of this many examples.",
           max_per_split: int | None | bool = None, seed_help: str | None = "Seed of the --max-examples and --max-per-split subsets."):  # fmt: skip
    """--splits, and where asked --max-examples, --max-per-split (``False``: none; else its default) and --seed: the command
    receives ``sample``, a :class:`~interp.api.specs.SampleSpec`."""
    options = [click.option("--splits", default=splits_default, show_default=splits_default is not None, help=splits_help)]
    if max_examples is not None:
        options.append(click.option("--max-examples", type=int, default=None, help=max_examples))
    if max_per_split is not False:
        options.append(click.option("--max-per-split", type=int, default=max_per_split, show_default=max_per_split is not None,
                                    help="At most this many examples of each split, seeded (a mixed set)." if max_per_split is None
                                    else "A seeded sample of this many examples of each split; all pairs among them."))  # fmt: skip
    if seed_help is not None:
        options.append(click.option("--seed", type=int, default=TRAIN.seed, show_default=True, help=seed_help))

    def gather(splits: str | None, **rest):
        return {"sample": _specs().SampleSpec(listed(splits, "--splits") if splits is not None else (), **rest)}

    return option_group(options, gather)


DEVICE = click.option("--device", default="auto", show_default=True, help="auto (a GPU when there is one), cpu, or cuda[:N].")
BACKEND = click.option("--backend", default="hf", show_default=True,
                       help="hf (interp's engine on the Hugging Face model) or transformer-lens (the same through a TransformerBridge's hook points; pip install 'interp[tl]').")  # fmt: skip


def wordpiece_option(rules: str = "first or last", default: str = "first"):
    """--wordpiece, its help naming the ``rules`` the command takes, and its ``default``."""
    return click.option("--wordpiece", default=default, show_default=True, help=f"Which WordPiece stands for a split word: {rules}.")


COMPILE = click.option("--compile/--no-compile", default=None,
                       help="Run the interchange's suffix through torch.compile (BERT-layout encoders; CUDA graphs on a GPU)  [default: on for CUDA in calls of 2^20 pairs or more, off on a CPU].")  # fmt: skip


PREFIX_REUSE = click.option("--prefix-reuse/--no-prefix-reuse", default=None,
                            help="On a decoder, run each base's positions before the intervened token once for all its sources (the same logits, faster); --no-prefix-reuse runs every position of every pair  [default: on].")  # fmt: skip


def run(batch_size: int | None | bool, batch_help: str | None = None, *, device: bool = True, quiet_help: str = "No progress bar.",
        wordpiece: str | None = None, backend: bool = False, compile: bool = False, wordpiece_default: str = "first"):  # fmt: skip
    """--batch-size (its default ``batch_size``; ``False``: none, a training's batch is its recipe's), --device (with
    ``device``), --wordpiece (with ``wordpiece``, its rules), --backend (with ``backend``), --compile/--no-compile and --prefix-reuse/--no-prefix-reuse (with
    ``compile``: commands that run interchanges) and --quiet: the command receives ``run`` (a
    :class:`~interp.api.specs.RunSpec`) and ``progress``."""
    options = [] if batch_size is False else [click.option("--batch-size", type=int, default=batch_size, show_default=batch_size is not None, help=batch_help)]
    if device:
        options.append(DEVICE)
    if wordpiece is not None:
        options.append(wordpiece_option(wordpiece, wordpiece_default))
    if backend:
        options.append(BACKEND)
    if compile:
        options.extend([COMPILE, PREFIX_REUSE])
    options.append(click.option("--quiet", is_flag=True, help=quiet_help))
    return option_group(options, lambda quiet, **spec: {"run": _specs().RunSpec(**spec), "progress": not quiet})


LABEL_MAP = click.option("--label-map", default=None,
                         help="What the head's label ids mean where its config does not say (LABEL_0, ...): e.g. 0=contradiction,1=neutral,2=entailment. Other labels are read by name in any order; a 3-label model on a 2-label task reads contradiction as neutral.")  # fmt: skip


TEMPLATE = click.option("--template", default=None,
                        help="A decoder's text joining the pair, with {premise} and {hypothesis} once each (\\n for a new line) "
                             "[default: the checkpoint's own, else 'Premise: {premise}\\nHypothesis: {hypothesis}\\nAnswer:'].")  # fmt: skip
LABEL_WORDS = click.option("--label-words", default=None,
                           help="Read a causal LM as a classifier: each label's word as it follows the template, one token each, e.g. "
                                "'entailment= yes,neutral= no' (the space is part of the word). train and demo: none, a new head "
                                "where a packaged model's recipe reads label words.")  # fmt: skip


def model(required: bool = True, help: str = "A fine-tuned classifier for the task: checkpoint directory or hub name.", default: str | None = None):
    """--model, --label-map, --template and --label-words: the command receives ``model`` (the spec) and ``reading``, how
    to read it: ``label_map`` (the map as written), a decoder's ``template`` and ``label_words``, each ``None`` unless given."""
    options = [click.option("--model", required=required, default=default, show_default=default is not None, help=help), LABEL_MAP, TEMPLATE,
               LABEL_WORDS]  # fmt: skip
    return option_group(options, lambda model, label_map, template, label_words: {"model": model, "reading": {
        "label_map": label_map, "template": None if template is None else template.replace("\\n", "\n").replace("\\t", "\t"),
        "label_words": label_words}})


def classifier(model: str, reading: dict):
    """The model a job binds: the spec itself, or with --label-map, --template or --label-words the classifier loaded
    here, once, relabelled or read as they say."""
    given = {k: v for k, v in reading.items() if v is not None}
    if not given:
        return model
    from interp.api.loading import load_model

    return load_model(model, **given)


def output(help: str, path: click.Path, *, required: bool = True, default: str | None = None, overwrite_help: str = "Replace an existing --out."):
    """--out (of type ``path``) and --overwrite: the command receives ``output``, a dict ``{"out": ..., "overwrite": ...}``."""
    shown = {"default": default, "show_default": True} if default is not None else {} if required else {"default": None}
    return settings("output", click.option("--out", required=required, type=path, help=help, **shown),
                    click.option("--overwrite", is_flag=True, help=overwrite_help))  # fmt: skip


INPUT = click.option("--input", default=None, help="pair, or hypothesis: the hypothesis-only baseline (the premise left empty) "
                     "[default: pair; evaluate: what the checkpoint was trained to read].")

FOLD_LABELS = click.option("--fold-labels", is_flag=True, help="Score a model with fewer labels than the task (two-label MoNLI on a "
                           "three-label fragment) by the task's fold, gold contradiction read as neutral [default: refused].")
