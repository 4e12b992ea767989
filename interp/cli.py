"""The `interp` command line: each command parses, builds a config, makes one library call, formats.

Options shared by commands come in groups, each a decorator: ``_data``
(--task, --data-file, --data-dir, --skip-checksums), ``_sample`` (--splits,
--max-examples, --max-per-split, --seed), ``_run`` (--batch-size, --device,
--quiet) and ``_model``; a command receives a group as the library's spec
object (``data``, ``sample``, ``run``: :mod:`interp.api.specs`) and passes
it on as it is.

Errors from the library (:class:`interp.core.errors.InterpError`) become one line
on stderr and exit code 2, as do click's usage errors. Library messages name
parameters (``batch_size=``); ``_FLAGS`` is the one table that writes them as
this CLI's flags.
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
import os
import sys
import warnings
from pathlib import Path
from typing import Callable

import click

from interp.core.errors import ConfigError, InterpError, InterpWarning
from interp.tasks.fragments.data import FRAGMENTS, LOGIC
from interp.jobs.train import TrainConfig

_D = TrainConfig  # the CLI's defaults are the library's (class attributes: no task is resolved at import)

_SPLITS_HELP = "comma-separated MoNLI splits: pmonli, nmonli_train, nmonli_test (or pmonli_train / pmonli_heldout, PMoNLI's fixed 80/20 split)"


#: The one table from a library parameter, as the library's errors name it, to this CLI's flag.
#: A parameter not listed is its name with dashes (``batch_size`` is ``--batch-size``); a
#: switch the message asks to turn on (``overwrite=True``) is its flag alone.
_FLAGS: dict[str | tuple[str, str], str] = {
    ("verify_checksums", "False"): "--skip-checksums",
    "out_dir": "--out",
    "variables": "--variable",
    "subspaces": "--subspace",
    "ks": "--k",
    "lrs": "--lr",
    "formats": "--format",
    "per_size": "--models",
}


def _flag(param: str, value: str) -> str:
    """How the CLI writes a parameter a library message names (see :mod:`interp.core.errors`)."""
    if (param, value) in _FLAGS:
        return _FLAGS[param, value]
    flag = _FLAGS.get(param, "--" + param.replace("_", "-"))
    return flag if value in ("", "True") else f"{flag} {value}"


def _shown(previous):
    """``warnings.showwarning`` that prints the library's warnings as one line each on stderr and hands others to ``previous``."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if issubclass(category, InterpWarning):
            click.echo(f"interp: warning: {message.render(_flag) if isinstance(message, InterpWarning) else message}", err=True)
        else:
            previous(message, category, filename, lineno, file, line)

    return show


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            bad = next((a for a in ctx.args if "\x00" in a), None)
            if bad is not None:  # no path or name can hold one, and the OS refuses it with a ValueError deep in a command
                raise ConfigError(f"argument {bad!r} holds a NUL character, which no path or name can")
            with warnings.catch_warnings():  # the library's warnings as one line each on stderr
                warnings.simplefilter("always", InterpWarning)
                warnings.showwarning = _shown(warnings.showwarning)
                return super().invoke(ctx)
        except InterpError as exc:
            click.echo(f"interp: error: {exc.render(_flag)}", err=True)
            ctx.exit(2)
        except click.UsageError as exc:  # a flag click itself refuses: one line too, naming the (sub)command's help
            names, c = [], exc.ctx
            while c is not None and c.parent is not None:
                names.append(c.info_name)
                c = c.parent
            where = f"; see interp {' '.join(reversed(names))} --help" if names else ""
            click.echo(f"interp: error: {exc.format_message().rstrip('.')}{where}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("\ninterp: interrupted; run the same command again to resume", err=True)
            ctx.exit(130)


def _splits(value: str, option: str) -> tuple[str, ...]:
    """A comma-separated option as a tuple; empty is an error except for --eval-splits."""
    names = tuple(s.strip() for s in value.split(",") if s.strip())
    if not names and option != "--eval-splits":
        raise ConfigError(f"{option} names nothing")
    return names


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="interp")
def main() -> None:
    """Probes, interchange interventions and causal models for encoder NLI models (BERT, RoBERTa, XLM-R, ELECTRA, DistilBERT, DeBERTa-v2, ModernBERT)."""


# Shared option groups. Each is a decorator: its click options, and how the command receives them
# (``data``, ``sample`` and ``run`` as the library's keyword arguments; ``progress`` from --quiet).


def _option_group(options: list, gather: Callable[..., dict]):
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


_DATA_DIR = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                         help="MoNLI directory (default: $INTERP_MONLI_DIR); with --task fragment:NAME or fragments, the semantic fragments' (default: $INTERP_FRAGMENTS_DIR).")  # fmt: skip
_SKIP_CHECKSUMS = click.option("--skip-checksums", is_flag=True, help="Do not compare file SHA-256 sums with the released MoNLI.")
_TASK = click.option("--task", default="monli", show_default=True,
                     help="monli, mqnli, monotonicity-fragment, logic-fragment or monotonicity (with --data-file), fragment:NAME (a semantic fragment), or your own: path/to/task.py:make_task or package.module:make_task (a function returning an interp Task).")  # fmt: skip
_DATA_FILE = click.option("--data-file", type=click.Path(dir_okay=False), default=None,
                          help="A generated file: what --task mqnli (interp mqnli), monotonicity-fragment or logic-fragment (interp fragments generate), monotonicity (interp monotonicity generate) or monli (interp monli-generate) reads; with the default task, an MQNLI file.")  # fmt: skip


def _specs():
    """:mod:`interp.api.specs`, imported when a command runs (``interp --help`` stays fast)."""
    from interp.api import specs

    return specs


def _data(task: bool = True):
    """--task and --data-file (with ``task``), --data-dir, --skip-checksums: the command receives ``data``, a
    :class:`~interp.api.specs.DataSpec` (without ``task``: a dict of the last two, where released data lie)."""
    if not task:
        return _option_group([_DATA_DIR, _SKIP_CHECKSUMS], lambda data_dir, skip_checksums: {"data": {"data_dir": data_dir, "verify_checksums": not skip_checksums}})
    return _option_group(
        [_TASK, _DATA_FILE, _DATA_DIR, _SKIP_CHECKSUMS],
        lambda task, data_file, data_dir, skip_checksums: {"data": _specs().DataSpec(task, data_file, data_dir, not skip_checksums)},
    )


