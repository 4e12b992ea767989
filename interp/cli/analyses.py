"""Commands that analyse a trained model: ``cache``, ``probe``, ``intervene``, ``das``, ``localize``, ``location-sweep``, ``head-sweep``, ``cliques``."""

from __future__ import annotations

import os

import click

from interp.cli import options as o
from interp.cli.base import main
from interp.core.errors import ConfigError

_LOCATIONS_HELP = ("Comma-separated locations, e.g. blocks.2.hook_resid_post@w_h or SITE@r1+r2 (several tokens at once); components inside a block: "
                   "blocks.2.attn.hook_z.h3@w_h (a head), blocks.2.attn.hook_z, hook_attn_out, hook_resid_mid, hook_mlp_out; all (every residual site "
                   "at every role); aligned (every residual site at the variables' aligned roles); heads or components (every head's hook_z, or every "
                   "attn/resid_mid/mlp output; @ROLE for one role); a site without @ROLE means the variables' aligned roles.")  # fmt: skip
_VARIABLES_HELP = "The task's causal variable(s), comma-separated (monli: lexrel, negated, output)."
_CACHE_HELP = "float32 activation cache to read source vectors from."


@main.command()
@o.model(help="A fine-tuned classifier: checkpoint directory or hub name.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="HDF5 file to write.")
@o.data()
@o.sample("Comma-separated splits of the task [default: all of them].", max_examples=None, max_per_split=False, seed_help=None)
@click.option("--dtype", default="float32", show_default=True, help="float32, or float16 (for probes only).")
@o.run(64, wordpiece="first or last", backend=True)
@click.option("--components", is_flag=True, help="Also cache every block's attn.hook_z (all heads; a head is its slice), hook_attn_out, hook_resid_mid and hook_mlp_out.")
def cache(model, reading, out, data, sample, dtype, run, progress, components):
    """Store every location's vector for every example in HDF5 (resumable)."""
    from interp.jobs.cache import CacheConfig, build_cache

    config = CacheConfig(model=o.classifier(model, reading), out=out, data=data, sample=sample, run=run, dtype=dtype, components=components)
    click.echo(f"wrote {build_cache(config, progress=progress)}")


@main.command()
@click.option("--cache", "cache_path", required=True, type=click.Path(dir_okay=False), help="Activation cache (interp cache).")
@click.option("--model", default=None, help="Check the cache was made with this model's weights.")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for probes.csv and probes.png.")
@click.option("--locations", default="all", show_default=True, help="Comma-separated locations (SITE@r1+r2: their vectors concatenated), all, or aligned (each variable at its own aligned roles, every layer); with a cache made with --components also heads or components (@ROLE for one role) and component sites such as blocks.2.attn.hook_z.h3@w_h.")
@click.option("--targets", default=None, help="Variables the cache keeps values of, and/or label (infer) [default: the task's own (its Task.probe_targets, which the cache records: lexrel,infer on MoNLI), else every variable and label; with aligned: every aligned variable].")
@click.option("--probes", "kinds", default="mlp,linear", show_default=True, help="mlp (4 hidden units) and/or linear.")
@click.option("--folds", type=int, default=5, show_default=True, help="Cross-validation folds: each example is held out once per seed.")
@click.option("--probe-seeds", type=int, default=None, help="How many seeds the sweep averages over (each its own folds, control "
              "labels and probe initialisation; as in interp demo) [default: 3].")
@click.option("--seeds", "count", type=int, default=None, hidden=True)  # --probe-seeds' earlier name
@click.option("--quiet", is_flag=True, help="No progress bar.")
def probe(cache_path, model, out, locations, targets, kinds, folds, probe_seeds, count, quiet):
    """Probe sweep: held-out accuracy and selectivity against both control tasks at every location."""
    from interp.analysis.probes.summary import format_probe_summary
    from interp.core.errors import renamed, warn
    from interp.jobs.probe_sweep import ProbeSweepConfig, run_probe_sweep

    flag = "probe_seeds"  # the sweep's count of seeds is this command's --probe-seeds
    if count is not None:  # every other command's --seeds lists seeds; here it was a count
        if probe_seeds is not None:
            raise ConfigError("give --probe-seeds (how many seeds), not --seeds as well")
        probe_seeds, flag = count, "seeds"
    config = ProbeSweepConfig(cache=cache_path, out=out, model=model, locations=locations, folds=folds, seeds=3 if probe_seeds is None else probe_seeds,
                              targets=o.listed(targets, "--targets") if targets is not None else (), probes=o.listed(kinds, "--probes"))  # fmt: skip
    with renamed(seeds=flag):
        rows = run_probe_sweep(config, progress=not quiet)
    click.echo(f"wrote {out}/probes.csv ({len(rows)} rows) and {out}/probes.png")
    for kind in config.probes:
        click.echo("\n" + format_probe_summary(rows, kind))
    if count is not None:  # after the run, so that bad input still gets its one line
        warn(f"--seeds {count} in interp probe is a count of seeds: it is now --probe-seeds {count} (elsewhere --seeds lists seeds)")


@main.command()
@o.model()
@o.output("HDF5 file to write (with --alignment: a JSON file).", click.Path(dir_okay=False), overwrite_help="Replace an --out that holds other interventions.")
@click.option("--locations", default=None, help=_LOCATIONS_HELP + " Each location is interchanged on its own (a sweep); --alignment writes several together.")
@click.option("--alignment", default=None, help="A joint intervention instead of --locations: VARIABLE=LOCATION,VARIABLE=LOCATION (e.g. "
              "lexrel=blocks.1.hook_resid_post@w_h,negated=blocks.3.hook_resid_post@cls): in each run every variable's location is written "
              "from its own source, --per-base source tuples drawn per base; reported beside each variable alone.")
@o.data()
@o.sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].")
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable(s) to compare with, comma-separated (monli: lexrel, negated, output).")
@o.run(None, o.PAIRS_PER_PASS, wordpiece="first, last, or all (every piece, concatenated; each role must cover as many pieces in every example)", backend=True, compile=True)
@o.settings(
    "engine",
    click.option("--cache", default=None, type=click.Path(dir_okay=False), help=_CACHE_HELP),
    click.option("--pairs", type=click.Choice(["all"]), default=None, help="all: every pair of all of the task's examples (all splits, no --max-examples)."),
    click.option("--unit-size", type=int, default=None,
                 help="Bases per unit of work (what an interruption can lose).  [default: 16 on a CPU, up to 512 on a GPU]"),
    click.option("--precision", default="fp32", show_default=True, help="fp32, tf32 (GPU matmuls) or bf16."),
    click.option("--per-base", type=int, default=16, show_default=True, help="With --alignment: source tuples drawn per base (seeded by --seed)."),
    click.option("--source-ids", default=None, type=click.Path(dir_okay=False), help="With --alignment: name every run instead of drawing them, "
                 "a JSON-lines file of {\"base\": ID, VARIABLE: ID, ...}, one run a line (ids among the examples drawn)."),
)
def intervene(model, reading, output, locations, alignment, data, sample, variable, run, progress, engine):
    """Interchange interventions for every (base, source) pair at each location (resumable; shards across torchrun processes); with --alignment, several locations written together, each from its own source."""
    from interp.analysis.iia import format_summaries, layer_table, summarize_all
    from interp.jobs.intervene import InterventionConfig, run_interventions

    per_base, source_ids = engine.pop("per_base"), engine.pop("source_ids")
    if source_ids is not None and alignment is None:
        raise ConfigError("--source-ids names the sources of a joint intervention: give --alignment")
    if (locations is None) == (alignment is None):
        raise ConfigError("give --locations (each location on its own) or --alignment (several written together), not both or neither")
    if alignment is not None:
        from interp.jobs.joint import JointConfig, format_joint, parse_alignment, run_joint

        config = JointConfig(model=o.classifier(model, reading), alignment=parse_alignment(alignment), data=data, sample=sample, run=run,
                             per_base=per_base, source_ids=source_ids, **output)  # fmt: skip
        click.echo(format_joint(*run_joint(config)))
        click.echo(f"wrote {output['out']}")
        return

    config = InterventionConfig(model=o.classifier(model, reading), locations=locations, variables=o.listed(variable, "--variable"), data=data,
                                sample=sample, run=run, **output, **engine)  # fmt: skip
    path = run_interventions(config, progress=progress)
    if os.environ.get("RANK", "0") == "0":  # under torchrun, one summary
        click.echo(f"wrote {path}")
        aligned = locations.strip() == "aligned"
        summaries = summarize_all(path, aligned_only=aligned, logit_shift=True)
        click.echo(format_summaries(summaries))
        if aligned:
            click.echo("\nIIA on causal pairs by layer at each variable's aligned location (larger null in brackets):")
            click.echo(layer_table(summaries))


