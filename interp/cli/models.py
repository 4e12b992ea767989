"""Commands that train and score models: ``train``, ``evaluate``, ``inoculate``, ``inoculation-figure``, ``convert-checkpoint``."""

from __future__ import annotations

import sys

import click

from interp.cli import options as o
from interp.core.errors import ConfigError
from interp.cli.base import main


@main.command()
@o.model(required=False, default=o.BASE_MODEL, help="'minilm', a checkpoint directory, or a hub name.")
@o.data()
@o.sample(f"{o.SPLITS_HELP} [default: the task's training splits: pmonli,nmonli_train for MoNLI; with --data-file: train; another task: its train split, else all]",
          max_examples="Train on a seeded random subset of this size.", max_per_split=False, seed_help="Seed of the subset, the initial head and the batch order.")  # fmt: skip
@o.settings(
    "fit",
    click.option("--epochs", type=int, default=o.TRAIN.epochs, show_default=True),
    click.option("--lr", type=float, default=o.TRAIN.lr, show_default=True),
    click.option("--warmup-ratio", type=float, default=o.TRAIN.warmup_ratio, show_default=True, help="The share of steps over which the learning rate rises linearly from 0 (then it falls linearly to 0)."),
    o.TRAIN_BATCH,
    o.TRAIN_BLOCKS,
    o.LORA_RANK,
    o.LORA_ALPHA,
    click.option("--precision", default=o.TRAIN.precision, show_default=True, help="fp32, or bf16: each forward pass under autocast in bfloat16 (the weights and optimizer stay fp32)."),
    click.option("--batching", default=o.TRAIN.batching, show_default=True, help="length: batches of examples of similar length (less padding); shuffle: each batch a seeded random draw."),
    click.option("--max-grad-norm", type=float, default=None, help="Clip the gradient's global L2 norm to this before each step [default: no clipping]."),
    click.option("--head-epochs", type=int, default=o.TRAIN.head_epochs, show_default=True, help="Epochs that train the head alone, the encoder frozen, before fine-tuning (linear probing then fine-tuning)."),
    click.option("--head-lr", type=float, default=o.TRAIN.head_lr, show_default=True, help="The learning rate of --head-epochs (AdamW, constant)."),
    click.option("--reinit-pooler", is_flag=True, help="Draw the pretrained pooler (the dense layer under the head) afresh before training, "
                 "seeded by --seed (Zhang et al. 2021); for BERT and DeBERTa-v2 checkpoints."),
    click.option("--init", default="pretrained", show_default=True, help="pretrained, or random: the same architecture and tokenizer with every weight drawn from --seed (MoNLI Table 1's no-pretraining row)."),
    o.INPUT,
)
@o.run(False, quiet_help="No progress bars.")
@o.settings(
    "scoring",
    click.option("--eval-splits", default=None, help="Splits scored after training [default: all; with --data-file: train,test]."),
    click.option("--curve", is_flag=True, help="Also score --eval-splits after every epoch (the learning curve, in training.json)."),
    click.option("--curve-every", type=int, default=None, help="Also score --eval-splits before the first step and every N steps: the "
                 "learning curve, curve.csv beside the checkpoint (steps, seconds a step, each split's accuracy and Wilson interval); "
                 "the run can be resumed from its last point."),
    o.FOLD_LABELS,
)
@o.settings(
    "iit",
    click.option("--iit", default=None, help="Interchange intervention training: VARIABLE@LOCATION (e.g. lexrel@blocks.2.hook_resid_post@w_h), or several comma-separated, each variable at its own location and from its own source in one run (a joint alignment); adds the cross-entropy of the intervened output against the causal model's counterfactual."),
    click.option("--iit-weight", type=float, default=1.0, show_default=True, help="Weight of the IIT loss."),
    click.option("--iit-subspace", type=int, default=None, help="Train only a k-dimensional rotated subspace of the location to carry the variable (a fixed seeded rotation)."),
)
@o.settings(
    "node",
    click.option("--node-loss", default=None, help="Also train a head per causal-model variable (comma-separated, or all) to predict its value, "
                 "a cross-entropy added to the label's (Geiger et al. 2019, Figure 4: MQNLI's tree nodes)."),
    click.option("--node-weight", type=float, default=1.0, show_default=True, help="Weight of the node loss."),
    click.option("--node-read", default="cls", show_default=True, help="Where the node heads read the last block: cls, or tokens (each variable's aligned tokens)."),
)
@o.settings(
    "repeat",
    click.option("--seeds", default=None, help="Comma-separated fine-tuning seeds (instead of --seed): one checkpoint per seed under --out "
                 "(seed<S>/, each resumable), then seeds.csv and seeds_summary.csv: every seed's accuracy, the mean and 95% t interval over seeds."),
    click.option("--workers", type=int, default=1, show_default=True, help="With --seeds: seeds trained at once, each in its own process on the "
                 "same device (on a GPU a small model leaves room for several; on a CPU they share the cores)."),
)
@o.output("Checkpoint directory to create (with --seeds: the folder of the seeds' checkpoints).", click.Path())
def train(model, reading, data, sample, fit, run, progress, scoring, iit, node, repeat, output):
    """Fine-tune a 2-label MoNLI (or, with --data-file, 3-label MQNLI) classifier and save it as safetensors; with --iit, by interchange intervention training.

    A pretrained decoder trains by one of these routes; seconds a step of 16 PMoNLI + NMoNLI-train pairs for
    SmolLM2-135M, measured through this command on a 2-core CPU (docs/results/pretrained-decoders.md):

    \b
      every weight (other models' default; --lora-rank 0)   3.57 s
      --train-blocks 30: every block, the embeddings frozen  2.97 s
      --train-blocks 2: the top 2 blocks, final norm, head   0.88 s
      --lora-rank 8: LoRA adapters on every block, head      2.61 s
      --label-words 'entailment= Yes,neutral= No': the LM head's two rows, no new head; with --lora-rank 8 2.32 s
      smollm2-135m's default: --lora-rank 8 --lr 3e-4 --epochs 2 --label-words 'entailment= Yes,neutral= No'
    """
    from interp.jobs.iit import train_iit
    from interp.jobs.train import TrainConfig, train as train_model
    from interp.analysis.chance import accuracy_lines

    eval_splits = scoring.pop("eval_splits")
    o.model_recipe(model, fit, reading)
    config = TrainConfig(
        model=model, **reading, data=data, sample=sample, seed=sample.seed, run=run, **{**fit, "input": fit["input"] or "pair"},
        **scoring, **iit, **node, eval_splits=o.listed(eval_splits, "--eval-splits") if eval_splits is not None else None,
        out=output["out"], overwrite=output["overwrite"],
    )  # fmt: skip
    trainer = train_iit if iit["iit"] else train_model
    seeds, workers = repeat["seeds"], repeat["workers"]
    if seeds is not None and click.get_current_context().get_parameter_source("seed") != click.core.ParameterSource.DEFAULT:
        raise ConfigError("give --seed (one run) or --seeds (one run per seed), not both")
    if seeds is not None:
        from interp.jobs.seeds import format_seeds, train_seeds

        click.echo(format_seeds(train_seeds(config, seeds=o.ints(seeds, "--seeds"), progress=progress, trainer=trainer, workers=workers)))
        return
    if workers != 1:
        raise ConfigError("--workers trains several --seeds at once: give --seeds too")
    result = trainer(config, progress=progress)
    click.echo(f"saved {result.out_dir} ({result.n_train} training examples, {result.seconds:.0f} s)")
    click.echo("\n".join(accuracy_lines(result.metrics)))


