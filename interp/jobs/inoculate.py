"""`interp inoculate`: lossless inoculation by fine-tuning (Liu et al. 2019; Richardson et al. 2020, §4; Geiger et al. 2020, Appendix A.2).

A model trained on an *original* task is fine-tuned further on ``k``
examples of a *challenge* task's training split, for every ``k`` and every
setting of a small grid (learning rates × epochs × seeds). For each ``k``
the *lossless* choice is the setting with the best average of the original
and the challenge accuracy on held-out **dev** examples; the figures
reported for it are on **test** examples, which selection never saw.
``k = 0`` is the model as given.

Held-out sets. ``--original TASK`` uses the task's ``dev`` and ``test``
splits; ``--original TASK:SPLIT`` halves ``SPLIT`` by example id
(:func:`interp.core.subsets.hashed_split`) into dev and test. The
challenge's ``--challenge-eval`` works the same way (default: the task's
``dev`` and ``test``). For MoNLI, ``monli:pmonli_heldout`` is the 20% of
PMoNLI that a model trained on ``pmonli_train`` never saw
(:data:`interp.tasks.monli.DERIVED_SPLITS`).

Labels. A model whose labels are the challenge task's mapped labels (a
two-label MoNLI model on a three-label fragment) trains on gold labels read
through the task's declared mapping (contradiction as non-entailment) and is
scored the same way (:meth:`interp.tasks.base.Task.read_labels`).

Usage::

    from interp.jobs.inoculate import InoculateConfig, run_inoculation
    rows, selected = run_inoculation(InoculateConfig(
        model="runs/inoc/challenge_model", original="monli:pmonli_heldout",
        challenge="monli:nmonli_train", challenge_eval="nmonli_test", out="runs/inoc/monli"))

Writes into ``out``: ``units/<unit>.json`` (each fine-tuning's scores,
resumable: a finished unit is never run again), ``models/k<k>/`` (the
selected unit's checkpoint for each k; other units' weights are dropped),
and together (:class:`interp.core.outputs.OutputSet`) ``inoculation.csv``
(every unit), ``selected.json`` (each k's lossless choice with its dev and
test scores) and ``inoculation.png`` (Richardson et al.'s Figure 6: original
and challenge test accuracy of the selected model against k).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from interp.core.errors import ConfigError, InterpError, named, renamed
from interp.core.estimates import CONFIDENCE, wilson
from interp.core.outputs import OutputSet, ensure_writable_dir, partial_path, read_json, write_csv_atomic, write_json_atomic
from interp.core.subsets import hashed_split, seeded_subset
from interp.core.devices import pick_device
from interp.api.loading import Classifier, classifier_for, model_sha256, resolve_task
from interp.api.objects import Task
from interp.api.specs import DataSpec, RunSpec
from interp.api.training import fine_tune, labels_for, parse_label_map, score, write_checkpoint

#: Richardson et al.'s k values reach 3,000 (a fragment's whole training split); MoNLI's NMoNLI train has 1,002.
DEFAULT_KS = (50, 100, 250, 500, 1000)
#: Learning rates at the embedded model's scale (the paper's BERT-large runs used 2e-5, 1e-6 and 1e-7).
DEFAULT_LRS = (1e-5, 3e-5, 1e-4)
#: Every unit's warm-up share: the grid varies lr and epochs; the rest of a unit's recipe is fixed.
WARMUP_RATIO = 0.1
#: The salt of the dev/test halving of an evaluation split.
HALVES_SALT = "inoculation-dev"
#: How to name a split to halve, per parameter, where a task has no dev and test splits of its own.
HALVE_HINT = {"original": "name one to halve, as {task}:SPLIT", "challenge_eval": "name one of its splits to halve, as SPLIT"}


@dataclass(frozen=True)
class HeldOut:
    """One task's held-out examples: ``dev`` selects, ``test`` reports."""

    task: Task
    dev: list
    test: list
    described: str