@main.command()
@o.model()
@o.output("Directory for das.csv, das_summary.csv, das.png and interventions/ (required unless --load).", click.Path(file_okay=False), required=False,
          overwrite_help="Replace an --out that holds a DAS run with other settings.")  # fmt: skip
@click.option("--locations", "--location", "locations", default="aligned", show_default=True, help="Comma-separated locations (SITE@r1+r2), all (every site at every role), or aligned (every site at the variables' aligned roles).")
@o.data()
@o.settings(
    "alignment",
    click.option("--variable", default="lexrel", show_default=True, help=_VARIABLES_HELP),
    click.option("--subspace", default="64", show_default=True, help="Comma-separated sizes k of the aligned subspace (at most the location's width), for each kind of a chosen size."),
    click.option("--kind", default="rotated", show_default=True, help="Comma-separated kinds: rotated (an orthogonal width x width rotation, DAS), lowrank (an orthonormal width x k basis), boundless (a rotation whose subspace size is learned; takes no --subspace), dbm (a learned mask over the neurons, MIB's DBM), dbm-pca and dbm-sae (a mask over a PCA basis or a TopK SAE fitted on the training examples); the DBM kinds learn their size and train best at --lr 1e-2."),
)
@o.sample("Comma-separated splits of the task [default: the task's own set].")
@o.settings(
    "training",
    click.option("--seeds", default="0", show_default=True, help="Comma-separated seeds: each its own example split, pairs, initial rotation and batch order."),
    click.option("--train-pairs", type=int, default=2000, show_default=True, help="Balanced counterfactual pairs among the training examples."),
    click.option("--test-pairs", type=int, default=1000, show_default=True, help="Balanced counterfactual pairs among the held-out examples."),
    click.option("--test-share", type=float, default=0.2, show_default=True, help="Share of the examples held out (never seen in training, as base or source)."),
    click.option("--epochs", type=int, default=2, show_default=True),
    click.option("--lr", type=float, default=1e-3, show_default=True),
)
@o.run(64, "Pairs per training step.", wordpiece="first or last")
@click.option("--load", "load_path", default=None, type=click.Path(dir_okay=False), help="Score this saved intervention (its .safetensors or .json) on the held-out pairs of these settings instead of training; its variable and location come from the file.")
@o.settings(
    "joint",
    click.option("--alignment", "joint_alignment", default=None, help="A joint alignment, VARIABLE=LOCATION,VARIABLE=LOCATION: one subspace per variable (the first --subspace and --kind, the first seed), trained together on runs that write each from its own source; --variable and --locations are not read. Writes joint_das.json and interventions/."),
    click.option("--per-base", type=int, default=16, show_default=True, help="With --alignment: source tuples drawn per base, in training and held out."),
)
def das(model, reading, output, locations, data, alignment, sample, training, run, progress, load_path, joint):
    """Distributed alignment search: train a rotated subspace per location and variable (model frozen), score it on held-out pairs beside vanilla interchange and the best localist block (resumable); with --alignment, one subspace per variable trained together."""
    from interp.analysis.das_figure import format_das
    from interp.jobs.das import DasConfig, run_das, score_saved

    out = output["out"]
    if out is None and load_path is None:
        raise ConfigError("--out is required (a directory for the results), unless --load scores a saved intervention")
    if joint["joint_alignment"] is not None:
        from interp.jobs.joint import parse_alignment
        from interp.jobs.joint_das import JointDasConfig, format_joint_das, run_joint_das

        if load_path is not None:
            raise ConfigError("--alignment trains a joint alignment; --load scores one saved intervention: give one of them")
        config = JointDasConfig(model=o.classifier(model, reading), out=out, overwrite=output["overwrite"], alignment=parse_alignment(joint["joint_alignment"]), data=data,
                                sample=sample, run=run, k=o.ints(alignment["subspace"], "--subspace")[0], kind=o.listed(alignment["kind"], "--kind")[0],
                                per_base=joint["per_base"], epochs=training["epochs"], lr=training["lr"], batch_size=run.batch_size or 64,
                                seed=o.ints(training["seeds"], "--seeds")[0], test_share=training["test_share"])  # fmt: skip
        click.echo(format_joint_das(run_joint_das(config, progress=progress)))
        click.echo(f"wrote {out}/joint_das.json, {out}/interventions/")
        return
    config = DasConfig(
        model=o.classifier(model, reading), out=out or "", overwrite=output["overwrite"], locations=locations, data=data, sample=sample, run=run,
        variables=o.listed(alignment["variable"], "--variable"), subspaces=o.listed(alignment["subspace"], "--subspace"), kinds=o.listed(alignment["kind"], "--kind"),
        **{**training, "seeds": o.ints(training["seeds"], "--seeds")},
    )  # fmt: skip
    if load_path is not None:
        score = score_saved(config, load_path)
        click.echo(f"{score['variable']} at {score['location']}, k = {score['k']}, seed {score['seed']}: held-out IIA "
                   f"{score['saved_iia']:.3f} (vanilla {score['vanilla_iia']:.3f}, chance {score['saved_chance']:.3f}; "
                   f"stays base {score['saved_stays_base']:.3f}, copies source {score['saved_copies_source']:.3f}) on {score['saved_pairs']} pairs; "
                   f"95% interval of the IIA [{score['saved_iia_low']:.3f}, {score['saved_iia_high']:.3f}] ({score['interval']})")  # fmt: skip
        return
    rows = run_das(config, progress=progress)
    click.echo(f"wrote {out}/das.csv, das_summary.csv, das.png ({len(rows)} units; held-out IIA, mean [95% interval] over seeds)")
    click.echo(format_das(rows))


