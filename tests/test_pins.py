"""Pinned outputs: the public calls and the commands write the numbers they wrote when the pins were made.

A redesign keeps behaviour: before code moves, what ``interchange``, ``vectors``, ``train_das``, ``evaluate`` and the
``intervene``, ``das``, ``cache`` and ``demo`` commands give on a small sample is written to ``tests/pins/``; after,
the same calls must give the same numbers, and every file the same datasets and attributes apart from timings,
hashes and the machine's environment.

What a pin holds, and at what tolerance (:data:`TOLERANCES`), is what stays put from one CPU to another:

* exact computations (forward passes of fixed weights, interchanges, caches, labels, counts, ids, strings): floats
  within 1e-5 (relative and absolute). Measured: they move by at most 3.2e-6 between an AVX2 and an AVX-512 machine,
  and with torch's vector kernels and MKL held to SSE4.2 (``ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2``);
* what training produces is pinned by its behaviour, not its last bits. A DAS rotation after a few steps moves by up to
  2.5e-5 between those machines (entries up to 0.14): its entries are held within 1e-3, and its effect, the logits of
  the interchange it makes, within 1e-3, its labels equal wherever the pinned logits stand more than 1e-2 from a tie
  (at least a third of its pairs, checked); a rotation's row argmax is not pinned (it flips on near ties). Probes
  are trained too: an MLP probe (SGD on a model that has learned little) moves by up to 0.010 in accuracy,
  selectivity and their bootstrap bounds between those machines, a linear probe by up to 0.0023: their figures are
  held within 0.03 and 0.01.

The pins are made with ``python tests/test_pins.py`` (one thread, as the suite's workers run) and committed. A change
that alters the numbers on purpose (a new dataset in a file, a new default) remakes them and says so in its message.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

pytestmark = pytest.mark.slow(seconds=90)

PINS = Path(__file__).resolve().parent / "pins"
#: Attributes and keys that are timings, hashes or the machine, not outputs.
IGNORED = re.compile(r"seconds|environment|sha256|elapsed|wall|started|finished_at|created|versions?$|threads|^time$")
#: Arrays larger than this are pinned by their labels (argmax), their sum and a seeded sample of entries.
WHOLE = 4096
#: Keys whose values training produced, and the tolerance each is held at (module docstring: measured across CPUs).
#: Every other float is held at :data:`EXACT`.
TRAINED = (
    (re.compile(r"/das/matrix(#\w+)?$|^das/.*/rotation(#\w+)?$"), 1e-3),  # a DAS rotation's entries
    (re.compile(r"/das/effect$"), 1e-3),  # the logits of the interchange a trained rotation makes
    (re.compile(r"^demo/probes\.csv#mlp$"), 0.03),  # an MLP probe's accuracies and selectivities
    (re.compile(r"^demo/probes\.csv#linear$"), 0.01),  # a linear probe's
)
EXACT = 1e-5


def _clean(value, tmp: str):
    """JSON-ready, paths under the run's temporary folder made relative, timings and hashes dropped."""
    if isinstance(value, dict):
        return {str(k): _clean(v, tmp) for k, v in value.items() if not IGNORED.search(str(k))}
    if isinstance(value, (list, tuple)):
        return [_clean(v, tmp) for v in value]
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        value = value.replace(tmp, "<tmp>") if tmp else value
        try:  # JSON text inside an attribute: compare what it says
            parsed = json.loads(value)
        except ValueError:
            return value
        return _clean(parsed, tmp) if isinstance(parsed, (dict, list)) else value
    if isinstance(value, np.ndarray):
        return _clean(value.tolist(), tmp)
    return value


def tolerance(key: str) -> float:
    """The tolerance a pinned float is held at: :data:`EXACT`, or what :data:`TRAINED` gives its key."""
    return next((tol for pattern, tol in TRAINED if pattern.search(key)), EXACT)