@dataclass(frozen=True)
class InoculateConfig:
    """The model, the two tasks (``original`` and ``challenge``, each read where ``data`` says a released one lies:
    its ``data_dir`` and ``verify_checksums``; the tasks are these two, so ``data`` names none), the grid, where the
    units go (``out``) and where they run (``run``: its ``device``, and examples per pass when scoring, 128 when
    ``None``; the training batch is ``batch_size``)."""

    model: str
    original: str  # TASK (its dev and test splits) or TASK:SPLIT (SPLIT halved)
    challenge: str  # TASK (its train split) or TASK:SPLIT (the split k examples are drawn from)
    out: str
    challenge_eval: str | None = None  # a challenge split to halve into dev/test; None: the task's dev and test
    ks: tuple[int, ...] = DEFAULT_KS
    lrs: tuple[float, ...] = DEFAULT_LRS
    epochs: tuple[int, ...] = (3,)
    seeds: tuple[int, ...] = (0,)
    batch_size: int = 16
    data: DataSpec = DataSpec()  # where the released data lie (data_dir, verify_checksums); its task is not read
    label_map: tuple[str, ...] | None = None  # the model's label names in id order, where its id2label does not say
    template: str | None = None  # a decoder's text joining the pair (None: the checkpoint's own)
    label_words: str | dict | None = None  # a causal LM read as a classifier: one word per label
    run: RunSpec = RunSpec()  # where every unit trains and is scored: device auto (a GPU when there is one), cpu, cuda[:N]
    fold_labels: bool = False  # a model with fewer labels than a task is trained and scored by the task's fold (else refused)

    def __post_init__(self) -> None:
        if self.label_map is not None and not isinstance(self.label_map, tuple):  # "0=contradiction,...", a dict or a list
            object.__setattr__(self, "label_map", parse_label_map(self.label_map))

    def validate(self) -> "InoculateConfig":
        if not self.ks:
            raise ConfigError("`ks=` names no value; give sizes like 50,100,500")
        if min(self.ks) < 1 or len(set(self.ks)) != len(self.ks):
            raise ConfigError(f"`ks=` must name distinct sizes of at least 1, got {','.join(map(str, self.ks))}")
        if not self.lrs or min(self.lrs) <= 0:
            raise ConfigError(f"`lrs=` must name positive learning rates, got {','.join(map(str, self.lrs)) or 'nothing'}")
        if not self.epochs or min(self.epochs) < 1:
            raise ConfigError(f"`epochs=` must name counts of at least 1, got {','.join(map(str, self.epochs)) or 'nothing'}")
        if not self.seeds:
            raise ConfigError("`seeds=` names no seed")
        if self.batch_size < 1:
            raise ConfigError(f"`batch_size=` must be at least 1, got {self.batch_size}")
        self.run.refuse_unused("inoculation")
        if self.data.task != DataSpec.task or self.data.data_file is not None:
            raise ConfigError(f"{named('task', self.data.name)}: inoculation reads its tasks from `original=` and `challenge=`, and of its "
                              "data settings only where released data lie (data_dir, verify_checksums)")  # fmt: skip
        return self

    def grid(self) -> list[tuple[int, float, int, int]]:
        """Every unit's (k, lr, epochs, seed), in order of k: small fine-tunings first."""
        return [(k, lr, e, s) for k in sorted(self.ks) for lr in self.lrs for e in self.epochs for s in self.seeds]


def unit_name(k: int, lr: float, epochs: int, seed: int) -> str:
    """A unit's file name: ``k<k>-lr<lr>-e<epochs>-s<seed>`` (``k50-lr3e-05-e3-s0``)."""
    return f"k{k}-lr{lr:g}-e{epochs}-s{seed}"


def split_spec(spec: str, argument: str, **where) -> tuple[Task, str | None]:
    """``TASK`` or ``TASK:SPLIT`` to the task and the split (``None`` without one).

    The whole of ``spec`` is tried as a task first, so ``fragment:negation``
    is a task and ``fragment:negation:test`` that task's split.

    Raises:
        ConfigError: neither reading names a task (naming ``argument``).
    """
    with renamed(task=argument):  # the config's `original=` or `challenge=` holds the task
        try:
            return resolve_task(spec, **where), None
        except ConfigError as whole:
            if ":" not in spec:
                raise
            task_spec, split = spec.rsplit(":", 1)
            try:
                return resolve_task(task_spec, **where), split
            except ConfigError:
                raise whole from None