@main.command()
@o.model(help="The model to localize variables in: a packaged decoder (smollm2-135m, gemma3-270m), a checkpoint directory or hub name.")
@o.output("Directory for localize.csv, mib.csv, localize.png and localize.parts/ (resumable).", click.Path(file_okay=False),
          overwrite_help="Replace an --out that holds a localization with other settings.")  # fmt: skip
@o.data()
@o.settings(
    "units",
    click.option("--featurizers", default="full,das,dbm", show_default=True, help="Comma-separated: full (the whole vector), das (a rotation's --k dimensions), dbm (a learned mask over the neurons), dbm-pca, dbm-sae (a mask over a PCA basis or an SAE fitted on the training examples)."),
    click.option("--variable", default=None, help="Comma-separated variables of the task's causal model [default: every variable it aligns; ioi: output_position, output_token; city-attributes: Country, Continent]."),
    click.option("--blocks", default="all", show_default=True, help="all, or comma-separated blocks and ranges (14,20,26; 0-29; 0-29:2 every other): the residual stream after each."),
    click.option("--positions", default=None, help="Comma-separated token roles [default: every role the task has; cls is a decoder's last token]."),
    click.option("--control-blocks", default="same", show_default=True, help="Blocks where the same featurizers are trained and scored on the model with re-initialised weights: same (every block of --blocks), none, or a list."),
    click.option("--sites", default="residual", show_default=True, help="Comma-separated, at each block: residual (the stream after it), heads (each attention head's output, attn.hook_z.h<H>, a unit per head), attn (all heads' outputs together)."),
)
@o.settings(
    "training",
    click.option("--splits", default=None, help="Comma-separated splits the prompts come from [default: every split of the task]."),
    click.option("--max-examples", type=int, default=400, show_default=True, help="At most this many of the prompts the model answers right (MIB's filter), seeded."),
    click.option("--train-pairs", type=int, default=256, show_default=True),
    click.option("--test-pairs", type=int, default=200, show_default=True),
    click.option("--epochs", type=int, default=2, show_default=True),
    click.option("--lr", type=float, default=1e-2, show_default=True),
    click.option("--k", type=int, default=16, show_default=True, help="DAS's dimensions (MIB: 16 for a pointer-like variable, half the width for a token-like one)."),
    click.option("--seed", type=int, default=0, show_default=True, help="Seed of the examples drawn, the pairs, the featurizers' initial parameters and the re-initialised weights."),
)
@o.run(64, "Pairs per training step.", wordpiece="first or last (MIB's positions are a word's last token)", wordpiece_default="last")
@click.option("--export", default=None, type=click.Path(file_okay=False), help="A new folder to write the model's units into in MIB's submission layout (the full vector, DAS and DBM over the neurons; FEATURIZER/TASK_MODEL_VARIABLE/ResidualStream(Layer-L,Token-P)_featurizer, _inverse_featurizer, _indices).")
def localize(model, reading, output, data, units, training, run, progress, export):
    """MIB's featurizers at every block and position: each trained and scored on held-out pairs, beside its untrained self, the nulls and the same featurizer on the re-initialised model; MIB's table with intervals (resumable)."""
    from interp.jobs.localize import LocalizeConfig, run_localize

    config = LocalizeConfig(
        model=o.classifier(model, reading), out=output["out"], overwrite=output["overwrite"], export=export, data=data, run=run,
        featurizers=o.listed(units["featurizers"], "--featurizers"), variables=o.listed(units["variable"], "--variable") if units["variable"] else (),
        blocks=units["blocks"], positions=o.listed(units["positions"], "--positions") if units["positions"] else (), control_blocks=units["control_blocks"],
        sites=o.listed(units["sites"], "--sites"), **{**training, "splits": o.listed(training["splits"], "--splits") if training["splits"] else ()},
    )  # fmt: skip
    found = run_localize(config, progress=progress)
    click.echo(found.format())
    click.echo(f"wrote {found.out}/localize.csv, mib.csv, localize.png ({len(found.rows)} units)")