def _array(out: dict, key: str, value) -> None:
    """Pin an array: whole when small, else its argmax labels (floats), sum and a seeded sample; a trained matrix's
    entries are pinned without the argmax of its rows (near ties flip between machines)."""
    value = np.asarray(value)
    if value.dtype.kind in "OSU":
        out[key] = np.array([str(v) for v in value.reshape(-1)])
        return
    if value.size <= WHOLE or value.dtype.kind not in "f":
        out[key] = value
        return
    flat = value.reshape(-1)
    pick = np.random.default_rng(0).choice(flat.size, 512, replace=False)
    out[f"{key}#sample"] = flat[np.sort(pick)]
    out[f"{key}#sum"] = np.array([flat.astype(np.float64).sum() / flat.size])
    if value.ndim >= 2 and tolerance(key) == EXACT:
        out[f"{key}#argmax"] = value.argmax(-1)


def _h5(path: Path, prefix: str, arrays: dict, scalars: dict, tmp: str) -> None:
    with h5py.File(path, "r") as handle:
        scalars[f"{prefix}@"] = _clean(dict(handle.attrs), tmp)

        def visit(name, item):
            if isinstance(item, h5py.Dataset):
                data = item[()]
                if item.dtype.kind == "O":
                    data = np.array([x.decode() if isinstance(x, bytes) else str(x) for x in np.asarray(data).reshape(-1)])
                _array(arrays, f"{prefix}/{name}", data)
            if len(item.attrs):
                scalars[f"{prefix}/{name}@"] = _clean(dict(item.attrs), tmp)

        handle.visititems(visit)


def _csv(path: Path, tmp: str) -> list[dict]:
    with open(path, newline="") as handle:
        return _clean([dict(row) for row in csv.DictReader(handle)], tmp)


def _number(text: str):
    try:
        return float(text)
    except ValueError:
        return text


def _probes(path: Path, tmp: str, scalars: dict, key: str) -> None:
    """A probes CSV, its figures as numbers, linear and MLP probes apart (each held at its :data:`TRAINED` tolerance)."""
    rows = [{k: _number(v) for k, v in r.items()} for r in _csv(path, tmp)]
    scalars[f"{key}#linear"] = [r for r in rows if r["probe"] != "mlp"]
    scalars[f"{key}#mlp"] = [r for r in rows if r["probe"] == "mlp"]


def _safetensors(path: Path, prefix: str, arrays: dict) -> None:
    from safetensors.numpy import load_file

    for key, value in sorted(load_file(str(path)).items()):
        _array(arrays, f"{prefix}/{key}", value)


# -- what is pinned ---------------------------------------------------------------------------------------------------