def _sample(splits_help: str, splits_default: str | None = None, *, max_examples: str | None = "A seeded random subset of this many examples.",
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
        options.append(click.option("--seed", type=int, default=_D.seed, show_default=True, help=seed_help))

    def gather(splits, **rest):
        return {"sample": _specs().SampleSpec(_splits(splits, "--splits") if splits is not None else (), **rest)}

    return _option_group(options, gather)


_PAIRS_PER_PASS = "(base, source) pairs per forward pass [default: 256 on CPU, from free memory on a GPU]."


_DEVICE = click.option("--device", default="auto", show_default=True, help="auto (a GPU when there is one), cpu, or cuda[:N].")


def _run(batch_size: int | None, batch_help: str | None = None, *, device: bool = True, quiet_help: str = "No progress bar."):
    """--batch-size, --device (with ``device``) and --quiet: the command receives ``run`` (a :class:`~interp.api.specs.RunSpec`;
    the command sets its ``wordpiece`` and ``backend`` from their own options) and ``progress``."""
    options = [click.option("--batch-size", type=int, default=batch_size, show_default=batch_size is not None, help=batch_help)]
    if device:
        options.append(_DEVICE)
    options.append(click.option("--quiet", is_flag=True, help=quiet_help))
    return _option_group(options, lambda quiet, **run: {"run": _specs().RunSpec(**run), "progress": not quiet})


_LABEL_MAP = click.option("--label-map", default=None,
                          help="What the head's label ids mean where its config does not say (LABEL_0, ...): e.g. 0=contradiction,1=neutral,2=entailment. Other labels are read by name in any order; a 3-label model on a 2-label task reads contradiction as neutral.")  # fmt: skip


def _model(required: bool = True, help: str = "A fine-tuned classifier for the task: checkpoint directory or hub name.", default: str | None = None):
    """--model and --label-map: the command receives ``model`` (the spec) and ``label_map`` (the map as written, or ``None``)."""
    return _option_group([click.option("--model", required=required, default=default, show_default=default is not None, help=help), _LABEL_MAP],
                         lambda model, label_map: {"model": model, "label_map": label_map})  # fmt: skip


def _classifier(model: str, label_map: str | None):
    """The model a job binds: the spec itself, or with --label-map the classifier loaded and relabelled here, once."""
    if label_map is None:
        return model
    from interp.api.loading import load_model

    return load_model(model, label_map=label_map)


def _backend_option(function):
    """--backend, shared by the commands that run the model to read or intervene."""
    return click.option(
        "--backend",
        default="hf",
        show_default=True,
        help="hf (interp's engine on the Hugging Face model) or transformer-lens (the same through a TransformerBridge's hook points; pip install 'interp[tl]').",
    )(function)


_INPUT = click.option("--input", default=None, help="pair, or hypothesis: the hypothesis-only baseline (the premise left empty) "
                      "[default: pair; evaluate: what the checkpoint was trained to read].")

_FOLD_LABELS = click.option("--fold-labels", is_flag=True, help="Score a model with fewer labels than the task (two-label MoNLI on a "
                            "three-label fragment) by the task's fold, gold contradiction read as neutral [default: refused].")


def _wordpiece_option(rules: str = "first or last"):
    return click.option("--wordpiece", default="first", show_default=True, help=f"Which WordPiece stands for a split word: {rules}.")


@main.command()
@_model(required=False, default=_D.model, help="'minilm', a checkpoint directory, or a hub name.")
@_data()
@_sample(f"{_SPLITS_HELP} [default: the task's training splits: pmonli,nmonli_train for MoNLI; with --data-file: train; another task: its train split, else all]",
         max_examples="Train on a seeded random subset of this size.", max_per_split=False, seed_help="Seed of the subset, the initial head and the batch order.")  # fmt: skip
@click.option("--epochs", type=int, default=_D.epochs, show_default=True)
@click.option("--lr", type=float, default=_D.lr, show_default=True)
@_run(_D.batch_size, quiet_help="No progress bars.")
@click.option("--precision", default=_D.precision, show_default=True, help="fp32, or bf16: each forward pass under autocast in bfloat16 (the weights and optimizer stay fp32).")
@click.option("--eval-splits", default=None, help="Splits scored after training [default: all; with --data-file: train,test].")
@click.option("--curve", is_flag=True, help="Also score --eval-splits after every epoch (the learning curve, in training.json).")
@click.option("--iit", default=None, help="Interchange intervention training: VARIABLE@LOCATION (e.g. lexrel@blocks.2.hook_resid_post@w_h); adds the cross-entropy of the intervened output against the causal model's counterfactual.")
@click.option("--iit-weight", type=float, default=1.0, show_default=True, help="Weight of the IIT loss.")
@click.option("--iit-subspace", type=int, default=None, help="Train only a k-dimensional rotated subspace of the location to carry the variable (a fixed seeded rotation).")
@click.option("--init", default="pretrained", show_default=True, help="pretrained, or random: the same architecture and tokenizer with every weight drawn from --seed (MoNLI Table 1's no-pretraining row).")
@_INPUT
@click.option("--node-loss", default=None, help="Also train a head per causal-model variable (comma-separated, or all) to predict its value, "
              "a cross-entropy added to the label's (Geiger et al. 2019, Figure 4: MQNLI's tree nodes).")
@click.option("--node-weight", type=float, default=1.0, show_default=True, help="Weight of the node loss.")
@click.option("--node-read", default="cls", show_default=True, help="Where the node heads read the last block: cls, or tokens (each variable's aligned tokens).")
@click.option("--seeds", default=None, help="Comma-separated fine-tuning seeds (instead of --seed): one checkpoint per seed under --out "
              "(seed<S>/, each resumable), then seeds.csv and seeds_summary.csv: every seed's accuracy, the mean and 95% t interval over seeds.")
@click.option("--out", required=True, type=click.Path(), help="Checkpoint directory to create (with --seeds: the folder of the seeds' checkpoints).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@_FOLD_LABELS
def train(model, label_map, data, sample, epochs, lr, run, progress, precision, eval_splits, curve, iit, iit_weight, iit_subspace, init, input, node_loss,
          node_weight, node_read, seeds, out, overwrite, fold_labels):  # fmt: skip
    """Fine-tune a 2-label MoNLI (or, with --data-file, 3-label MQNLI) classifier and save it as safetensors; with --iit, by interchange intervention training."""
    from interp.jobs.iit import train_iit
    from interp.jobs.train import train as train_model
    from interp.models.evaluation import accuracy_lines

    config = TrainConfig(
        model=model, label_map=label_map, data=data, splits=sample.splits, max_examples=sample.max_examples, seed=sample.seed, batch_size=run.batch_size,
        epochs=epochs, lr=lr, curve=curve, iit=iit, iit_weight=iit_weight, iit_subspace=iit_subspace, init=init, input=input or "pair",
        node_loss=node_loss, node_weight=node_weight, node_read=node_read, device=run.device, precision=precision, fold_labels=fold_labels,
        eval_splits=_splits(eval_splits, "--eval-splits") if eval_splits is not None else _D.eval_splits,
    )  # fmt: skip
    if seeds is not None:
        from interp.jobs.seeds import format_seeds, train_seeds

        found = train_seeds(config, out, _ints(seeds, "--seeds"), progress=progress, overwrite=overwrite, trainer=train_iit if iit else train_model)
        click.echo(format_seeds(found))
        return
    result = (train_iit if iit else train_model)(config, out, progress=progress, overwrite=overwrite)
    click.echo(f"saved {result.out_dir} ({result.n_train} training examples, {result.seconds:.0f} s)")
    click.echo("\n".join(accuracy_lines(result.metrics)))


@main.command()
@_model(help="A fine-tuned classifier: checkpoint directory or hub name.")
@_data()
@click.option("--splits", default=None, help=f"{_SPLITS_HELP} [default: all; with --data-file: train,test; another task: all of its]")
@click.option("--batch-size", type=int, default=128, show_default=True)
@_DEVICE
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@_INPUT
@_FOLD_LABELS
def evaluate(model, label_map, data, splits, batch_size, device, as_json, input, fold_labels):
    """Accuracy of a fine-tuned classifier on a task's splits, gold labels read through its label mapping (--task fragments: all eight)."""
    from interp.models.evaluation import accuracy_lines, evaluate_task
    from interp.tasks import resolve_tasks, task_for_file

    if batch_size < 1:
        raise ConfigError("--batch-size must be at least 1")
    tasks, group = resolve_tasks(task_for_file(data.task, data.data_file), data_dir=data.data_dir, verify_checksums=data.verify_checksums,
                                 data_file=data.data_file, argument="task")  # fmt: skip
    chosen = _splits(splits, "--splits") if splits is not None else None
    table = {name: evaluate_task(model, task, chosen or task.eval_splits or task.splits, batch_size, progress=sys.stderr.isatty(), label_map=label_map,
                                 input=input, device=device, fold_labels=fold_labels) for name, task in tasks.items()}  # fmt: skip
    if group is None:
        (metrics,) = table.values()
        click.echo(json.dumps(metrics, indent=2) if as_json else "\n".join(accuracy_lines(metrics)))
    else:
        click.echo(json.dumps(table, indent=2) if as_json else _group_table(table, group))


@main.command()
@_model(help="A fine-tuned classifier: checkpoint directory or hub name.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HDF5 file to write.")
@_data()
@_sample("Comma-separated splits of the task [default: all of them].", max_examples=None, max_per_split=False, seed_help=None)
@_wordpiece_option()
@click.option("--dtype", default="float32", show_default=True, help="float32, or float16 (for probes only).")
@_run(64)
@click.option("--components", is_flag=True, help="Also cache every block's attn.hook_z (all heads; a head is its slice), hook_attn_out, hook_resid_mid and hook_mlp_out.")
@_backend_option
def cache(model, label_map, out, data, sample, wordpiece, dtype, run, progress, components, backend):
    """Store every location's vector for every example in HDF5 (resumable)."""
    from interp.jobs.cache import CacheConfig, build_cache

    config = CacheConfig(model=_classifier(model, label_map), out=out, data=data, sample=sample, run=replace(run, wordpiece=wordpiece, backend=backend), dtype=dtype,
                         components=components)  # fmt: skip
    path = build_cache(config, progress=progress)
    click.echo(f"wrote {path}")


@main.command()
@click.option("--cache", "cache_path", required=True, type=click.Path(dir_okay=False), help="Activation cache (interp cache).")
@click.option("--model", default=None, help="Check the cache was made with this model's weights.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for probes.csv and probes.png.")
@click.option("--locations", default="all", show_default=True, help="Comma-separated locations (SITE@r1+r2: their vectors concatenated), all, or aligned (each variable at its own aligned roles, every layer); with a cache made with --components also heads or components (@ROLE for one role) and component sites such as blocks.2.attn.hook_z.h3@w_h.")
@click.option("--targets", default=None, help="Variables the cache keeps values of, and/or label (infer) [default: the task's own (its Task.probe_targets, which the cache records: lexrel,infer on MoNLI), else every variable and label; with aligned: every aligned variable].")
@click.option("--probes", "kinds", default="mlp,linear", show_default=True, help="mlp (4 hidden units) and/or linear.")
@click.option("--folds", type=int, default=5, show_default=True)
@click.option("--seeds", type=int, default=3, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def probe(cache_path, model, out, locations, targets, kinds, folds, seeds, quiet):
    """Probe sweep: held-out accuracy and selectivity against both control tasks at every location."""
    from interp.jobs.probe_sweep import ProbeSweepConfig, run_probe_sweep

    config = ProbeSweepConfig(
        cache=cache_path,
        out_dir=out,
        model=model,
        locations=locations,
        targets=_splits(targets, "--targets") if targets is not None else (),
        probes=_splits(kinds, "--probes"),
        folds=folds,
        seeds=seeds,
    )
    rows = run_probe_sweep(config, progress=not quiet)
    click.echo(f"wrote {out}/probes.csv ({len(rows)} rows) and {out}/probes.png")


@main.command()
@_model()
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HDF5 file to write.")
@click.option("--locations", required=True, help="Comma-separated locations, e.g. blocks.2.hook_resid_post@w_h or SITE@r1+r2 (several tokens at once); components inside a block: blocks.2.attn.hook_z.h3@w_h (a head), blocks.2.attn.hook_z, hook_attn_out, hook_resid_mid, hook_mlp_out; all (every residual site at every role); aligned (every residual site at the variables' aligned roles); heads or components (every head's hook_z, or every attn/resid_mid/mlp output; @ROLE for one role); a site without @ROLE means the variables' aligned roles.")
@_data()
@_sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].")
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable(s) to compare with, comma-separated (monli: lexrel, negated, output).")
@_wordpiece_option("first, last, or all (every piece, concatenated; each role must cover as many pieces in every example)")
@click.option("--cache", "cache_path", default=None, type=click.Path(dir_okay=False), help="float32 activation cache to read source vectors from.")
@click.option("--pairs", type=click.Choice(["all"]), default=None, help="all: every pair of all of the task's examples (all splits, no --max-examples).")
@_run(None, _PAIRS_PER_PASS)
@click.option("--unit-size", type=int, default=16, show_default=True, help="Bases per unit of work (what an interruption can lose).")
@click.option("--precision", default="fp32", show_default=True, help="fp32, tf32 (GPU matmuls) or bf16.")
@click.option("--overwrite", is_flag=True, help="Replace an --out that holds other interventions.")
@_backend_option
def intervene(model, label_map, out, locations, data, sample, variable, wordpiece, cache_path, pairs, run, progress, unit_size, precision, overwrite, backend):
    """Interchange interventions for every (base, source) pair at each location (resumable; shards across torchrun processes)."""
    from interp.analysis.iia import format_summaries, layer_table, summarize_all
    from interp.jobs.intervene import InterventionConfig, run_interventions

    if pairs == "all":
        if sample.max_examples is not None:
            raise ConfigError("--pairs all runs every example: it cannot be combined with --max-examples")
        sample = replace(sample, splits=data.load().splits)
    config = InterventionConfig(
        model=_classifier(model, label_map), out=out, locations=locations, variables=_splits(variable, "--variable"), data=data, sample=sample,
        run=replace(run, wordpiece=wordpiece, backend=backend), cache=cache_path, unit_size=unit_size, precision=precision, overwrite=overwrite,
    )  # fmt: skip
    path = run_interventions(config, progress=progress)
    if os.environ.get("RANK", "0") == "0":  # under torchrun, one summary
        click.echo(f"wrote {path}")
        aligned = locations.strip() == "aligned"
        summaries = summarize_all(path, aligned_only=aligned)
        click.echo(format_summaries(summaries))
        if aligned:
            click.echo("\nIIA on causal pairs by layer at each variable's aligned location (larger null in brackets):")
            click.echo(layer_table(summaries))


def _group_table(table: dict, group) -> str:
    """Accuracy (%) per member task and split, with the group's averages (the fragments': Richardson et al. 2020, Table 1)."""
    splits = list(dict.fromkeys(s for metrics in table.values() for s in metrics))
    width = max(10, *(len(s) + 2 for s in splits))
    lines = [f"{'task':22}" + "".join(f"{s:>{width}}" for s in splits)]
    for name, metrics in table.items():
        lines.append(f"{name:22}" + "".join(f"{100 * metrics[s]['accuracy']:{width}.1f}" for s in splits))
    for label, members in group.averages.items():
        lines.append(f"{label:22}" + "".join(f"{100 * sum(table[m][s]['accuracy'] for m in members) / len(members):{width}.1f}" for s in splits))
    return "\n".join(lines)


def _numbers(value: str, option: str, kind: type = int) -> tuple:
    """A comma-separated list of ``kind`` (int or float)."""
    names = _splits(value, option)  # its own message for a list naming nothing
    try:
        return tuple(kind(v) for v in names)
    except ValueError:
        raise ConfigError(f"{option} takes comma-separated {'integers' if kind is int else 'numbers'}, got {value!r}") from None


def _ints(value: str, option: str) -> tuple[int, ...]:
    """A comma-separated list of integers."""
    return _numbers(value, option, int)


@main.command()
@_model()
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Directory for das.csv, das_summary.csv, das.png and interventions/ (required unless --load).")
@click.option("--locations", "--location", "locations", default="aligned", show_default=True, help="Comma-separated locations (SITE@r1+r2), all (every site at every role), or aligned (every site at the variables' aligned roles).")
@_data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable(s), comma-separated (monli: lexrel, negated, output).")
@click.option("--subspace", default="64", show_default=True, help="Comma-separated sizes k of the aligned subspace (at most the location's width), or boundless (the size learned).")
@click.option("--kind", default="rotated", show_default=True, help="rotated (an orthogonal width x width rotation, DAS) or lowrank (an orthonormal width x k basis).")
@_sample("Comma-separated splits of the task [default: the task's own set].")
@click.option("--seeds", default="0", show_default=True, help="Comma-separated seeds: each its own example split, pairs, initial rotation and batch order.")
@click.option("--train-pairs", type=int, default=2000, show_default=True, help="Balanced counterfactual pairs among the training examples.")
@click.option("--test-pairs", type=int, default=1000, show_default=True, help="Balanced counterfactual pairs among the held-out examples.")
@click.option("--test-share", type=float, default=0.2, show_default=True, help="Share of the examples held out (never seen in training, as base or source).")
@click.option("--epochs", type=int, default=2, show_default=True)
@click.option("--lr", type=float, default=1e-3, show_default=True)
@_run(64, "Pairs per training step.")
@_wordpiece_option()
@click.option("--load", "load_path", default=None, type=click.Path(dir_okay=False), help="Score this saved intervention (its .safetensors or .json) on the held-out pairs of these settings instead of training; its variable and location come from the file.")
@click.option("--overwrite", is_flag=True, help="Replace an --out that holds a DAS run with other settings.")
def das(model, label_map, out, locations, data, variable, subspace, kind, sample, seeds, train_pairs, test_pairs, test_share, epochs, lr, run, progress, wordpiece, load_path, overwrite):
    """Distributed alignment search: train a rotated subspace per location and variable (model frozen), score it on held-out pairs beside vanilla interchange and the best localist block (resumable)."""
    from interp.analysis.das_figure import format_das
    from interp.jobs.das import DasConfig, run_das, score_saved

    if out is None and load_path is None:
        raise ConfigError("--out is required (a directory for the results), unless --load scores a saved intervention")
    config = DasConfig(
        model=_classifier(model, label_map), out=out or "", locations=locations, variables=_splits(variable, "--variable"), subspaces=_splits(subspace, "--subspace"),
        kind=kind, data=data, sample=sample, run=replace(run, wordpiece=wordpiece), seeds=_ints(seeds, "--seeds"), train_pairs=train_pairs,
        test_pairs=test_pairs, test_share=test_share, epochs=epochs, lr=lr, overwrite=overwrite,
    )  # fmt: skip
    if load_path is not None:
        score = score_saved(config, load_path)
        click.echo(f"{score['variable']} at {score['location']}, k = {score['k']}, seed {score['seed']}: held-out IIA "
                   f"{score['saved_iia']:.3f} (vanilla {score['vanilla_iia']:.3f}, chance {score['saved_chance']:.3f}; "
                   f"stays base {score['saved_stays_base']:.3f}, copies source {score['saved_copies_source']:.3f}) on {score['saved_pairs']} pairs; "
                   f"95% interval of the IIA [{score['saved_iia_low']:.3f}, {score['saved_iia_high']:.3f}] ({score['interval']})")
        return
    rows = run_das(config, progress=progress)
    click.echo(f"wrote {out}/das.csv, das_summary.csv, das.png ({len(rows)} units; held-out IIA, mean [95% interval] over seeds)")
    click.echo(format_das(rows))


@main.command("location-sweep")
@_model()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for sweep.h5, locations.csv, locations.png.")
@click.option("--examples", type=int, default=100, show_default=True, help="m: a seeded sample of m examples, m x m pairs per location.")
@_data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable to interchange.")
@_sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].", max_examples=None, max_per_split=False, seed_help="Seed of the sample.")
@click.option("--locations", default="all", show_default=True, help="Comma-separated locations, all, or aligned (every site at the variable's aligned roles).")
@_wordpiece_option("first, last, or all")
@click.option("--cache", "cache_path", default=None, type=click.Path(dir_okay=False), help="float32 activation cache to read source vectors from.")
@_run(None, _PAIRS_PER_PASS, quiet_help="No progress bars.")
def location_sweep(model, label_map, out, examples, data, variable, sample, locations, wordpiece, cache_path, run, progress):
    """Rank every location by INFER's structure on a sample: agreement on causal pairs, largest clique (Appendix A.3)."""
    from interp.jobs.location_sweep import LocationSweepConfig, format_ranking, run_location_sweep

    config = LocationSweepConfig(model=_classifier(model, label_map), out_dir=out, examples=examples, variable=variable, locations=locations, data=data, sample=sample,
                                 run=replace(run, wordpiece=wordpiece), cache=cache_path)  # fmt: skip
    rows = run_location_sweep(config, progress=progress)
    click.echo(format_ranking(rows))
    click.echo(f"wrote {out}/sweep.h5, {out}/locations.csv, {out}/locations.png")


@main.command("head-sweep")
@_model()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for heads.h5, heads.csv, heads.png.")
@_data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable to interchange.")
@click.option("--roles", default="w_h,cls", show_default=True, help="Token roles to intervene at, comma-separated.")
@_sample("Comma-separated splits the mixed sample draws from.", "pmonli,nmonli_test", max_examples=None, max_per_split=50, seed_help="Seed of the sample.")
@_run(None, _PAIRS_PER_PASS, quiet_help="No progress bars.")
@_backend_option
def head_sweep(model, label_map, out, data, variable, roles, sample, run, progress, backend):
    """IIA of a variable at every head's hook_z, every attention and MLP output, and the residual stream (a heatmap layer × head)."""
    from interp.jobs.head_sweep import HeadSweepConfig, format_heads, run_head_sweep

    config = HeadSweepConfig(model=_classifier(model, label_map), out_dir=out, variable=variable, roles=_splits(roles, "--roles"), data=data, sample=sample,
                             run=replace(run, backend=backend))  # fmt: skip
    rows = run_head_sweep(config, progress=progress)
    click.echo(format_heads(rows))
    click.echo(f"wrote {out}/heads.h5, {out}/heads.csv, {out}/heads.png")


@main.command()
@click.option("--interventions", "path", required=True, type=click.Path(dir_okay=False), help="File from interp intervene.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for cliques.json, graph.graphml (and --format's others), clique.png.")
@click.option("--location", default=None, help="Which location of the file (default: its only one).")
@click.option("--variable", default=None, help="Which intervened variable of the file: its values make the causal edges (default: its only one).")
@click.option("--alphas", default="1-10", show_default=True, help="α values to search with: a range 1-10 or a list 1,3,5.")
@click.option("--min-size", type=int, default=None, help="Stop peeling at a clique smaller than this (default: the chance level at the graph's density; 2: peel to the end).")
@click.option("--model", default=None, help="Check the interventions were made with this model's weights.")
@click.option("--format", "formats", default="graphml", show_default=True, help="The graph's file formats, comma-separated: graphml, gexf (Gephi), json (networkx node-link data with the cliques).")
def cliques(path, out, location, variable, alphas, min_size, model, formats):
    """Intervention graph and greedy disjoint cliques (Appendix A.3), with chance baselines."""
    from interp.jobs.cliques import (
        GRAPH_FORMATS,
        CliqueConfig,
        format_cliques,
        parse_alphas,
        run_cliques,
    )

    config = CliqueConfig(
        interventions=path, out_dir=out, location=location, variable=variable, alphas=parse_alphas(alphas), model=model,
        min_size=min_size, formats=_splits(formats, "--format"),
    )
    report = run_cliques(config)
    click.echo(format_cliques(report))
    graphs = ", ".join(f"{out}/{GRAPH_FORMATS[f]}" for f in config.formats)
    click.echo(f"\nwrote {out}/cliques.json, {graphs}, {out}/clique.png")


@main.command()
@click.option("--out", default="runs/demo", show_default=True, type=click.Path(), help="Run directory.")
@_model(required=False, default=_D.model, help="Pretrained model to fine-tune.")
@click.option("--epochs", type=int, default=_D.epochs, show_default=True)
@click.option("--lr", type=float, default=_D.lr, show_default=True)
@click.option("--seed", type=int, default=_D.seed, show_default=True, help="The fine-tuning seed (new heads, batch order, dropout) of one run.")
@click.option("--seeds", default=None, help="Run the whole demo once per fine-tuning seed, comma-separated (OUT/seed<S>/), and write tables over seeds; instead of --seed.")
@click.option("--probe-seeds", type=int, default=3, show_default=True, help="How many seeds the probe sweep averages over, in every run (not the fine-tuning's).")
@click.option("--location", default=None, help="The intervention location [default: the task's plan: MoNLI's is read off the probe table, another task's is every variable's aligned roles].")
@_data()
@click.option("--examples", type=int, default=60, show_default=True, help="m, the seeded sample of m × m interventions per location (a task whose plan samples per split, as MoNLI's, takes its own).")
@click.option("--max-train", type=int, default=None, help="Fine-tune on a seeded subset of this many training examples.")
@_run(_D.batch_size, quiet_help="No progress bars.")
def demo(out, model, label_map, epochs, lr, seed, seeds, probe_seeds, location, data, examples, max_train, run, progress):
    """The main job: a task's behavioral stage (MoNLI: Table 1), activation cache, probes, interventions, cliques and the report."""
    from interp.jobs.behavioral import BehavioralConfig
    from interp.jobs.demo import DemoConfig, format_demo, run_demo

    behavioral = BehavioralConfig(out_dir=out, model=model, label_map=label_map, epochs=epochs, lr=lr, seed=seed, batch_size=run.batch_size, data=data,
                                  max_train=max_train, device=run.device)  # fmt: skip
    config = DemoConfig(behavioral, probe_seeds=probe_seeds, location=location, examples=examples)
    if seeds is not None:
        from interp.jobs.demo_seeds import format_demo_seeds, run_demo_seeds

        if click.get_current_context().get_parameter_source("seed") != click.core.ParameterSource.DEFAULT:
            raise ConfigError("give --seed (one run) or --seeds (one run per seed), not both")
        found = run_demo_seeds(config, _ints(seeds, "--seeds"), progress=progress)
        click.echo("")
        click.echo(format_demo_seeds(found))
        return
    result = run_demo(config, progress=progress)
    click.echo("")
    click.echo(format_demo(result))
    listing = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in Path(out).iterdir() if not p.name.endswith(".manifest.json")))
    click.echo(f"\nwrote {out}/: {listing} in {result.seconds:.0f} s; the report is {out}/report/index.html")