@main.command("location-sweep")
@o.model()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for sweep.h5, locations.csv, locations.png.")
@click.option("--examples", type=int, default=100, show_default=True, help="m: a seeded sample of m examples, m x m pairs per location.")
@o.data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable to interchange.")
@o.sample("Comma-separated splits of the task [default: the task's own set; monli: nmonli_test].", max_examples=None, max_per_split=False, seed_help="Seed of the sample.")
@click.option("--locations", default="all", show_default=True, help="Comma-separated locations, all, or aligned (every site at the variable's aligned roles).")
@click.option("--cache", "cache_path", default=None, type=click.Path(dir_okay=False), help=_CACHE_HELP)
@o.run(None, o.PAIRS_PER_PASS, quiet_help="No progress bars.", wordpiece="first, last, or all", compile=True)
def location_sweep(model, reading, out, examples, data, variable, sample, locations, cache_path, run, progress):
    """Rank every location by INFER's structure on a sample: agreement on causal pairs, largest clique (Appendix A.3)."""
    from interp.jobs.location_sweep import LocationSweepConfig, format_ranking, run_location_sweep

    config = LocationSweepConfig(model=o.classifier(model, reading), out=out, examples=examples, variable=variable, locations=locations,
                                 data=data, sample=sample, run=run, cache=cache_path)  # fmt: skip
    rows = run_location_sweep(config, progress=progress)
    click.echo(format_ranking(rows))
    click.echo(f"wrote {out}/sweep.h5, {out}/locations.csv, {out}/locations.png")


