"""A table of bad inputs through every command: exit 2, one line, no traceback, and the output folder unchanged.

Rows: spoiled data, corrupt checkpoints, corrupt and edited HDF5 files, bad
flags, outputs interp must not replace, and a full disk (a 64 KiB tmpfs,
mounted as root; those rows are skipped where mounting is not allowed).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
from click.testing import CliRunner

from interp.cli import main

LOCATION = "blocks.1.hook_resid_post@w_h"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def snapshot(root: Path) -> dict:
    """Every file and folder under ``root`` with its size and modification time."""
    return {str(p.relative_to(root)): (p.is_dir(), p.stat().st_size if p.is_file() else 0, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def made(tiny_classifier_dir, monli_dir, tmp_path_factory):
    """A tiny model's cache and interventions file, and spoiled copies of the data and the model."""
    root = tmp_path_factory.mktemp("made")
    cache, iv = root / "act.h5", root / "iv.h5"
    assert run("cache", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--out", cache, "--data-dir", monli_dir, "--quiet").exit_code == 0
    result = run("intervene", "--model", tiny_classifier_dir, "--max-examples", "12", "--locations", LOCATION,
                 "--out", iv, "--data-dir", monli_dir, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    result = run("cliques", "--interventions", iv, "--out", root / "cliques", "--min-size", "2", "--format", "graphml,json")
    assert result.exit_code == 0, result.stderr
    data = root / "monli"
    shutil.copytree(monli_dir, data)
    lines = (data / "nmonli_test.jsonl").read_text().splitlines()
    lines[2] = "{not json"
    (data / "nmonli_test.jsonl").write_text("\n".join(lines) + "\n")
    models = {}
    for how in ("empty", "truncated", "no tokenizer", "bin shards", "pickled", "bloom"):
        model = root / f"model {how}"
        shutil.copytree(tiny_classifier_dir, model)
        weights = model / "model.safetensors"
        if how == "empty":
            weights.write_bytes(b"")
        elif how == "truncated":
            weights.write_bytes(weights.read_bytes()[:1000])
        elif how == "no tokenizer":
            (model / "tokenizer.json").unlink()
        elif how == "pickled":  # how checkpoints were saved before safetensors
            from safetensors.torch import load_file

            torch.save(load_file(weights), model / "pytorch_model.bin")
            weights.unlink()
        elif how == "bloom":
            config = json.loads((model / "config.json").read_text())
            (model / "config.json").write_text(json.dumps({**config, "model_type": "bloom", "architectures": ["BloomForSequenceClassification"]}))
        else:
            weights.unlink()
            (model / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"a": "pytorch_model.bin"}}))
        models[how] = model
    for how, names in (("generic", ["LABEL_0", "LABEL_1"]), ("yes/no", ["yes", "no"])):
        model = root / f"model {how.replace('/', ' ')}"
        shutil.copytree(tiny_classifier_dir, model)
        config = json.loads((model / "config.json").read_text())
        config["id2label"], config["label2id"] = dict(enumerate(names)), {n: i for i, n in enumerate(names)}
        (model / "config.json").write_text(json.dumps(config))
        models[how] = model
    three = root / "model three over two"  # config.json edited to three labels over a two-row head
    shutil.copytree(tiny_classifier_dir, three)
    config = json.loads((three / "config.json").read_text())
    names = ["entailment", "neutral", "contradiction"]
    config.update(num_labels=3, id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
    (three / "config.json").write_text(json.dumps(config))
    models["three over two"] = three
    for how in ("empty bin", "planted bin"):
        model = root / f"model {how}"
        model.mkdir()
        for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
            shutil.copy(tiny_classifier_dir / name, model / name)
        if how == "empty bin":
            (model / "pytorch_model.bin").write_bytes(b"")
        else:
            torch.save({"w": torch.zeros(2), "planted": Planted()}, model / "pytorch_model.bin")
        models[how] = model
    return {"cache": cache, "iv": iv, "cliques": root / "cliques", "data": data, "models": models, "root": root,
            **_files(root)}  # fmt: skip


class Planted:
    """What a pickle can hold besides tensors: unpickling it calls a function (here print; an exploit calls os.system)."""

    def __reduce__(self):
        return (print, ("a planted pickle ran",))


def _files(root: Path) -> dict:
    """A generated logic fragment with a label `maybe`, a binary file and an empty one; an inoculation run (and one
    whose CSV lacks column k); a run folder whose metrics.json is `null`, its manifest recording it."""
    from interp.core.checksums import sha256_of
    from interp.tasks.fragments.logic.generate import LogicConfig, generate_records

    records = generate_records(LogicConfig(fragment="negation", n_train=3, n_dev=0, n_test=0))
    records[1]["label"] = "maybe"
    (root / "maybe.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (root / "binary.jsonl").write_bytes(b"\x00\xff\xfe\x89PNG")
    (root / "empty.jsonl").write_bytes(b"")
    found = {"fragment maybe": root / "maybe.jsonl", "fragment binary": root / "binary.jsonl", "fragment empty": root / "empty.jsonl"}
    for name, columns in (("inoc", "k,challenge_test,original_test"), ("inoc no k", "kk,challenge_test,original_test")):
        run_dir = root / name
        run_dir.mkdir()
        selected = [{"k": k, "challenge_test": 0.5 + k / 1000, "original_test": 0.9, "dev_average": 0.7, "unit": f"k{k}"} for k in (0, 50)]
        (run_dir / "selected.json").write_text(json.dumps({"selected": selected, "settings": {"challenge": "fragment:negation"}}))
        (run_dir / "inoculation.csv").write_text(f"{columns}\n0,0.5,0.9\n50,0.55,0.9\n")
        found[name] = run_dir
    run_dir = root / "null run"
    run_dir.mkdir()
    (run_dir / "metrics.json").write_text("null\n")
    record = {"command": "behavioral", "files": {"metrics.json": {"bytes": 5, "sha256": sha256_of(run_dir / "metrics.json")}}}
    (run_dir / "behavioral.manifest.json").write_text(json.dumps(record))
    found["null run"] = run_dir
    return found


def edited(made, tmp_path, which: str, edit) -> Path:
    """A copy of the cache or interventions file with one dataset edited by ``edit(handle)``."""
    copy = tmp_path / f"{which}.h5"
    shutil.copy(made[which], copy)
    with h5py.File(copy, "a") as handle:
        edit(handle)
    return copy


def _reshape(handle, name):
    data = handle[name][:]
    del handle[name]
    handle[name] = data.reshape(data.shape[0], -1)[:, :1] if data.ndim > 1 else data[:, None]


def _nan_rows(handle, name):
    """NaN in two rows of a cached location, inf in a third: every probe scored 0.5 on such a file, silently."""
    data = handle[name][:]
    data[3, 0], data[7, 5], data[9, 1] = np.nan, np.nan, np.inf
    handle[name][...] = data


def _graph_spoiled(made, tmp_path: Path, manifest_too: bool) -> Path:
    """A copy of the cliques run whose graph.json is node-link data of the wrong shape (it raised a TypeError in networkx);
    with ``manifest_too`` its manifest records the spoiled file's SHA-256, as if the command had written it."""
    from interp.core.checksums import sha256_of

    run_dir = tmp_path / "run"
    shutil.copytree(made["cliques"], run_dir)
    (run_dir / "graph.json").write_text(json.dumps({"directed": False, "multigraph": False, "graph": {}, "nodes": 1, "edges": 2}))
    if manifest_too:
        manifest = json.loads((run_dir / "cliques.manifest.json").read_text())
        manifest["files"]["graph.json"]["sha256"] = sha256_of(run_dir / "graph.json")
        (run_dir / "cliques.manifest.json").write_text(json.dumps(manifest))
    return run_dir


def _shorten(handle, name):
    data = handle[name][:]
    del handle[name]
    handle[name] = data[:-1]


USER_TASK_NOT_A_TASK = "def make_task():\n    return 42\n"
TOY_TASK = Path(__file__).resolve().parents[1] / "examples" / "toy_task" / "task.py"
#: The tasks guide's toy task, its first example given twice.
USER_TASK_REPEATING_AN_ID = f"""
import dataclasses, importlib.util
spec = importlib.util.spec_from_file_location("toy_for_duplicates", {str(TOY_TASK)!r})
toy = importlib.util.module_from_spec(spec)
spec.loader.exec_module(toy)

def make_task():
    task = toy.make_task()
    return dataclasses.replace(task, load=lambda splits: (lambda found: found + found[:1])(task.load(splits)))
"""
#: The toy task, its examples' words without the hypothesis noun (a cache kept no noun_h for any example, silently).
USER_TASK_WITHOUT_A_ROLE = USER_TASK_REPEATING_AN_ID.replace(
    "found + found[:1]", "[dataclasses.replace(e, words={'noun_p': e.words['noun_p']}) for e in found]"
)
#: The toy task with a causal model whose label mechanism is reversed: it contradicts every gold label.
USER_TASK_CONTRADICTING_GOLD = USER_TASK_REPEATING_AN_ID.split("def make_task")[0] + """
from interp.causal import Mechanism

def reversed_labels(pairs):
    made = toy.causal_model(pairs)
    label = Mechanism(("up", "negated"), lambda up, negated: "neutral" if up != negated else "entailment")
    return dataclasses.replace(made, mechanisms={**made.mechanisms, "label": label})

def make_task():
    return dataclasses.replace(toy.make_task(), causal_model=reversed_labels)
"""

#: The toy task with groups that go wrong: a key that raises, a key that is a string, a dict for Groups, a key that
#: gives None for some examples (once pooled silently into one group named "None").
USER_TASK_GROUPS = USER_TASK_REPEATING_AN_ID.split("def make_task")[0] + """
from interp.tasks import Groups

def make_task(key):
    return dataclasses.replace(toy.make_task(), groups=Groups("nouns", key))

def raising():
    return make_task(lambda e: e.words["missing"])

def text():
    return make_task("relation")

def plain():
    return dataclasses.replace(toy.make_task(), groups={"unit": "nouns", "key": lambda e: e.relation})

def none():
    return make_task(lambda e: None if e.relation == "up" else e.relation)
"""


def _grouped(task: str):
    """``interp intervene`` on :data:`USER_TASK_GROUPS`' task ``task`` (its groups going wrong in one way each)."""
    return lambda m, t, mo, d: ["intervene", "--task", f"{t / 'groups.py'}:{task}", "--model", mo, "--out", t / "g.h5",
                                "--locations", "blocks.0.hook_resid_post@noun_h", "--variable", "up"]  # fmt: skip


def _huge_number(made, tmp_path: Path) -> Path:
    """A copy of MoNLI whose nmonli_test line 2 has a 5,000-digit depth (past Python's int-parsing limit)."""
    data = tmp_path / "monli_huge"
    shutil.copytree(made["data"], data)
    lines = (data / "nmonli_test.jsonl").read_text().splitlines()
    lines[2] = json.dumps({**json.loads(lines[3]), "depth": 0}).replace('"depth": 0', '"depth": ' + "9" * 5000)
    (data / "nmonli_test.jsonl").write_text("\n".join(lines) + "\n")
    return data

def _repeated_line(monli_dir: Path, tmp_path: Path) -> Path:
    """A copy of MoNLI whose nmonli_test repeats its line 3 at the end (read with checksums skipped, it counted twice)."""
    data = tmp_path / "monli_repeated"
    shutil.copytree(monli_dir, data)
    lines = (data / "nmonli_test.jsonl").read_text().splitlines()
    (data / "nmonli_test.jsonl").write_text("\n".join([*lines, lines[2]]) + "\n")
    return data


def _edited_sidecar(tmp_path: Path) -> Path:
    """A saved DAS rotation whose sidecar's location was edited after saving (it was scored at the other tokens)."""
    from interp.engine.interventions import RotatedSubspace
    from interp.files.subspaces import save_intervention

    weights = save_intervention(RotatedSubspace(32, 2, seed=0), tmp_path / "saved" / "lexrel", {"variable": "lexrel", "location": LOCATION})
    sidecar = weights.with_suffix(".json")
    sidecar.write_text(sidecar.read_text().replace("@w_h", "@w_p"))
    return weights


def _linked(tmp_path: Path, name: str) -> Path:
    """``tmp_path / name``, a symbolic link to the user's own folder (``folder/``, with ``mine.txt``)."""
    link = tmp_path / name
    link.symlink_to(tmp_path / "folder", target_is_directory=True)
    return link


# (id, arguments given the fixtures, the message expected in the one line)
ROWS = [
    # spoiled data
    ("spoiled line", lambda m, t, mo, d: ["evaluate", "--model", mo, "--data-dir", m["data"], "--skip-checksums"], "nmonli_test.jsonl:3"),
    ("checksum", lambda m, t, mo, d: ["cache", "--model", mo, "--out", t / "a.h5", "--data-dir", m["data"]], "SHA-256"),
    ("missing data dir", lambda m, t, mo, d: ["train", "--out", t / "m", "--data-dir", t / "none"], "does not exist"),
    ("unknown split", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--splits", "snli", "--out", t / "x.h5", "--data-dir", d], "--splits 'snli': unknown split"),
    ("task not a Task", lambda m, t, mo, d: ["intervene", "--task", f"{t / 'task.py'}:make_task", "--model", mo, "--locations", LOCATION, "--out", t / "x.h5"], "returned a int, not an interp Task"),
    ("unknown task", lambda m, t, mo, d: ["cache", "--task", "snli", "--model", mo, "--out", t / "a.h5"], "not a built-in task"),
    ("a 5,000-digit number", lambda m, t, mo, d: ["evaluate", "--model", mo, "--data-dir", _huge_number(m, t), "--skip-checksums", "--splits", "nmonli_test"], "nmonli_test.jsonl:3: unreadable JSON"),
    ("a task example without a role", lambda m, t, mo, d: ["cache", "--task", f"{t / 'norole.py'}:make_task", "--model", mo, "--out", t / "a.h5"],
     "example 'toy:1' has no word for role 'noun_h'"),
    ("a group key that raises", _grouped("raising"), "the task's groups: Groups.key raised KeyError: 'missing' on example 'toy:1'"),
    ("a group key that is a string", _grouped("text"), "Groups.key must be a function of an example"),
    ("groups given as a dict", _grouped("plain"), "task 'toy': groups must be Groups(unit=..., key=...) or None, got dict"),
    ("a group key that gives None", _grouped("none"), "Groups.key gave None for example"),
    ("a causal model contradicting the gold labels", lambda m, t, mo, d: ["demo", "--task", f"{t / 'wrong.py'}:make_task", "--model", mo, "--out", t / "demo"],
     "does not fit the dataset: it labels example toy:1"),
    ("a NUL in an argument", lambda m, t, mo, d: ["evaluate", "--model", mo, "--data-file", "runs/a\x00b.jsonl"], "holds a NUL character"),
    ("a repeated MoNLI line", lambda m, t, mo, d: ["evaluate", "--model", mo, "--data-dir", _repeated_line(d, t), "--skip-checksums", "--splits", "nmonli_test"],
     "nmonli_test.jsonl:201: repeats line 3 word for word"),
    ("a task repeating an id", lambda m, t, mo, d: ["cache", "--task", f"{t / 'dup.py'}:make_task", "--model", mo, "--out", t / "a.h5"], "occurs twice"),
    ("fragments check on MoNLI", lambda m, t, mo, d: ["fragments", "check", Path(d) / "nmonli_test.jsonl"], "nmonli_test.jsonl:1: missing field 'premise_tree'; is this a file of interp fragments generate?"),
    ("monotonicity check on MoNLI", lambda m, t, mo, d: ["monotonicity", "check", Path(d) / "nmonli_test.jsonl"], "nmonli_test.jsonl:1: missing field 'premise_tree'"),
    # corrupt checkpoints
    ("empty weights", lambda m, t, mo, d: ["cache", "--model", m["models"]["empty"], "--out", t / "a.h5", "--data-dir", d], "not a valid safetensors file (header too small)"),
    ("truncated weights", lambda m, t, mo, d: ["intervene", "--model", m["models"]["truncated"], "--locations", LOCATION, "--out", t / "x.h5", "--data-dir", d], "not a valid safetensors file"),
    ("no tokenizer", lambda m, t, mo, d: ["location-sweep", "--model", m["models"]["no tokenizer"], "--out", t / "sw", "--data-dir", d], "has no tokenizer files"),
    ("pickle shards", lambda m, t, mo, d: ["train", "--model", m["models"]["bin shards"], "--out", t / "m", "--data-dir", d], "is not a .safetensors file"),
    ("LABEL_k without a map", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["generic"], "--data-dir", d], "say what each means with --label-map (0=NAME,1=NAME"),
    ("labels the task lacks", lambda m, t, mo, d: ["intervene", "--model", m["models"]["yes/no"], "--locations", LOCATION, "--out", t / "x.h5", "--data-dir", d], "has label 'yes', which task 'monli' neither has"),
    ("a label map missing an id", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["generic"], "--label-map", "0=entailment", "--data-dir", d], "--label-map leaves out id 1"),
    ("train's work folder a symlink", lambda m, t, mo, d: ["train", "--model", mo, "--splits", "nmonli_test", "--max-examples", "16", "--epochs", "1",
                                                            "--eval-splits", "", "--out", _linked(t, "m.partial").with_suffix(""), "--data-dir", d],
     "m.partial is a symbolic link"),
    ("intervene's unit folder a symlink", lambda m, t, mo, d: ["intervene", "--model", mo, "--max-examples", "6", "--locations", LOCATION,
                                                                "--out", _linked(t, "z.h5.parts").with_suffix(""), "--data-dir", d],
     "z.h5.parts is a symbolic link"),
    ("a DAS sidecar edited after saving", lambda m, t, mo, d: ["das", "--model", mo, "--load", _edited_sidecar(t), "--data-dir", d],
     "the sidecar was edited: location is 'blocks.1.hook_resid_post@w_p'"),
    ("a label map inventing an id", lambda m, t, mo, d: ["das", "--model", m["models"]["generic"], "--label-map", "0=entailment,1=neutral,2=contradiction", "--out", t / "das", "--data-dir", d], "there is no id 2"),
    ("a label map not ID=NAME", lambda m, t, mo, d: ["train", "--model", m["models"]["generic"], "--label-map", "entailment,neutral", "--out", t / "m", "--data-dir", d], "--label-map: 'entailment' is not ID=NAME"),
    ("a label map for a headless model", lambda m, t, mo, d: ["cache", "--model", "minilm", "--label-map", "0=entailment,1=neutral", "--out", t / "a.h5", "--data-dir", d], "has no classification head to name the labels of"),
    ("pytorch_model.bin", lambda m, t, mo, d: ["intervene", "--model", m["models"]["pickled"], "--locations", LOCATION, "--out", t / "x.h5", "--data-dir", d], "it holds pytorch_model.bin: convert it once with interp convert-checkpoint"),
    ("convert a safetensors checkpoint", lambda m, t, mo, d: ["convert-checkpoint", mo, t / "converted"], "already holds safetensors weights"),
    ("convert over a file", lambda m, t, mo, d: ["convert-checkpoint", m["models"]["pickled"], t / "notes.txt"], "notes.txt already exists"),
    ("unsupported architecture", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["bloom"], "--data-dir", d], "is a 'bloom' model; interp supports these families: bert, roberta"),
    ("evaluate empty weights", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["empty"], "--data-dir", d], "not a valid safetensors file"),
    # corrupt or edited HDF5
    ("truncated cache", lambda m, t, mo, d: ["probe", "--cache", _truncated(m["cache"], t), "--out", t / "p"], "not a readable HDF5 file"),
    ("cache location deleted", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: h.__delitem__(LOCATION)), "--out", t / "p"], f"dataset {LOCATION} is missing"),
    ("cache label shortened", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: _shorten(h, "label")), "--out", t / "p"], "dataset label has shape (199,)"),
    ("cache values deleted", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: h.__delitem__("values/lexrel")), "--out", t / "p"], "--targets 'lexrel': the cache keeps values of negated, output"),
    ("cache rows of NaN", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: _nan_rows(h, LOCATION)), "--out", t / "p"], f"dataset {LOCATION} has NaN or infinite values in 3 row(s), examples "),
    ("cache rows of NaN as sources", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--cache", edited(m, t, "cache", lambda h: _nan_rows(h, LOCATION)), "--out", t / "x.h5", "--data-dir", d], "NaN or infinite values"),
    ("report on an edited graph.json", lambda m, t, mo, d: ["report", _graph_spoiled(m, t, False)], "graph.json: changed since 'cliques' wrote it"),
    ("report on a malformed graph.json", lambda m, t, mo, d: ["report", _graph_spoiled(m, t, True)], "graph.json: not a readable graph (TypeError"),
    ("cache example_ids shortened", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: _shorten(h, "example_ids")), "--out", t / "p"], "dataset example_ids has shape (199,), expected (200,)"),
    ("a subcommand's choice", lambda m, t, mo, d: ["fragments", "generate", "--setting", "bogus", "--out", t / "f.jsonl"], "'bogus' is not one of 'simple', 'hard'; see interp fragments generate --help"),
    ("cache vectors reshaped", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--cache", edited(m, t, "cache", lambda h: _reshape(h, LOCATION)), "--out", t / "x.h5", "--data-dir", d], f"dataset {LOCATION} has shape (200, 1)"),
    ("cache positions deleted", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--cache", edited(m, t, "cache", lambda h: h.__delitem__("positions")), "--out", t / "x.h5", "--data-dir", d], "dataset positions is missing"),
    ("causal_pred deleted", lambda m, t, mo, d: ["cliques", "--interventions", edited(m, t, "iv", lambda h: h.__delitem__(f"lexrel/{LOCATION}/causal_pred")), "--out", t / "c"], "causal_pred is missing"),
    ("values shortened", lambda m, t, mo, d: ["cliques", "--interventions", edited(m, t, "iv", lambda h: _shorten(h, "values/lexrel")), "--out", t / "c"], "dataset values/lexrel has shape (11,)"),
    ("logits reshaped", lambda m, t, mo, d: ["cliques", "--interventions", edited(m, t, "iv", lambda h: _reshape(h, f"interchange/{LOCATION}/logits")), "--out", t / "c"], "logits has shape (12, 1)"),
    ("old format", lambda m, t, mo, d: ["cliques", "--interventions", edited(m, t, "iv", lambda h: h.attrs.__setitem__("format", "interp.interventions/1")), "--out", t / "c"], "of format 'interp.interventions/1'"),
    ("a cache given as interventions", lambda m, t, mo, d: ["cliques", "--interventions", m["cache"], "--out", t / "c"], "not an interp interventions file"),
    ("random bytes", lambda m, t, mo, d: ["probe", "--cache", _random(t), "--out", t / "p"], "not a readable HDF5 file"),
    # bad flags
    ("folds", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "p", "--folds", "1"], "--folds must be at least 2"),
    ("seeds", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "p", "--probe-seeds", "0"], "--probe-seeds must be at least 1"),
    ("folds beyond a class", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "p", "--folds", "150"], "--folds 150: target"),
    ("target", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "p", "--targets", "colour"], "--targets 'colour'"),
    ("probe location", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "p", "--locations", "blocks.9.hook_resid_post@w_h"], "layer 9 is out of range"),
    ("unit size", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--unit-size", "0", "--out", t / "x.h5"], "--unit-size must be at least 1"),
    ("precision", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--precision", "fp8", "--out", t / "x.h5"], "--precision must be one of"),
    ("wordpiece", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--wordpiece", "middle", "--out", t / "x.h5"], "--wordpiece must be one of"),
    ("variable", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--variable", "colour", "--out", t / "x.h5", "--data-dir", d], "has no such variable"),
    ("role", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", "blocks.1.hook_resid_post@w_z", "--out", t / "x.h5", "--data-dir", d], "unknown token role 'w_z'"),
    ("alphas", lambda m, t, mo, d: ["cliques", "--interventions", m["iv"], "--out", t / "c", "--alphas", "0-3"], "--alphas"),
    ("min size", lambda m, t, mo, d: ["cliques", "--interventions", m["iv"], "--out", t / "c", "--min-size", "1"], "--min-size must be an integer of at least 2, got 1"),
    ("clique variable", lambda m, t, mo, d: ["cliques", "--interventions", m["iv"], "--out", t / "c", "--variable", "negated"], "not for 'negated'"),
    ("sweep examples", lambda m, t, mo, d: ["location-sweep", "--model", mo, "--out", t / "sw", "--examples", "1"], "--examples must be at least 2"),
    ("demo seeds", lambda m, t, mo, d: ["demo", "--model", mo, "--out", t / "demo", "--probe-seeds", "0", "--data-dir", d], "--probe-seeds must be at least 1"),
    ("demo location", lambda m, t, mo, d: ["demo", "--model", mo, "--out", t / "demo", "--location", "blocks.9.hook_resid_post@w_h", "--data-dir", d], "layer 9 is out of range for a model with 2 blocks"),
    ("demo location role", lambda m, t, mo, d: ["demo", "--model", mo, "--out", t / "demo", "--location", "blocks.1.hook_resid_post@wh", "--data-dir", d], "unknown token role 'wh'"),
    ("epochs", lambda m, t, mo, d: ["train", "--epochs", "0", "--out", t / "m"], "--epochs must be at least 1"),
    ("seeds with an empty item", lambda m, t, mo, d: ["train", "--seeds", "1,,2", "--out", t / "m"], "--seeds '1,,2' has an empty item"),
    ("--seeds beside --seed", lambda m, t, mo, d: ["train", "--seeds", "0,1", "--seed", "3", "--out", t / "m"], "give --seed (one run) or --seeds (one run per seed), not both"),
    ("an IIT flag without --iit", lambda m, t, mo, d: ["train", "--iit-subspace", "4", "--out", t / "m", "--data-dir", d], "give --iit VARIABLE@LOCATION too"),
    ("cache dtype", lambda m, t, mo, d: ["cache", "--model", mo, "--out", t / "a.h5", "--dtype", "int8"], "--dtype must be one of"),
    # outputs interp must not replace or cannot write
    ("cache over a text file", lambda m, t, mo, d: ["cache", "--model", mo, "--out", t / "notes.txt", "--data-dir", d], "is not an interp file of this kind"),
    ("intervene over a directory", lambda m, t, mo, d: ["intervene", "--model", mo, "--locations", LOCATION, "--out", t / "folder", "--data-dir", d, "--overwrite"], "is a directory"),  # click's own check, in one line
    ("a foreign .parts folder", lambda m, t, mo, d: ["intervene", "--model", mo, "--max-examples", "4", "--locations", LOCATION, "--out", t / "y.h5", "--data-dir", d], "interp did not make it"),
    ("train over a file", lambda m, t, mo, d: ["train", "--model", mo, "--out", t / "notes.txt", "--overwrite", "--data-dir", d], "is a file"),
    ("train over a foreign folder", lambda m, t, mo, d: ["train", "--model", mo, "--out", t / "folder", "--overwrite", "--data-dir", d], "interp did not write"),
    ("probe out a file", lambda m, t, mo, d: ["probe", "--cache", m["cache"], "--out", t / "notes.txt", "--locations", LOCATION], "is a file"),
    ("out under a file", lambda m, t, mo, d: ["cliques", "--interventions", m["iv"], "--out", t / "notes.txt" / "c"], "cannot create directory"),
    ("inoculation-figure over a file", lambda m, t, mo, d: ["inoculation-figure", m["inoc"], "--out", t / "notes.txt"], "notes.txt already exists; choose another path or pass --overwrite"),
    # a config and its weights that disagree; pickles; labels
    ("a config of 3 labels over a head of 2 rows", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["three over two"], "--data-dir", d],
     "config.json names 3 labels (num_labels, id2label), but model.safetensors's head classifier.weight has 2 rows"),
    ("train from a config of 3 labels over 2 rows", lambda m, t, mo, d: ["train", "--model", m["models"]["three over two"], "--out", t / "m", "--data-dir", d],
     "names 3 labels (num_labels, id2label), but model.safetensors's head"),
    ("intervene with a config of 3 labels over 2 rows", lambda m, t, mo, d: ["intervene", "--model", m["models"]["three over two"], "--locations", LOCATION,
                                                                              "--out", t / "x.h5", "--data-dir", d], "names 3 labels"),
    ("convert an empty .bin", lambda m, t, mo, d: ["convert-checkpoint", m["models"]["empty bin"], t / "conv"], "pytorch_model.bin: not a torch weights file (EOFError: empty or truncated)"),
    ("convert a planted pickle", lambda m, t, mo, d: ["convert-checkpoint", m["models"]["planted bin"], t / "conv"],
     "pytorch_model.bin: refused: it holds Python objects other than tensors, which unpickling would run"),
    ("a label map renaming the config's labels", lambda m, t, mo, d: ["evaluate", "--model", mo, "--label-map", "0=neutral,1=entailment", "--data-dir", d],
     "--label-map 0=neutral,1=entailment: model"),
    ("a label map naming labels the task lacks", lambda m, t, mo, d: ["evaluate", "--model", m["models"]["generic"], "--label-map", "0=yes,1=no", "--data-dir", d],
     "--label-map 0=yes,1=no: model"),
    ("probe a cache whose dtype attribute lies", lambda m, t, mo, d: ["probe", "--cache", edited(m, t, "cache", lambda h: h.attrs.__setitem__("dtype", "float16")),
                                                                      "--out", t / "p", "--locations", LOCATION], "holds float32, but the file's dtype attribute says float16"),
    # generated files and run folders
    ("fragments check on a binary file", lambda m, t, mo, d: ["fragments", "check", m["fragment binary"]], "binary.jsonl: cannot read"),
    ("fragments check on an empty file", lambda m, t, mo, d: ["fragments", "check", m["fragment empty"]], "empty.jsonl: empty file, no examples"),
    ("fragments check on a label maybe", lambda m, t, mo, d: ["fragments", "check", m["fragment maybe"]], "maybe.jsonl:2: label 'maybe' is not one of entailment, neutral, contradiction"),
    ("fragments generate 10^8 pairs", lambda m, t, mo, d: ["fragments", "generate", "--fragment", "comparative", "--n-test", "100000000", "--out", t / "f.jsonl"],
     "--n-test must be an integer of at least 0 and at most 20000, got 100000000"),
    ("mqnli 10^9 dev pairs", lambda m, t, mo, d: ["mqnli", "--n-dev", "1000000000", "--out", t / "q.jsonl"], "--n-dev must be an integer of at least 0 and at most 1000000"),
    ("inoculation-figure without column k", lambda m, t, mo, d: ["inoculation-figure", m["inoc no k"], "--out", t / "p.png"], "inoculation.csv:2: no 'k'"),
    ("report on a metrics.json of null", lambda m, t, mo, d: ["report", m["null run"], "--out", t / "r"], "metrics.json: holds JSON null, not the object interp writes there"),
]


def _truncated(path: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "truncated.h5"
    copy.write_bytes(path.read_bytes()[:4096])
    return copy


def _random(tmp_path: Path) -> Path:
    copy = tmp_path / "random.h5"
    copy.write_bytes(np.random.RandomState(0).bytes(5000))
    return copy


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_bad_input_gives_one_line_exit_2_and_leaves_the_output_folder_as_it_was(row, made, tiny_classifier_dir, monli_dir, tmp_path):
    _, arguments, message = row
    (tmp_path / "task.py").write_text(USER_TASK_NOT_A_TASK)
    (tmp_path / "dup.py").write_text(USER_TASK_REPEATING_AN_ID)
    (tmp_path / "norole.py").write_text(USER_TASK_WITHOUT_A_ROLE)
    (tmp_path / "wrong.py").write_text(USER_TASK_CONTRADICTING_GOLD)
    (tmp_path / "groups.py").write_text(USER_TASK_GROUPS)
    (tmp_path / "notes.txt").write_text("my notes\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "mine.txt").write_text("keep me\n")
    (tmp_path / "y.h5.parts").mkdir()
    (tmp_path / "y.h5.parts" / "mine.txt").write_text("keep me\n")
    args = arguments(made, tmp_path, tiny_classifier_dir, monli_dir)
    before = snapshot(tmp_path)
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("interp: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.output and message in result.stderr, result.stderr
    assert snapshot(tmp_path) == before


def test_the_table_is_at_least_forty_rows():
    assert len(ROWS) >= 40 and len({r[0] for r in ROWS}) == len(ROWS)


@contextmanager
def tmpfs(mount: Path, options: str):
    """A 64 KiB tmpfs mounted at ``mount`` with ``options`` (skips the test where mounting is not allowed)."""
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"{options}size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()})")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs: every output that needs more fails with ENOSPC."""
    with tmpfs(tmp_path / "full", "") as mount:
        yield mount


FULL = [
    ("cache", lambda f, mo, d, m: ["cache", "--model", mo, "--splits", "nmonli_test", "--out", f / "a.h5", "--data-dir", d], "MB are free"),
    ("intervene", lambda f, mo, d, m: ["intervene", "--model", mo, "--max-examples", "150", "--locations", LOCATION, "--out", f / "x.h5", "--data-dir", d], "MB are free"),
    ("location-sweep", lambda f, mo, d, m: ["location-sweep", "--model", mo, "--examples", "150", "--out", f / "sw", "--data-dir", d], "MB are free"),
    ("probe", lambda f, mo, d, m: ["probe", "--cache", m["cache"], "--locations", LOCATION, "--out", f / "p"], "No space left on device"),
    ("cliques", lambda f, mo, d, m: ["cliques", "--interventions", m["iv"], "--min-size", "2", "--out", f / "c"], "No space left on device"),
    ("train", lambda f, mo, d, m: ["train", "--model", mo, "--splits", "nmonli_test", "--max-examples", "16", "--epochs", "2", "--eval-splits", "", "--out", f / "m", "--data-dir", d], "No space left on device"),
    ("das", lambda f, mo, d, m: ["das", "--model", mo, "--max-examples", "60", "--locations", LOCATION, "--subspace", "2", "--train-pairs", "32",
                                 "--test-pairs", "16", "--epochs", "1", "--out", f / "das", "--data-dir", d], "MB are free"),
    ("head-sweep", lambda f, mo, d, m: ["head-sweep", "--model", mo, "--max-per-split", "20", "--out", f / "hs", "--data-dir", d], "MB are free"),
]


@pytest.mark.parametrize("row", FULL, ids=[r[0] for r in FULL])
def test_a_full_disk_gives_one_line_and_leaves_nothing(row, full_disk, made, tiny_classifier_dir, monli_dir):
    _, arguments, message = row
    filler = full_disk / "filler"
    filler.write_bytes(b"\0" * 40_000)  # most of the 64 KiB taken
    before = snapshot(full_disk)
    args = arguments(full_disk, tiny_classifier_dir, monli_dir, made)
    result = run(*args, *(["--quiet"] if args[0] != "cliques" else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output and message in result.stderr, result.stderr
    assert snapshot(full_disk) == before


@pytest.fixture
def read_only(tmp_path):
    """A tmpfs mounted read-only (EROFS for every write, root included)."""
    with tmpfs(tmp_path / "ro", "ro,") as mount:
        yield mount


@pytest.mark.parametrize("row", FULL, ids=[r[0] for r in FULL])
def test_a_read_only_folder_is_named_as_the_cause(row, read_only, made, tiny_classifier_dir, monli_dir):
    """Every writing command says the folder is on a read-only file system (not a traceback, not "too little free space")."""
    _, arguments, _ = row
    args = arguments(read_only, tiny_classifier_dir, monli_dir, made)
    result = run(*args, *(["--quiet"] if args[0] != "cliques" else []))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.output, result.stderr
    assert "read-only file system" in result.stderr.lower() and "MB are free" not in result.stderr, result.stderr
    assert not any(read_only.iterdir())


def test_a_two_label_model_on_a_three_label_task_is_refused_unless_the_fold_is_asked_for(tiny_classifier_dir, fragments_dir, tmp_path):
    args = ("--model", tiny_classifier_dir, "--task", "fragment:negation", "--splits", "test", "--data-dir", fragments_dir)
    refused = run("evaluate", *args)
    assert refused.exit_code == 2 and refused.stderr.count("\n") == 1, refused.output
    assert "has 2 labels (entailment, neutral), task 'fragment:negation' has 3" in refused.stderr and "--fold-labels" in refused.stderr
    scored = run("evaluate", *args, "--fold-labels")
    assert scored.exit_code == 0, scored.output
    assert "interp: warning: model" in scored.stderr and "gold contradiction is scored as neutral" in scored.stderr, scored.stderr
    inoculation = run("inoculate", "--model", tiny_classifier_dir, "--original", "monli:nmonli_test", "--challenge", "fragment:negation",
                      "--k", "4", "--out", tmp_path / "inoc", "--skip-checksums")  # fmt: skip
    assert inoculation.exit_code == 2 and "--fold-labels" in inoculation.stderr, inoculation.output
    assert not (tmp_path / "inoc").exists()  # refused before any unit
    training = run("train", "--model", tiny_classifier_dir, "--task", "fragment:negation", "--data-dir", fragments_dir, "--max-examples", "8",
                   "--epochs", "1", "--out", tmp_path / "t")  # fmt: skip
    assert training.exit_code == 2 and "--fold-labels" in training.stderr, training.output
    assert not (tmp_path / "t").exists() and not list(tmp_path.glob("t*.partial"))  # refused before any folder


def test_das_says_when_fewer_held_out_pairs_exist_than_asked(tiny_classifier_dir, monli_dir, tmp_path):
    result = run("das", "--model", tiny_classifier_dir, "--max-examples", "20", "--locations", LOCATION, "--subspace", "2", "--train-pairs", "16",
                 "--test-pairs", "32", "--epochs", "1", "--out", tmp_path / "das", "--data-dir", monli_dir, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "--test-pairs 32: only" in line]  # named as the CLI's flag
    assert said and said[0].startswith("interp: warning: ") and "balanced pairs exist among these 4 examples" in said[0], result.stderr
    rows = (tmp_path / "das" / "das.csv").read_text().splitlines()
    assert int(rows[1].split(",")[rows[0].split(",").index("test_pairs")]) < 32  # what was used is what the warning says


def test_convert_checkpoint_copies_only_the_config_the_tokenizer_and_the_weights(made, tmp_path):
    source = tmp_path / "download"
    shutil.copytree(made["models"]["pickled"], source)
    (source / "optimizer.pt").write_bytes((source / "pytorch_model.bin").read_bytes())  # another pickle, never copied
    (source / "training_args.bin").write_bytes(b"\x80\x04N.")
    (source / "notes.txt").write_text("mine\n")
    result = run("convert-checkpoint", source, tmp_path / "converted")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "converted").iterdir()) == ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"]


def test_an_input_longer_than_the_model_reads_is_truncated_when_the_tokenizer_names_no_limit(tiny_classifier_dir, monli_dir, tmp_path):
    """A tokenizer saved without model_max_length means "no limit"; the model still has 128 positions (an IndexError before)."""
    model = tmp_path / "model"
    shutil.copytree(tiny_classifier_dir, model)
    settings = json.loads((model / "tokenizer_config.json").read_text())
    settings.pop("model_max_length", None)
    (model / "tokenizer_config.json").write_text(json.dumps(settings))
    data = tmp_path / "monli"
    shutil.copytree(monli_dir, data)
    lines = (data / "nmonli_test.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["sentence1"] = record["sentence1"] + " and then" * 150  # about 300 tokens; the substituted word stays near the start
    (data / "nmonli_test.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    result = run("cache", "--model", model, "--splits", "nmonli_test", "--out", tmp_path / "a.h5", "--data-dir", data, "--skip-checksums", "--quiet")
    assert result.exit_code == 0, result.output
    with h5py.File(tmp_path / "a.h5") as handle:
        assert handle.attrs["complete"]
