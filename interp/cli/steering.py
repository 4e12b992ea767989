"""Commands that write one vector at a location of every example (``ablate``, ``steer``), and path patching (``path-sweep``)."""

from __future__ import annotations

import click

from interp.cli import options as o
from interp.cli.base import main

_LOCATION_HELP = "One residual-stream location, e.g. blocks.2.hook_resid_post@w_h (a decoder's reading position is @cls or @last)."
_OUT_HELP = "A folder for {name}.csv (with its manifest) [default: nothing written]."


@main.command()
@o.model()
@click.option("--location", required=True, help=_LOCATION_HELP)
@click.option("--kind", default="zero", show_default=True, help="zero (the vector set to 0) or mean (its mean over the reference set).")
@click.option("--reference-splits", default=None, help="Mean ablation's reference set: comma-separated splits [default: the ablated examples themselves].")
@click.option("--out", default=None, type=click.Path(file_okay=False), help=_OUT_HELP.format(name="ablation"))
@o.data()
@o.sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].", seed_help="Seed of the subsets and of the bootstrap.")
@o.run(None, "Examples per forward pass.", quiet_help="(no progress bar is shown)")
def ablate(model, reading, location, kind, reference_splits, out, data, sample, run, progress):
    """Zero or mean ablation at one location: per split, accuracy intact and ablated, the change and the labels changed, each with its interval."""
    from interp.api.specs import SampleSpec
    from interp.jobs.steering import AblationConfig, format_effect, run_ablation

    reference = None if reference_splits is None else SampleSpec(o.listed(reference_splits, "--reference-splits"))
    found = run_ablation(AblationConfig(model=o.classifier(model, reading), location=location, kind=kind, data=data, sample=sample,
                                        reference=reference, run=run, seed=sample.seed, out=out))  # fmt: skip
    click.echo(format_effect(found))
    if out is not None:
        click.echo(f"wrote {out}/ablation.csv")


@main.command()
@o.model()
@click.option("--location", required=True, help=_LOCATION_HELP)
@click.option("--variable", default="lexrel", show_default=True, help="The causal variable whose class means give the direction.")
@click.option("--to", "to", required=True, help="The variable's value the direction points to (monli lexrel: forward or reverse; negated: True or False).")
@click.option("--scales", default="1,2,4", show_default=True, help="Comma-separated multiples of the direction added.")
@o.settings(
    "reference",
    click.option("--reference-splits", default=None, help="The examples the direction is computed on: comma-separated splits [default: the task's training splits]."),
    click.option("--max-reference", type=int, default=None, help="Compute the direction on a seeded subset of this many reference examples [default: all of them]."),
)
@click.option("--out", default=None, type=click.Path(file_okay=False), help=_OUT_HELP.format(name="steering"))
@o.data()
@o.sample("Comma-separated splits steered [default: the task's own set; monli: nmonli_test].", seed_help="Seed of the subsets, the random direction and the bootstrap.")
@o.run(None, "Examples per forward pass.", quiet_help="(no progress bar is shown)")
def steer(model, reading, location, variable, to, scales, reference, out, data, sample, run, progress):
    """Add a variable's difference of class means at one location, at each scale, beside a random direction of the same norm: labels changed and moved to the causal model's counterfactual."""
    from interp.api.specs import SampleSpec
    from interp.jobs.steering import SteeringConfig, format_effect, run_steering

    splits, most = reference["reference_splits"], reference["max_reference"]
    reference = None if splits is None and most is None else \
        SampleSpec(o.listed(splits, "--reference-splits") if splits else (), max_examples=most, seed=sample.seed)  # fmt: skip
    found = run_steering(SteeringConfig(model=o.classifier(model, reading), location=location, variable=variable, to=to,
                                        scales=o.numbers(scales, "--scales", float), data=data, sample=sample, reference=reference,
                                        run=run, seed=sample.seed, out=out))  # fmt: skip
    click.echo(format_effect(found))
    if out is not None:
        click.echo(f"wrote {out}/steering.csv")


@main.command("path-sweep")
@o.model()
@click.option("--senders", default="heads@cls", show_default=True, help="Components to send from: heads@ROLE (every head), components@ROLE, or comma-separated component locations (blocks.2.attn.hook_z.h3@w_h, blocks.2.hook_mlp_out@cls).")
@click.option("--receiver", default=None, help="A later head's query, key or value input to patch through (blocks.5.attn.hook_q.h2@w_h; hook_k, hook_v; "
              "without .hH every head's), at the senders' tokens [default: the readout].")
@o.output("A folder for paths.csv [default: nothing written].", click.Path(file_okay=False), required=False, overwrite_help="Replace the folder's paths.csv.")
@o.data()
@o.sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].", seed_help="Seed of the subsets and of the bootstrap.")
@o.run(None, "Pairs per forward pass.", quiet_help="(no progress bar is shown)")
def path_sweep(model, reading, senders, receiver, output, data, sample, run, progress):
    """Path patching to the readout (or through one later head's query, key or value input): each sender's direct effect on the label (through the residual stream alone, every head and MLP between held at the base run) beside its total effect, each with its interval."""
    from interp.jobs.paths import PathSweepConfig, format_path_sweep, run_path_sweep

    frame = run_path_sweep(PathSweepConfig(model=o.classifier(model, reading), senders=senders, receiver=receiver, data=data, sample=sample,
                                           run=run, seed=sample.seed, **output))  # fmt: skip
    click.echo(format_path_sweep(frame))
    if output["out"] is not None:
        click.echo(f"wrote {output['out']}/paths.csv")