@main.command()
@o.model(help="A fine-tuned classifier: checkpoint directory or hub name.")
@o.data()
@o.sample(f"{o.SPLITS_HELP} [default: all; with --data-file: train,test; another task: all of its]",
          max_examples="Score a seeded random subset of this many examples.", seed_help="Seed of the --max-examples and --max-per-split subsets.")  # fmt: skip
@o.run(128, "Examples per forward pass.")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@click.option("--show", is_flag=True, help="Also each example's answer and every label's logit (a causal LM's label words'), a line each "
              "(a wrong answer marked with an asterisk); with --json, under each split's \"answers\".")
@o.INPUT
@o.FOLD_LABELS
@o.settings(
    "prompt",
    click.option("--shots", type=int, default=0, show_default=True, help="With --label-words: put this many solved training pairs, "
                 "each followed by its label's word, before every pair (few-shot); they are left out of the scored examples."),
    click.option("--shot-seed", type=int, default=0, show_default=True, help="Seed of the --shots draw."),
    click.option("--chat", is_flag=True, help="With --label-words: ask in the model's own chat template (a user turn per pair, "
                 "an assistant turn per answer); the label words follow the assistant's opening, without their leading space."),
)
def evaluate(model, reading, data, sample, run, progress, as_json, show, input, fold_labels, prompt):
    """Accuracy of a fine-tuned classifier on a task's splits, gold labels read through its label mapping (--task fragments: all eight)."""
    from interp.jobs.evaluate import EvaluateConfig, run_evaluate

    config = EvaluateConfig(model=model, data=data, sample=sample, run=run, **reading, input=input, fold_labels=fold_labels, show=show, **prompt)
    click.echo(run_evaluate(config, progress=progress and sys.stderr.isatty()).format(as_json))


