"""The main job and its page: ``demo`` and ``report``."""

from __future__ import annotations

from pathlib import Path

import click

from interp.cli import options as o
from interp.cli.base import main
from interp.core.errors import ConfigError


@main.command()
@click.option("--out", default="runs/demo", show_default=True, type=click.Path(), help="Run directory.")
@o.model(required=False, default=o.BASE_MODEL, help="Pretrained model to fine-tune.")
@o.settings(
    "fit",
    click.option("--epochs", type=int, default=o.TRAIN.epochs, show_default=True),
    click.option("--lr", type=float, default=o.TRAIN.lr, show_default=True),
    click.option("--warmup-ratio", type=float, default=o.TRAIN.warmup_ratio, show_default=True, help="The share of steps over which the learning rate rises linearly from 0."),
    click.option("--seed", type=int, default=o.TRAIN.seed, show_default=True, help="The fine-tuning seed (new heads, batch order, dropout) of one run."),
    o.TRAIN_BATCH,
    o.TRAIN_BLOCKS,
    o.LORA_RANK,
    o.LORA_ALPHA,
    click.option("--max-examples", "--max-train", "max_examples", type=int, default=None,
                 help="Fine-tune on a seeded subset (drawn with --seed) of this many of each training's examples."),
)
@click.option("--seeds", default=None, help="Run the whole demo once per fine-tuning seed, comma-separated (OUT/seed<S>/), and write tables over seeds; instead of --seed.")
@click.option("--probe-seeds", type=int, default=3, show_default=True, help="How many seeds the probe sweep averages over, in every run (not the fine-tuning's).")
@click.option("--location", default=None, help="The intervention location [default: the task's plan: MoNLI's is read off the probe table, another task's is every variable's aligned roles].")
@o.data()
@o.settings(
    "study",
    click.option("--examples", type=int, default=60, show_default=True, help="m, the seeded sample of m × m interventions per location (a task whose plan samples per split, as MoNLI's, takes its own)."),
    click.option("--per-split", type=int, default=None, help="For a task whose plan samples per split (MoNLI: 150 PMoNLI and 150 NMoNLI-test examples): this many of each instead, all pairs among them."),
    click.option("--das/--no-das", default=True, show_default=True, help="Train DAS for the cliques' variable at their location (OUT/das/)."),
    click.option("--das-pairs", type=int, default=2000, show_default=True, help="DAS's balanced training pairs; half as many held out."),
    click.option("--screen/--no-screen", default=True, show_default=True,
                 help="Screen that variable at every site and role, the top 5 and 5 drawn others confirmed exactly (OUT/screen/)."),
    click.option("--screen-examples", type=int, default=10, show_default=True,
                 help="The screen's examples, bases and sources alike (per split for a task whose plan samples per split)."),
)
@o.run(False, quiet_help="No progress bars.")
def demo(out, model, reading, fit, seeds, probe_seeds, location, data, study, run, progress):
    """The main job: a task's behavioral stage (MoNLI: Table 1), activation cache, probes, interventions, cliques, DAS, the screen and the report."""
    from interp.api.specs import SampleSpec
    from interp.jobs.behavioral import BehavioralConfig
    from interp.jobs.demo import DemoConfig, format_demo, run_demo

    o.model_recipe(model, fit, reading)
    sample = SampleSpec(max_examples=fit.pop("max_examples"), seed=fit["seed"])  # each training's subset, drawn with the fine-tuning seed
    behavioral = BehavioralConfig(out=out, model=model, **reading, data=data, sample=sample, run=run, **fit)
    config = DemoConfig(behavioral, probe_seeds=probe_seeds, location=location, **study)  # study: examples, per_split, das, das_pairs, screen, screen_examples
    if seeds is not None:
        from interp.jobs.demo_seeds import format_demo_seeds, run_demo_seeds

        if click.get_current_context().get_parameter_source("seed") != click.core.ParameterSource.DEFAULT:
            raise ConfigError("give --seed (one run) or --seeds (one run per seed), not both")
        found = run_demo_seeds(config, o.ints(seeds, "--seeds"), progress=progress)
        click.echo("")
        click.echo(format_demo_seeds(found))
        return
    result = run_demo(config, progress=progress)
    click.echo("")
    click.echo(format_demo(result))
    listing = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in Path(out).iterdir() if not p.name.endswith(".manifest.json")))
    click.echo(f"\nwrote {out}/: {listing} in {result.seconds:.0f} s; the report is {out}/report/index.html")


@main.command()
@click.argument("run_dir", type=click.Path())
@click.option("--out", default=None, type=click.Path(file_okay=False), help="Folder for index.html (default: RUN_DIR/report).")
def report(run_dir, out):
    """One self-contained HTML page of a run folder: tables over seeds, behavior, probe and IIA heatmaps, the clickable intervention graph, settings and hashes."""
    from interp.analysis.report import ReportConfig, write_report
    from interp.analysis.report.page import summary

    page, data = write_report(ReportConfig(run_dir=run_dir, out=out))
    click.echo(summary(data))
    click.echo(f"wrote {page} (open it in a browser; it needs no network)")