def tiny_model(folder: Path) -> Path:
    """A random 2-block, 2-head BERT classifier initialized wide (0.2), so its outputs move with every site."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from interp.models import embedded_model_dir

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    torch.manual_seed(11)
    labels = {0: "entailment", 1: "neutral"}
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                        max_position_embeddings=128, num_labels=2, initializer_range=0.2, id2label=labels,
                        label2id={v: k for k, v in labels.items()})  # fmt: skip
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def _api(lab, prefix: str, arrays: dict, scalars: dict, locations: tuple[str, str], das_k: int) -> None:
    """The face's calls on 12 examples: vectors, interchange (engine, naive, a rotation, a set of locations), DAS, evaluate."""
    from interp.engine.interventions import RotatedSubspace

    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=6, seed=3)
    residual, component = locations
    for loc in locations:
        _array(arrays, f"{prefix}/vectors/{loc}", lab.vectors(examples, loc).numpy())
        res = lab.interchange(examples, examples, loc)
        _array(arrays, f"{prefix}/interchange/{loc}/logits", res.logits.numpy())
        _array(arrays, f"{prefix}/interchange/{loc}/base_pred", res.base_pred)
        scalars[f"{prefix}/interchange/{loc}/summary"] = _clean(res.summaries(), "")
    few = examples[:4]
    _array(arrays, f"{prefix}/naive/{component}", lab.interchange(few, few, component, naive=True).logits.numpy())
    width = lab.width(examples, residual)
    rotated = RotatedSubspace(width, k=max(1, width // 4), seed=2)
    found = lab.interchange(examples, examples[:5], residual, intervention=rotated, variables=["lexrel"])
    _array(arrays, f"{prefix}/rotated/{residual}", found.logits.numpy())
    both = lab.interchange(examples, examples, list(locations), variables=["lexrel", "negated"])
    scalars[f"{prefix}/set"] = _clean(both.summary_frame().to_dict(orient="list"), "")
    das = lab.train_das(lab.task.examples(("pmonli", "nmonli_test"), per_split=20, seed=3), residual, "lexrel", k=das_k, n_pairs=48, epochs=1, batch_size=16, test_pairs=24, seed=1,
                        warn_unlearned=False)  # fmt: skip
    scalars[f"{prefix}/das"] = _clean({name: [float(v), v.low, v.high] for name, v in (
        ("iia", das.iia), ("untrained", das.untrained_iia), ("gain", das.gain), ("stays", das.stays_base), ("copies", das.copies_source),
        ("vanilla", das.vanilla_iia), ("block", das.block_iia))}, "")  # fmt: skip
    scalars[f"{prefix}/das/history"] = _clean({"history": das.history, "losses": das.losses, "block": das.block, "k": das.k}, "")
    _array(arrays, f"{prefix}/das/matrix", das.intervention.matrix.detach().numpy())
    effect = lab.interchange(examples, examples[:5], residual, intervention=das, variables=["lexrel"]).logits.numpy()
    arrays[f"{prefix}/das/effect"] = effect
    scalars[f"{prefix}/evaluate"] = _clean(lab.evaluate(examples).to_dict(orient="list"), "")


def _commands(model: Path, tmp: Path, monli: Path, arrays: dict, scalars: dict) -> None:
    """``interp intervene``, ``das`` and ``cache`` on a small sample of the tiny model, their files pinned."""
    from click.testing import CliRunner

    from interp.cli import main

    def run(*args):
        result = CliRunner().invoke(main, [*map(str, args), "--data-dir", str(monli), "--quiet"], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    sample = ["--model", model, "--splits", "pmonli,nmonli_test", "--max-per-split", "10"]
    run("intervene", *sample, "--out", tmp / "iv.h5", "--locations", "blocks.0.hook_resid_post@w_h,blocks.1.attn.hook_z.h1@w_p",
        "--variable", "lexrel,negated")  # fmt: skip
    _h5(tmp / "iv.h5", "intervene", arrays, scalars, str(tmp))
    run("das", *sample, "--max-per-split", "16", "--out", tmp / "das", "--locations", "blocks.1.hook_resid_post@w_h",
        "--variable", "lexrel", "--subspace", "4,boundless", "--train-pairs", "48", "--test-pairs", "24", "--epochs", "1",
        "--batch-size", "16")  # fmt: skip
    scalars["das/das.csv"] = _csv(tmp / "das" / "das.csv", str(tmp))
    for path in sorted((tmp / "das" / "interventions").glob("*.safetensors")):
        _safetensors(path, f"das/{path.stem}", arrays)
    run("cache", "--model", model, "--splits", "nmonli_test", "--components", "--out", tmp / "cache.h5")
    _h5(tmp / "cache.h5", "cache", arrays, scalars, str(tmp))


def _demo(encoder: Path, tmp: Path, monli: Path, arrays: dict, scalars: dict) -> None:
    """``interp demo`` on a tiny encoder, its shortest settings: the fine-tunings, probes, interventions and cliques."""
    from click.testing import CliRunner

    from interp.cli import main

    out = tmp / "demo"
    args = ["demo", "--model", encoder, "--epochs", "1", "--max-train", "64", "--batch-size", "32", "--probe-seeds", "1", "--out", out,
            "--no-das", "--no-screen", "--data-dir", monli, "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    metrics = (out / "metrics.json").read_text().replace(json.dumps(str(monli))[1:-1], "<monli>")  # the data folder is the machine's
    scalars["demo/metrics.json"] = _clean(json.loads(metrics), str(tmp))
    _probes(out / "probes.csv", str(tmp), scalars, "demo/probes.csv")
    scalars["demo/cliques.json"] = _clean(json.loads((out / "cliques.json").read_text()), str(tmp))
    _h5(out / "interventions.h5", "demo/interventions", arrays, scalars, str(tmp))


def tiny_encoder(folder: Path) -> Path:
    """A random 2-block BertModel (no head) with the embedded model's tokenizer: what the demo fine-tunes."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertModel

    from interp.models import embedded_model_dir

    tokenizer = AutoTokenizer.from_pretrained(embedded_model_dir())
    torch.manual_seed(12)
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37,
                         max_position_embeddings=128)).save_pretrained(folder, safe_serialization=True)  # fmt: skip
    tokenizer.save_pretrained(folder)
    return folder


def outputs(part: str, tmp: Path, monli: Path) -> tuple[dict, dict]:
    """The pinned outputs of one part (``api``, ``embedded``, ``commands``, ``demo``) computed now: (arrays, scalars)."""
    import torch

    import interp

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the suite's workers run: the pins do not depend on the machine's cores
    arrays: dict = {}
    scalars: dict = {}
    try:
        if part == "api":
            model = tiny_model(tmp / "tiny")
            lab = interp.IntervenableModel(str(model), "monli", data_dir=str(monli))
            _api(lab, "tiny", arrays, scalars, ("blocks.1.hook_resid_post@w_h", "blocks.0.attn.hook_z.h1@w_p"), das_k=4)
        elif part == "embedded":
            model = interp.load_model("minilm", labels=("entailment", "neutral"), seed=0)
            lab = interp.IntervenableModel(model, interp.load_task("monli", data_dir=str(monli)))
            _api(lab, "minilm", arrays, scalars, ("blocks.2.hook_resid_post@w_h", "blocks.4.hook_mlp_out@w_p"), das_k=48)
        elif part == "commands":
            _commands(tiny_model(tmp / "tiny"), tmp, monli, arrays, scalars)
        elif part == "demo":
            _demo(tiny_encoder(tmp / "encoder"), tmp, monli, arrays, scalars)
        else:
            raise ValueError(part)
    finally:
        torch.set_num_threads(threads)
    return arrays, scalars


PARTS = ("api", "embedded", "commands", "demo")


def _close(a, b, tol: float = EXACT) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            return bool(np.isclose(a, b, rtol=tol, atol=tol, equal_nan=True))
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    return a == b


def _differences(pinned: dict, now: dict) -> list[str]:
    return [key for key in sorted(set(pinned) | set(now))
            if key not in pinned or key not in now or not _close(pinned[key], now[key], tolerance(key))]  # fmt: skip


def _array_differs(key: str, value: np.ndarray, old: np.ndarray) -> bool:
    """Whether a pinned array moved: floats beyond :func:`tolerance`, anything else at all; a trained interchange's
    labels (its effect) must stay equal too wherever the pinned logits stand clear of a tie (:func:`clear`)."""
    if value.shape != old.shape:
        return True
    if value.dtype.kind != "f":
        return not np.array_equal(value, old)
    tol = tolerance(key)
    if not np.allclose(value, old, rtol=tol, atol=tol):
        return True
    if not key.endswith("/effect"):
        return False
    keep = clear(old)
    return not np.array_equal(value.argmax(-1)[keep], old.argmax(-1)[keep])


def clear(logits: np.ndarray) -> np.ndarray:
    """The pairs whose two largest logits stand more than 10 times the trained tolerance apart: labels that no
    machine's rounding flips."""
    return _margins(logits) > 10 * tolerance("x/das/effect")


def _margins(logits: np.ndarray) -> np.ndarray:
    """Each row's gap between its two largest logits: how far a label stands from flipping."""
    top = np.sort(logits, axis=-1)
    return top[..., -1] - top[..., -2]


@pytest.mark.parametrize("part", PARTS)
def test_outputs_equal_the_pins(part, tmp_path, monli_dir):
    arrays, scalars = outputs(part, tmp_path, monli_dir)
    with np.load(PINS / f"{part}.npz") as pinned:
        pinned_arrays = dict(pinned)
    pinned_scalars = json.loads((PINS / f"{part}.json").read_text())
    assert sorted(arrays) == sorted(pinned_arrays)
    assert [key for key, value in arrays.items() if _array_differs(key, value, pinned_arrays[key])] == []
    assert _differences(pinned_scalars, json.loads(json.dumps(scalars))) == []


def test_the_comparison_would_catch_a_changed_number():
    """The null: a float moved by 1e-4, a label changed, a key gone, each found; a trained figure moved past its own
    tolerance found, within it not."""
    assert _differences({"a": [0.5, {"b": 1}]}, {"a": [0.5001, {"b": 1}]}) == ["a"]
    assert _differences({"a": [0.5, {"b": 1}]}, {"a": [0.5, {"b": 2}]}) == ["a"]
    assert _differences({"a": 1, "c": 2}, {"a": 1}) == ["c"]
    assert _differences({"a": [0.5, {"b": 1}]}, {"a": [0.500001, {"b": 1}]}) == []
    mlp = "demo/probes.csv#mlp"
    assert _differences({mlp: [{"task_acc_mean": 0.60}]}, {mlp: [{"task_acc_mean": 0.61}]}) == []
    assert _differences({mlp: [{"task_acc_mean": 0.60}]}, {mlp: [{"task_acc_mean": 0.65}]}) == [mlp]
    linear = "demo/probes.csv#linear"
    assert _differences({linear: [{"task_acc_mean": 0.60}]}, {linear: [{"task_acc_mean": 0.605}]}) == []
    assert _differences({linear: [{"task_acc_mean": 0.60}]}, {linear: [{"task_acc_mean": 0.62}]}) == [linear]
    matrix = np.eye(3, dtype=np.float32)
    assert not _array_differs("minilm/das/matrix#sample", matrix + 5e-4, matrix)
    assert _array_differs("minilm/das/matrix#sample", matrix + 5e-3, matrix)
    assert _array_differs("tiny/vectors/x", matrix + 5e-4, matrix)  # an exact figure at 1e-5
    effect = np.array([[[0.0, 1.0], [1.0, 0.0]]], dtype=np.float32)
    assert _array_differs("minilm/das/effect", effect[..., ::-1], effect)  # labels flipped
    tie = np.array([[[0.5, 0.5004], [0.0, 1.0]]], dtype=np.float32)
    assert not _array_differs("minilm/das/effect", tie[..., ::-1] * [[[1, 1], [0, 0]]] + tie * [[[0, 0], [1, 1]]], tie)  # a tie may flip


@pytest.mark.parametrize("part", PARTS)
def test_the_trained_effects_labels_are_compared_where_they_stand_clear_of_a_tie(part):
    """A trained rotation's pinned labels are compared only where no rounding can flip them (:func:`clear`); at least a
    third of its pairs are, so the comparison is not vacuous."""
    with np.load(PINS / f"{part}.npz") as pinned:
        effects = [pinned[key] for key in pinned.files if key.endswith("/effect")]
    for effect in effects:
        assert clear(effect).mean() >= 1 / 3


def main(argv: list[str]) -> None:
    """Write the pins of every part (or the parts named) into ``tests/pins/``."""
    import os
    import tempfile

    monli = Path(os.environ.get("INTERP_MONLI_DIR") or Path(__file__).resolve().parents[2] / "shared" / "datasets" / "monli")
    PINS.mkdir(exist_ok=True)
    for part in argv or PARTS:
        with tempfile.TemporaryDirectory() as tmp:
            arrays, scalars = outputs(part, Path(tmp), monli)
        np.savez_compressed(PINS / f"{part}.npz", **arrays)
        (PINS / f"{part}.json").write_text(json.dumps(scalars, indent=1, sort_keys=True) + "\n")
        print(part, len(arrays), "arrays", len(scalars), "records")


if __name__ == "__main__":
    main(sys.argv[1:])