def _load(task: Task, split: str, argument: str) -> list:
    try:
        examples = task.load((split,))
    except InterpError as exc:
        raise ConfigError(f"{named(argument)}: task {task.name!r} has no split {split!r} ({exc})") from None
    if not examples:
        raise ConfigError(f"{named(argument)}: split {split!r} of task {task.name!r} is empty")
    return examples


def held_out(task: Task, split: str | None, argument: str) -> HeldOut:
    """The dev and test examples of ``task``: its own ``dev`` and ``test`` splits, or ``split`` halved by example id.

    Raises:
        ConfigError: naming ``argument``: no split given and the task lacks ``dev`` or ``test``; an unknown or empty split.
    """
    if split is None:
        if not {"dev", "test"} <= set(task.splits):
            raise ConfigError(f"{named(argument)}: task {task.name!r} has no dev and test splits; {HALVE_HINT[argument].format(task=task.name)}")
        return HeldOut(task, _load(task, "dev", argument), _load(task, "test", argument), f"{task.name} dev / test")
    dev, test = hashed_split(_load(task, split, argument), lambda e: e.id, 0.5, HALVES_SALT)
    if not dev or not test:
        raise ConfigError(f"{named(argument)}: split {split!r} of task {task.name!r} is too small to halve into dev and test")
    return HeldOut(task, dev, test, f"{task.name} {split} halved by example id ({len(dev)} dev / {len(test)} test)")


def _accuracy(model: Classifier, task: Task, examples: list, batch_size: int) -> float:
    scores = score(model, task, examples, fold_labels=True, batch_size=batch_size)  # refused or said in run_inoculation
    return sum(s["correct"] for s in scores.values()) / sum(s["n"] for s in scores.values())


def _scores(model: Classifier, original: HeldOut, challenge: HeldOut, batch_size: int = 128) -> dict:
    row = {
        f"{name}_{part}": _accuracy(model, held.task, getattr(held, part), batch_size)
        for name, held in (("original", original), ("challenge", challenge))
        for part in ("dev", "test")
    }
    row["dev_average"] = (row["original_dev"] + row["challenge_dev"]) / 2
    row["test_average"] = (row["original_test"] + row["challenge_test"]) / 2
    return row


#: Each reported accuracy's 95% interval: Wilson for one task's share, a normal approximation for the average of two.
INTERVAL_COLUMNS = tuple(f"{name}_{bound}" for name in ("original_test", "challenge_test", "test_average", "dev_average")
                         for bound in ("low", "high"))  # fmt: skip


def with_intervals(row: dict, sizes: dict[str, tuple[int, int]]) -> dict:
    """``row`` with the 95% interval of each test accuracy and of both averages (:data:`INTERVAL_COLUMNS`).

    ``sizes``: ``{"dev": (original, challenge), "test": (...)}``, the held-out sets' example counts. One task's accuracy
    gets its Wilson interval over its examples; the average of the two tasks' accuracies (independent examples) the
    normal approximation ``(a + b) / 2 ± 1.96 · sqrt(a(1 − a)/n_a + b(1 − b)/n_b) / 2``, clipped to [0, 1]. Neither covers
    the fine-tuning's seed: ``--seeds`` adds units, among which the dev average chooses.
    """
    from scipy.stats import norm

    z = norm.ppf(1 - (1 - CONFIDENCE) / 2)
    out = dict(row)
    for name, n in (("original", sizes["test"][0]), ("challenge", sizes["test"][1])):
        share = wilson(round(row[f"{name}_test"] * n), n)
        out[f"{name}_test_low"], out[f"{name}_test_high"] = share.low, share.high
    for part, (n_a, n_b) in sizes.items():
        a, b = row[f"original_{part}"], row[f"challenge_{part}"]
        half = z * math.sqrt(a * (1 - a) / n_a + b * (1 - b) / n_b) / 2
        out[f"{part}_average_low"], out[f"{part}_average_high"] = max(0.0, (a + b) / 2 - half), min(1.0, (a + b) / 2 + half)
    return out