@main.command()
@o.model()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for screen.csv and screen.json.")
@o.data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable to interchange.")
@click.option("--locations", default="all", show_default=True, help="all (every residual, component and head location at every role), heads, components, or comma-separated locations.")
@click.option("--confirm", type=int, default=5, show_default=True, help="K: the exact interchange at the K best-estimated locations and at K drawn at random from the rest.")
@click.option("--qk-fix/--no-qk-fix", default=True, show_default=True, help="AtP*'s QK fix: at residual sites, the attention they feed recomputed exactly per pair.")
@click.option("--graddrop/--no-graddrop", default=True, show_default=True, help="AtP*'s GradDrop: each estimate's robustness with one later layer's gradient dropped; cancelling sites flagged.")
@o.sample("Comma-separated splits the sample draws from.", "pmonli,nmonli_test", max_examples=None, max_per_split=20, seed_help="Seed of the sample and of the K drawn.")
@o.run(None, o.PAIRS_PER_PASS, quiet_help="No progress bars.", compile=True)
def screen(model, reading, out, data, variable, locations, confirm, qk_fix, graddrop, sample, run, progress):
    """Estimate a variable's IIA at every location by attribution patching (AtP*), then confirm the top K and K at random exactly (resumable), with their agreement."""
    from interp.jobs.screen import ScreenConfig, format_screen, run_screen

    config = ScreenConfig(model=o.classifier(model, reading), out=out, variable=variable, locations=locations, confirm=confirm,
                          seed=sample.seed, qk_fix=qk_fix, graddrop=graddrop, data=data, sample=sample, run=run)  # fmt: skip
    click.echo(format_screen(run_screen(config, progress=progress)))
    click.echo(f"wrote {out}/screen.csv, {out}/screen.json" + (f", {out}/screen.h5" if confirm else ""))


