"""The `interp` command line: each command parses, builds a config, makes one library call, formats.

Errors from the library (:class:`interp.errors.InterpError`) become one line
on stderr and exit code 2, as do click's usage errors.
"""

from __future__ import annotations

import json
import sys

import click

from interp.errors import ConfigError, InterpError
from interp.models.training import TrainConfig

_D = TrainConfig()  # the CLI's defaults are the library's

_SPLITS_HELP = "comma-separated MoNLI splits: pmonli, nmonli_train, nmonli_test"


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InterpError as exc:
            click.echo(f"interp: error: {exc}", err=True)
            ctx.exit(2)
        except KeyboardInterrupt:
            click.echo("\ninterp: interrupted; run the same command again to resume", err=True)
            ctx.exit(130)


def _splits(value: str, option: str) -> tuple[str, ...]:
    names = tuple(s.strip() for s in value.split(",") if s.strip())
    if not names and option != "--eval-splits":
        raise ConfigError(f"{option} names no split ({_SPLITS_HELP})")
    return names


def _data_options(function):
    function = click.option(
        "--skip-checksums", is_flag=True, help="Do not compare file SHA-256 sums with the released MoNLI."
    )(function)
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False),
        default=None,
        help="MoNLI directory (default: $INTERP_MONLI_DIR).",
    )(function)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="interp")
def main() -> None:
    """Probes, interchange interventions and causal models for BERT-family NLI models."""


@main.command()
@click.option("--model", default=_D.model, show_default=True, help="'minilm', a checkpoint directory, or a hub name.")
@click.option("--splits", default=",".join(_D.splits), show_default=True, help=_SPLITS_HELP)
@click.option("--epochs", type=int, default=_D.epochs, show_default=True)
@click.option("--lr", type=float, default=_D.lr, show_default=True)
@click.option("--batch-size", type=int, default=_D.batch_size, show_default=True)
@click.option("--seed", type=int, default=_D.seed, show_default=True)
@click.option("--max-examples", type=int, default=None, help="Train on a seeded random subset of this size.")
@click.option(
    "--eval-splits", default=",".join(_D.eval_splits), show_default=True, help="Splits scored after training."
)
@click.option("--out", required=True, type=click.Path(), help="Checkpoint directory to create.")
@click.option("--overwrite", is_flag=True, help="Replace an existing --out.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@_data_options
def train(model, splits, epochs, lr, batch_size, seed, max_examples, eval_splits, out, overwrite, quiet, data_dir, skip_checksums):
    """Fine-tune a 2-label MoNLI classifier and save it as safetensors."""
    from interp.models import train as train_model

    config = TrainConfig(
        model=model,
        splits=_splits(splits, "--splits"),
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        seed=seed,
        max_examples=max_examples,
        eval_splits=_splits(eval_splits, "--eval-splits"),
        data_dir=data_dir,
        verify_checksums=not skip_checksums,
    )
    result = train_model(config, out, progress=not quiet, overwrite=overwrite)
    click.echo(f"saved {result.out_dir} ({result.n_train} training examples, {result.seconds:.0f} s)")
    for split, m in result.metrics.items():
        click.echo(f"{split:14} accuracy {100 * m['accuracy']:5.1f}%  ({m['correct']}/{m['n']})")


@main.command()
@click.option("--model", required=True, help="A fine-tuned classifier: checkpoint directory or hub name.")
@click.option("--splits", default=",".join(_D.eval_splits), show_default=True, help=_SPLITS_HELP)
@click.option("--batch-size", type=int, default=128, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@_data_options
def evaluate(model, splits, batch_size, as_json, data_dir, skip_checksums):
    """Accuracy of a fine-tuned classifier on MoNLI splits."""
    from interp.data import load_monli
    from interp.models import evaluate as evaluate_model
    from interp.models import load_classifier

    if batch_size < 1:
        raise ConfigError("--batch-size must be at least 1")
    examples = load_monli(data_dir, _splits(splits, "--splits"), verify_checksums=not skip_checksums)
    classifier, tokenizer = load_classifier(model, require_head=True)
    metrics = evaluate_model(classifier, tokenizer, examples, batch_size=batch_size, progress=sys.stderr.isatty())
    if as_json:
        click.echo(json.dumps(metrics, indent=2))
        return
    for split, m in metrics.items():
        click.echo(f"{split:14} accuracy {100 * m['accuracy']:5.1f}%  ({m['correct']}/{m['n']})")


@main.command()
@click.option("--out", default="runs/demo", show_default=True, type=click.Path(), help="Run directory.")
@click.option("--model", default=_D.model, show_default=True, help="Pretrained model to fine-tune.")
@click.option("--epochs", type=int, default=_D.epochs, show_default=True)
@click.option("--lr", type=float, default=_D.lr, show_default=True)
@click.option("--batch-size", type=int, default=_D.batch_size, show_default=True)
@click.option("--seed", type=int, default=_D.seed, show_default=True)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@_data_options
def demo(out, model, epochs, lr, batch_size, seed, quiet, data_dir, skip_checksums):
    """The main job: Table 1's behavioral results on real MoNLI (see README)."""
    from interp.behavioral import BehavioralConfig, format_table, run_behavioral

    config = BehavioralConfig(
        out_dir=out,
        model=model,
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        seed=seed,
        data_dir=data_dir,
        verify_checksums=not skip_checksums,
    )
    result = run_behavioral(config, progress=not quiet)
    click.echo("")
    click.echo(format_table(result))
    click.echo(f"\nwrote {out}/metrics.json, {out}/model/, {out}/challenge_model/ in {result.seconds:.0f} s")


if __name__ == "__main__":
    main()