def lossless_choice(records: list[dict]) -> dict:
    """The lossless choice: the best dev average; ties go to the earlier unit of the grid."""
    return max(records, key=lambda r: (round(r["dev_average"], 12), -r["order"]))


def run_inoculation(config: InoculateConfig, *, progress: bool = True) -> tuple[list[dict], list[dict]]:
    """Run every unit not yet finished, select per k, write the outputs; returns (every unit's row, the selected rows).

    Raises:
        ConfigError: a bad grid, an unknown task or split, an empty split, a
            k larger than the challenge's training split.
        ModelError: the model cannot be loaded or cannot be scored on a task.
        OutputError: ``out`` cannot be written.
    """
    config.validate()
    where = {"data_dir": config.data.data_dir, "verify_checksums": config.data.verify_checksums}
    original_task, original_split = split_spec(config.original, "original", **where)
    challenge_task, train_split = split_spec(config.challenge, "challenge", **where)
    original = held_out(original_task, original_split, "original")
    challenge = held_out(challenge_task, config.challenge_eval, "challenge_eval")
    train_split = train_split or "train"
    pool = _load(challenge_task, train_split, "challenge")
    too_big = [k for k in config.ks if k > len(pool)]
    if too_big:
        raise ConfigError(f"{named('ks', max(too_big))} is larger than {challenge_task.name}'s {train_split} split ({len(pool)} examples)")
    device = pick_device(config.run.device)  # a GPU that is not there is named before any work
    base = classifier_for(config.model, original_task, label_map=config.label_map, complete=False, template=config.template,
                          label_words=config.label_words).to(device)  # fmt: skip
    model_labels = base.labels
    for task in (original_task, challenge_task):  # both tasks must score the model, before any work
        reading = labels_for(base, task, fold_labels=config.fold_labels)
    trained_as = {label: reading.model_labels[reading.target[j]] for j, label in enumerate(reading.task_labels)}
    out = Path(config.out)
    units = out / "units"
    ensure_writable_dir(units)
    identity = {"model_sha256": model_sha256(config.model), "original": original.described, "challenge": f"{challenge_task.name} {train_split}",
                "challenge_eval": challenge.described, **({"model_labels": list(model_labels)} if config.label_map else {})}  # fmt: skip

    baseline_path = units / "k0.json"
    baseline = read_json(baseline_path)
    if baseline is None or baseline.get("identity") != identity:
        baseline = {"unit": "k0", "k": 0, "lr": 0.0, "epochs": 0, "seed": 0, "order": -1, "seconds": 0.0,
                    **_scores(base, original, challenge, config.run.batch(128)), "identity": identity}  # fmt: skip
        write_json_atomic(baseline_path, baseline)
    grid = config.grid()
    records: dict[str, dict] = {}
    for order, (k, lr, epochs, seed) in enumerate(grid):
        found = read_json(units / f"{unit_name(k, lr, epochs, seed)}.json")
        if found is not None and found.get("identity") == identity:
            records[found["unit"]] = {**found, "order": order}
    todo = [(order, unit) for order, unit in enumerate(grid) if unit_name(*unit) not in records]
    bar = tqdm(total=len(grid), initial=len(grid) - len(todo), desc="inoculation units", unit="unit", disable=not progress)
    try:
        for order, (k, lr, epochs, seed) in todo:
            name = unit_name(k, lr, epochs, seed)
            bar.set_postfix_str(name)
            started = time.perf_counter()
            chosen = seeded_subset(pool, k, seed)  # a gold label the model lacks trains its fold
            model = fine_tune(base, challenge_task, chosen, epochs=epochs, lr=lr, batch_size=config.batch_size, seed=seed,
                              warmup_ratio=WARMUP_RATIO)  # fmt: skip
            record = {"unit": name, "k": k, "lr": lr, "epochs": epochs, "seed": seed, "train_loss": model.history[-1]["loss"],
                      **_scores(model, original, challenge, config.run.batch(128)), "identity": identity}  # fmt: skip
            record["seconds"] = time.perf_counter() - started
            same_k = [r for r in records.values() if r["k"] == k] + [{**record, "order": order}]
            if lossless_choice(same_k)["unit"] == name:  # keep only the selected unit's weights, saved before its record
                target = out / "models" / f"k{k}"
                write_checkpoint(model, {"unit": name, **{x: record[x] for x in record if x != "identity"}}, target, partial_path(target))
            write_json_atomic(units / f"{name}.json", record)
            records[name] = {**record, "order": order}
            bar.update(1)
    finally:
        bar.close()
    sizes = {part: (len(getattr(original, part)), len(getattr(challenge, part))) for part in ("dev", "test")}
    rows = [with_intervals(r, sizes) for r in [baseline] + sorted(records.values(), key=lambda r: r["order"])]
    selected = [rows[0]] + [lossless_choice([r for r in rows[1:] if r["k"] == k]) for k in sorted(config.ks)]
    columns = ["unit", "k", "lr", "epochs", "seed", "original_dev", "challenge_dev", "dev_average", "original_test", "challenge_test",
               "test_average", *INTERVAL_COLUMNS, "train_loss", "seconds"]  # fmt: skip
    with OutputSet(out, "inoculate") as outputs:
        # Learning rates as written (1e-05), not as the CSV writer's fixed four decimals would round them.
        write_csv_atomic([{c: f"{r[c]:g}" if c == "lr" else r.get(c, "") for c in columns} for r in rows], outputs.path("inoculation.csv"))
        write_json_atomic(outputs.path("selected.json"), {
            "settings": {"model": config.model, "original": original.described, "challenge": identity["challenge"],
                         "challenge_eval": challenge.described, "ks": list(config.ks), "lrs": list(config.lrs),
                         "epochs": list(config.epochs), "seeds": list(config.seeds), "batch_size": config.batch_size,
                         "label_mapping": {g: m for g, m in trained_as.items() if g != m}},
            "selected": [{**{c: r.get(c) for c in columns}, "model": str(out / "models" / f"k{r['k']}") if r["k"] else config.model}
                         for r in selected],
        })  # fmt: skip
        plot_inoculation(selected, original.described, challenge.described, identity["challenge"], outputs.path("inoculation.png"))
    return rows, selected