@main.command("head-sweep")
@o.model()
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Directory for heads.h5, heads.csv, heads.png.")
@o.data()
@click.option("--variable", default="lexrel", show_default=True, help="The task's causal variable to interchange.")
@click.option("--roles", default="w_h,cls", show_default=True, help="Token roles to intervene at, comma-separated.")
@o.sample("Comma-separated splits the mixed sample draws from.", "pmonli,nmonli_test", max_examples=None, max_per_split=50, seed_help="Seed of the sample.")
@o.run(None, o.PAIRS_PER_PASS, quiet_help="No progress bars.", backend=True, compile=True)
def head_sweep(model, reading, out, data, variable, roles, sample, run, progress):
    """IIA of a variable at every head's hook_z, every attention and MLP output, and the residual stream (a heatmap layer × head)."""
    from interp.jobs.head_sweep import HeadSweepConfig, format_heads, run_head_sweep

    config = HeadSweepConfig(model=o.classifier(model, reading), out=out, variable=variable, roles=o.listed(roles, "--roles"), data=data,
                             sample=sample, run=run)  # fmt: skip
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
    from interp.jobs.cliques import GRAPH_FORMATS, CliqueConfig, format_cliques, parse_alphas, run_cliques

    config = CliqueConfig(interventions=path, out=out, location=location, variable=variable, alphas=parse_alphas(alphas), model=model,
                          min_size=min_size, formats=o.listed(formats, "--format"))  # fmt: skip
    report = run_cliques(config)
    click.echo(format_cliques(report))
    graphs = ", ".join(f"{out}/{GRAPH_FORMATS[f]}" for f in config.formats)
    click.echo(f"\nwrote {out}/cliques.json, {graphs}, {out}/clique.png")