@main.command()
@_model(help="The model trained on the original task (a checkpoint with its head).")
@click.option("--original", required=True, help="TASK (its dev and test splits) or TASK:SPLIT (SPLIT halved by example id into dev and test), e.g. monli:pmonli_heldout.")
@click.option("--challenge", required=True, help="TASK (k examples from its train split) or TASK:SPLIT, e.g. monli:nmonli_train or fragment:negation.")
@click.option("--challenge-eval", default=None, help="A challenge split to halve into dev and test (default: the challenge task's dev and test splits), e.g. nmonli_test.")
@click.option("--k", "ks", default="50,100,250,500,1000", show_default=True, help="Numbers of challenge examples, comma-separated.")
@click.option("--lr", "lrs", default="1e-5,3e-5,1e-4", show_default=True, help="Learning rates of the grid.")
@click.option("--epochs", default="3", show_default=True, help="Epoch counts of the grid.")
@click.option("--seeds", default="0", show_default=True, help="Seeds of the grid (each also draws its own k examples).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run directory: units/, models/k<k>/, inoculation.csv, selected.json, inoculation.png.")
@click.option("--skip-checksums", is_flag=True, help="Do not compare file SHA-256 sums with the released data.")
@_run(16)
@_FOLD_LABELS
def inoculate(model, label_map, original, challenge, challenge_eval, ks, lrs, epochs, seeds, out, skip_checksums, run, progress, fold_labels):
    """Lossless inoculation (Richardson et al. 2020; MoNLI Appendix A.2): fine-tune on k challenge examples over a grid, select per k on dev.

    MoNLI is read from $INTERP_MONLI_DIR and the semantic fragments from $INTERP_FRAGMENTS_DIR.
    """
    from interp.jobs.inoculate import InoculateConfig, format_inoculation, run_inoculation

    config = InoculateConfig(
        model=model, original=original, challenge=challenge, out_dir=out, challenge_eval=challenge_eval, ks=_ints(ks, "--k"),
        lrs=_numbers(lrs, "--lr", float), epochs=_ints(epochs, "--epochs"), seeds=_ints(seeds, "--seeds"), batch_size=run.batch_size,
        verify_checksums=not skip_checksums, label_map=label_map, device=run.device, fold_labels=fold_labels,
    )  # fmt: skip
    _, selected = run_inoculation(config, progress=progress)
    click.echo(format_inoculation(selected))
    click.echo(f"wrote {out}/inoculation.csv, {out}/selected.json, {out}/inoculation.png, {out}/models/")