def plot_inoculation(selected: list[dict], original: str, challenge: str, trained_on: str, path: Path) -> None:
    """Richardson et al.'s Figure 6: the selected model's original and challenge test accuracy (%) against k.

    ``original`` and ``challenge`` describe the held-out sets, ``trained_on`` the split the k examples come from.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from interp.core.outputs import save_figure_atomic

    ks = [r["k"] for r in selected]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for name, marker, held in (("original", "o-", original), ("challenge", "s-", challenge)):
        values = [100 * r[f"{name}_test"] for r in selected]
        bars = [[v - 100 * r[f"{name}_test_low"] for v, r in zip(values, selected)], [100 * r[f"{name}_test_high"] - v for v, r in zip(values, selected)]]
        ax.errorbar(ks, values, yerr=bars, fmt=marker, capsize=3, label=f"{name}: {held}")
    ax.set_xlabel(f"k, examples of {trained_on} fine-tuned on (0 = before inoculation)")
    ax.set_ylabel("test accuracy (%) of the lossless choice, 95% Wilson interval")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Lossless inoculation (best dev average per k)", fontsize=10)
    save_figure_atomic(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def format_inoculation(selected: list[dict]) -> str:
    """The selected unit per k: its dev average (what chose it) and its test accuracies in percent, each with its 95%
    interval (:func:`with_intervals`)."""

    def cell(r: dict, name: str) -> str:
        return f"{100 * r[name]:.1f} [{100 * r[name + '_low']:.1f}, {100 * r[name + '_high']:.1f}]"

    names = ("dev_average", "original_test", "challenge_test", "test_average")
    lines = [f"{'k':>6}  {'unit':24}" + "".join(f"{h:>20}" for h in ("dev avg", "original test", "challenge test", "test avg"))]
    lines += [f"{r['k']:>6}  {r['unit']:24}" + "".join(f"{cell(r, n):>20}" for n in names) for r in selected]
    lines.append("accuracy (%) [95% interval over the held-out examples: Wilson for one task, a normal approximation for the "
                 "average of the two]; one fine-tuning per unit, so the seed's spread is not in it; dev avg chose the unit")
    return "\n".join(lines)