@main.command()
@o.model(help="The model trained on the original task (a checkpoint with its head).")
@click.option("--original", required=True, help="TASK (its dev and test splits) or TASK:SPLIT (SPLIT halved by example id into dev and test), e.g. monli:pmonli_heldout.")
@click.option("--challenge", required=True, help="TASK (k examples from its train split) or TASK:SPLIT, e.g. monli:nmonli_train or fragment:negation.")
@click.option("--challenge-eval", default=None, help="A challenge split to halve into dev and test (default: the challenge task's dev and test splits), e.g. nmonli_test.")
@o.settings(
    "grid",
    click.option("--k", "ks", default="50,100,250,500,1000", show_default=True, help="Numbers of challenge examples, comma-separated."),
    click.option("--lr", "lrs", default="1e-5,3e-5,1e-4", show_default=True, help="Learning rates of the grid."),
    click.option("--epochs", default="3", show_default=True, help="Epoch counts of the grid."),
    click.option("--seeds", default="0", show_default=True, help="Seeds of the grid (each also draws its own k examples)."),
)
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Run directory: units/, models/k<k>/, inoculation.csv, selected.json, inoculation.png.")
@click.option("--skip-checksums", is_flag=True, help="Do not compare file SHA-256 sums with the released data.")
@click.option("--batch-size", type=int, default=16, show_default=True, help="Examples per training step of every unit.")
@o.run(False)
@o.FOLD_LABELS
def inoculate(model, reading, original, challenge, challenge_eval, grid, out, skip_checksums, batch_size, run, progress, fold_labels):
    """Lossless inoculation (Richardson et al. 2020; MoNLI Appendix A.2): fine-tune on k challenge examples over a grid, select per k on dev.

    MoNLI is read from $INTERP_MONLI_DIR and the semantic fragments from $INTERP_FRAGMENTS_DIR.
    """
    from interp.api.specs import DataSpec
    from interp.jobs.inoculate import InoculateConfig, format_inoculation, run_inoculation

    config = InoculateConfig(
        model=model, original=original, challenge=challenge, out=out, challenge_eval=challenge_eval, ks=o.ints(grid["ks"], "--k"),
        lrs=o.numbers(grid["lrs"], "--lr", float), epochs=o.ints(grid["epochs"], "--epochs"), seeds=o.ints(grid["seeds"], "--seeds"),
        batch_size=batch_size, data=DataSpec(verify_checksums=not skip_checksums), **reading, run=run, fold_labels=fold_labels,
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