@main.command("inoculation-figure")
@click.argument("run_dirs", metavar="RUN_DIR...", nargs=-1, required=True, type=click.Path())
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="PNG to write: a panel per run (Richardson et al.'s Figures 6 and 7).")
@click.option("--columns", type=click.IntRange(1), default=4, show_default=True, help="Panels per row.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def inoculation_figure(run_dirs, out, columns, overwrite):
    """Several `interp inoculate` runs side by side: a table of before and after, and one figure with a panel per run."""
    from interp.jobs.inoculation_figure import inoculation_panels, inoculation_table, read_inoculation

    runs = [read_inoculation(d) for d in run_dirs]
    click.echo(inoculation_table(runs).to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    click.echo(f"wrote {inoculation_panels(runs, out, columns, overwrite=overwrite)}")


@main.command()
@click.argument("run_dir", type=click.Path())
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Folder for index.html (default: RUN_DIR/report).")
def report(run_dir, out):
    """One self-contained HTML page of a run folder: behavior, probe and IIA heatmaps, the clickable intervention graph, settings and hashes."""
    from interp.analysis.report import ReportConfig, write_report
    from interp.analysis.report.page import summary

    page, data = write_report(ReportConfig(run_dir=run_dir, out_dir=out))
    click.echo(summary(data))
    click.echo(f"wrote {page} (open it in a browser; it needs no network)")


@main.command("convert-checkpoint")
@click.argument("source", metavar="IN", type=click.Path())
@click.argument("out", metavar="OUT", type=click.Path())
@click.option("--overwrite", is_flag=True, help="Replace an existing OUT.")
def convert_checkpoint(source, out, overwrite):
    """Copy the checkpoint directory IN, whose weights are pytorch_model.bin (a pickle), to OUT with model.safetensors.

    The pickle is read once, here, with torch.load(weights_only=True); every other command reads safetensors only.
    """
    from interp.models.convert import convert_checkpoint as convert

    click.echo(f"wrote {convert(source, out, overwrite=overwrite)}/ (model.safetensors and the other files of {source})")


@main.group()
def fragments() -> None:
    """The semantic fragments (Richardson et al. 2020): generate one, check its labels in finite models, compare it with the released one."""


@fragments.command("generate")
@click.option("--fragment", type=click.Choice(["monotonicity", *LOGIC]), default="monotonicity", show_default=True,
              help="monotonicity (Figure 8's grammar, --setting) or a logic fragment (§3's templates, with its causal model).")
@click.option("--setting", type=click.Choice(["simple", "hard"]), default=None, help="monotonicity only: simple (one relative clause, 5 determiners; the default) or hard (up to three, all 13).")
@click.option("--n-train", type=int, default=3000, show_default=True, help="Training pairs (labels balanced 1:1:1).")
@click.option("--n-dev", type=int, default=1000, show_default=True)
@click.option("--n-test", type=int, default=1000, show_default=True, help="Test pairs (a logic fragment's test names are disjoint from training's).")
@click.option("--depth", type=int, default=None, help="monotonicity only: longest walk of substitutions [default: simple 2, hard 3].")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL file to write (statistics go to <out stem>.stats.json); read it with --task monotonicity-fragment (or logic-fragment) --data-file.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def fragments_generate(fragment, setting, n_train, n_dev, n_test, depth, seed, out, overwrite):
    """Generate labelled pairs of a fragment (seeded): the monotonicity grammar, or a logic fragment's templates, each label checked in finite models."""
    if fragment != "monotonicity":
        from interp.tasks.fragments.logic.generate import LogicConfig, generate_logic_fragment

        if setting is not None or depth is not None:
            raise ConfigError(f"--{'setting' if setting is not None else 'depth'} is for --fragment monotonicity only")
        config = LogicConfig(fragment=fragment, n_train=n_train, n_dev=n_dev, n_test=n_test, seed=seed)
        stats, done = generate_logic_fragment(config, out, overwrite=overwrite), " (every label confirmed in finite models)"
    else:
        from interp.tasks.fragments.monotonicity.generate import GenerateConfig, generate_fragment

        config = GenerateConfig(setting=setting or "simple", n_train=n_train, n_dev=n_dev, n_test=n_test, seed=seed, depth=depth)
        stats, done = generate_fragment(config, out, overwrite=overwrite), ""
    for split in ("train", "dev", "test"):
        if split in stats:
            s = stats[split]
            lexical = f"; lexical {s['lexical']} {s['lexical_polarity_direction']}" if "lexical" in s else ""
            click.echo(f"{split:6} {s['pairs']:6} pairs from {s['premises']} premises; labels {s['labels']}{lexical}")
    click.echo(f"wrote {out}{done}")


@fragments.command("check")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--models", "per_size", type=int, default=1000, show_default=True, help="monotonicity: sampled models per universe size (1 to 10), besides the exhaustive ones (a logic fragment's models are all searched).")
@click.option("--seed", type=int, default=0, show_default=True)
def fragments_check(data_file, per_size, seed):
    """Check every label of a generated file in finite models; exit 1 if a model refutes one."""
    from interp.core.jsonlines import read_records
    from interp.tasks.fragments.logic.check import check_logic_records
    from interp.tasks.fragments.logic.task import is_logic_file
    from interp.tasks.fragments.monotonicity.semantics import check_records

    if per_size < 1:
        raise ConfigError("--models must be at least 1")
    if not os.path.isfile(data_file):
        raise ConfigError(f"DATA_FILE {data_file}: file not found")
    logic = is_logic_file(data_file)
    required = ("premise_lf", "hypothesis_lf", "label") if logic else ("premise_tree", "hypothesis_tree", "label")
    records = read_records(data_file, "interp fragments generate", required, ("entailment", "neutral", "contradiction"))
    result = check_logic_records(records, str(data_file)) if logic else check_records(records, per_size=per_size, seed=seed)
    for key, c in result["counts"].items():
        click.echo(f"{key:28} confirmed {c['confirmed']:6}  unconfirmed {c['unconfirmed']:4}  refuted {c['refuted']:4}")
    if result["unconfirmed"]:
        click.echo(f"unconfirmed (no model of the kind the label needs was found): {', '.join(result['unconfirmed'][:20])}")
    if result["refuted"]:
        more = f" and {len(result['refuted']) - 50} more" if len(result["refuted"]) > 50 else ""
        click.echo(f"refuted: {', '.join(result['refuted'][:50])}{more}", err=True)
        sys.exit(1)


@fragments.command("compare")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--fragment", type=click.Choice(list(FRAGMENTS)), default=None, help="The released fragment [default: the file's: its logic fragment, or monotonicity_SETTING].")
@click.option("--splits", default="train,dev,test", show_default=True, help="Splits of both to compare.")
@_data(task=False)
def fragments_compare(data_file, fragment, splits, data):
    """Set a generated file beside the released fragment: label balance, determiners, sentence length, vocabulary overlap."""
    from interp.tasks.fragments.data import load_fragment
    from interp.tasks.fragments.generated import read_generated
    from interp.tasks.fragments.logic.task import file_fragment, is_logic_file, read_logic
    from interp.tasks.fragments.monotonicity.compare import compare, format_comparison

    chosen = _splits(splits, "--splits")
    if is_logic_file(data_file):
        generated = read_logic(data_file, chosen)
        fragment = fragment or file_fragment(data_file)
    else:
        generated = read_generated(data_file, chosen)
        fragment = fragment or f"monotonicity_{generated[0].setting}"
    released = load_fragment(fragment, chosen, **data)
    rows = lambda pairs: [{"premise": p.premise, "hypothesis": p.hypothesis, "label": p.label} for p in pairs]  # noqa: E731
    click.echo(format_comparison(compare(rows(generated), rows(released)), ("generated", fragment)))


@main.command()
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL file to write (stats go to <out stem>.stats.json).")
@click.option("--n-train", type=int, default=5000, show_default=True, help="Training examples.")
@click.option("--n-test", type=int, default=1000, show_default=True, help="Test examples.")
@click.option("--n-dev", type=int, default=0, show_default=True, help="Development examples, drawn like the test ones (no pair in both).")
@click.option("--split", default="fair", show_default=True, help="fair (Algorithm 3 at --ratio; test on the rest), random (a pool as large; test on the rest) or iid (train and test from the whole space).")
@click.option("--ratio", type=float, default=0.0, show_default=True, help="Algorithm 3's ratio: 0 the hardest fair split, 1 the whole space.")
@click.option("--vocab-size", type=int, default=100, show_default=True, help="Artificial words per open class.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def mqnli(out, n_train, n_test, n_dev, split, ratio, vocab_size, seed, overwrite):
    """Generate MQNLI pairs labelled by the natural-logic tree, with a fair, random or iid train/test (and dev) split."""
    from interp.tasks.mqnli.generate import MQNLIConfig, format_stats, generate_mqnli

    config = MQNLIConfig(n_train=n_train, n_test=n_test, n_dev=n_dev, split=split, ratio=ratio, vocab_size=vocab_size, seed=seed)
    stats = generate_mqnli(config, out, overwrite=overwrite)
    click.echo(format_stats(stats))
    click.echo(f"wrote {out}")



@main.group()
def monotonicity() -> None:
    """Systematicity of monotonicity (Yanaka et al. 2020): generate a protocol's train and test sets, check their labels."""


@monotonicity.command("generate")
@click.option("--protocol", type=click.Choice(["predicate", "quantifier", "productivity", "localism"]), required=True, help="predicate / quantifier replacements' systematicity, productivity or localism (§2.2).")
@click.option("--step", type=int, default=1, show_default=True, help="The protocol's step i (1-3); for localism the training depth d (3-5).")
@click.option("--n-train", type=int, default=6000, show_default=True, help="Training pairs (split evenly over the protocol's training components).")
@click.option("--n-test", type=int, default=1000, show_default=True, help="Pairs per test set.")
@click.option("--quantifier", default="some", show_default=True, help="predicate: the quantifier q seen with every replacement.")
@click.option("--replacement", default="hyponym", show_default=True, help="predicate: the replacement r seen with every quantifier.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="JSONL to write (statistics beside the paper's Table 1 go to <out stem>.stats.json).")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
def monotonicity_generate(protocol, step, n_train, n_test, quantifier, replacement, seed, out, overwrite):
    """Pairs with depth, quantifiers, replacement, position and polarity, labelled by polarity and replacement direction."""
    from interp.tasks.systematicity.protocols import ProtocolConfig, write_protocol

    config = ProtocolConfig(protocol=protocol, step=step, n_train=n_train, n_test=n_test, quantifier=quantifier, replacement=replacement, seed=seed)
    stats = write_protocol(config, out, overwrite=overwrite)
    for split, s in stats["splits"].items():
        click.echo(f"{split:17} {s['pairs']:6} pairs  labels {s['labels']}  polarity {s['polarity']}  depths {s['depths']}")
    for depth, s in stats["length_by_depth"].items():
        paper = f"{s['paper']:.1f}" if s["paper"] else "-"
        click.echo(f"depth {depth}: mean sentence length {s['mean_words']:.1f} words (paper, Table 1: {paper})")
    click.echo(f"wrote {out}")


@monotonicity.command("check")
@click.argument("data_file", type=click.Path(dir_okay=False))
@click.option("--models", "per_size", type=int, default=500, show_default=True, help="Sampled models per universe size (1 to 10).")
def monotonicity_check(data_file, per_size):
    """Check every label of a generated file in finite models; exit 1 if a model refutes one."""
    from interp.core.jsonlines import read_records
    from interp.tasks.systematicity.semantics import check_records

    if per_size < 1:
        raise ConfigError("--models must be at least 1")
    fields = ("premise_tree", "hypothesis_tree", "label", "split", "depth")
    result = check_records(read_records(data_file, "interp monotonicity generate", fields), per_size)
    for key, c in result["counts"].items():
        click.echo(f"{key:24} confirmed {c['confirmed']:6}  unconfirmed {c['unconfirmed']:4}  refuted {c['refuted']:4}")
    if result["refuted"]:
        click.echo(f"refuted: {', '.join(result['refuted'][:20])}", err=True)
        sys.exit(1)


@main.command("monli-generate")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="MoNLI-format JSONL to write (statistics and WordNet's agreement with MoNLI go to <out stem>.stats.json); read it with --task monli --data-file.")
@click.option("--wordnet-dir", default=None, type=click.Path(file_okay=False), help="WordNet 3.0 database (default: $INTERP_WORDNET_DIR, else /usr/share/wordnet from Debian's wordnet-base).")
@click.option("--corpus", "corpus_splits", default="pmonli,nmonli_train", show_default=True, help="MoNLI splits whose premises and marked nouns are substituted (negated ones give NMoNLI-style pairs).")
@click.option("--per-sentence", type=int, default=2, show_default=True, help="Hypernyms, and as many hyponyms, substituted per sentence.")
@click.option("--max-depth", type=int, default=2, show_default=True, help="Most WordNet steps between the two words.")
@click.option("--min-count", type=int, default=1, show_default=True, help="Rare-lemma filter: least uses in WordNet's sense-tagged corpus (cntlist).")
@click.option("--new-words-only", is_flag=True, help="Only substitutes that are none of MoNLI's substituted words.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@_data(task=False)
def monli_generate(out, wordnet_dir, corpus_splits, per_sentence, max_depth, min_count, new_words_only, seed, overwrite, data):
    """MoNLI-style pairs by WordNet hypernym / hyponym substitution (Geiger et al. 2020, §3), lexrel and label through INFER."""
    from interp.tasks.monli.generate import MonliGenerateConfig, generate_monli

    config = MonliGenerateConfig(per_sentence=per_sentence, max_depth=max_depth, min_count=min_count, new_words_only=new_words_only, seed=seed,
                                 corpus=_splits(corpus_splits, "--corpus"), **data, wordnet_dir=wordnet_dir)
    stats = generate_monli(config, out, overwrite=overwrite)
    agreement = stats["wordnet_agreement"]
    click.echo(f"{stats['pairs']} pairs from {stats['sentences']} sentences ({stats['negated']} negated); labels {stats['labels']}; "
               f"{stats['substitutes']} substitute words, {stats['new_words']} not in MoNLI")
    click.echo(f"WordNet vs MoNLI's lexrel: {agreement['both_in_wordnet']} of {agreement['pairs']} word pairs have both words in WordNet, "
               f"{agreement['related_by_wordnet']} related there; agreement {100 * agreement['agreement_when_related']:.1f}% of those "
               f"({100 * agreement['agreement_of_both']:.1f}% of all with both words); same distance {100 * agreement['same_distance_when_agreeing']:.1f}%; "
               f"null: {100 * agreement['null_related_at_random']:.1f}% of randomly re-paired words are related at all")
    for d in agreement["disagreements"][:10]:
        click.echo(f"  disagrees: {d['w_p']} / {d['w_h']}: MoNLI {d['monli']}, WordNet {d['wordnet']} ({d['example']})")
    click.echo(f"wrote {out} and {os.path.splitext(out)[0]}.stats.json")


if __name__ == "__main__":
    main()
