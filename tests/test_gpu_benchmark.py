"""`benchmarks/gpu.py --smoke`: the GPU benchmark's every arm at tiny sizes on the CPU, so the script cannot rot between GPU runs."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(seconds=60)

REPO = Path(__file__).resolve().parents[1]


def _load():
    spec = importlib.util.spec_from_file_location("gpu_benchmark", REPO / "benchmarks" / "gpu.py")
    gpu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu)
    return gpu


def test_the_gpu_benchmark_runs_every_arm_at_tiny_sizes(monli_dir, tmp_path, capsys):
    gpu = _load()
    arms = "finetune,allpairs,engine,das,cache,profile"
    recipes = "3,1e-4,32,0.1;3,1e-4,32,0.1,shuffle"  # the default batching, and a plain shuffle
    results = gpu.main(["--smoke", "--monli", str(monli_dir), "--seeds", "0,1", "--sizes", "minilm", "--arms", arms, "--recipes", recipes,
                        "--out", str(tmp_path)])  # fmt: skip
    assert [(r["recipe"], r["seed"]) for r in results["finetune"]] == [(recipe, seed) for recipe in recipes.split(";") for seed in (0, 1)]
    assert all(r["low"] <= r["nmonli_test"] <= r["high"] for r in results["finetune"])
    assert [r["precision"] for r in results["allpairs"]] == ["fp32", "tf32", "bf16"]
    assert all(r["pairs"] == 24 * 24 and r["engine_s"] > 0 and r["wall_s"] >= r["engine_s"] for r in results["allpairs"])
    assert all(r["agreement"] is not None for r in results["allpairs"][1:])  # the reduced precisions' check against fp32
    assert [r["size"] for r in results["engine"]] == ["minilm"] and all(r["labels_agree"] for r in results["engine"])
    assert all(max(r["engine_calls_pairs_per_s"]["bf16"]) == r["engine_bf16_pairs_per_s"] and len(r["engine_calls_pairs_per_s"]["fp32"]) == 2
               for r in results["engine"])  # the fastest of --repeats calls
    assert all(r["engine_tf32_pairs_per_s"] > 0 and r["engine_bf16_pairs_per_s"] > 0 and r["pyvene_labels_agree"] in (None, 1.0)
               for r in results["engine"])
    assert [r["precision"] for r in results["profile"]] == ["fp32", "tf32", "bf16"] and "Name" in results["profile"][0]["table"]
    assert {"interp.prefix", "interp.suffix", "interp.unit_writes (writer thread)"} <= set(results["profile"][0]["host_steps"])
    assert results["das"]["train_pairs_per_s"] > 0 and results["cache"]["seconds"] > 0
    das = results["das"]
    assert 0 <= das["held_out_iia"] <= 1 and das["steps_pairs_per_s"] > das["train_pairs_per_s"] and das["prefix_s"] > 0
    if importlib.util.find_spec("pyvene") is None:  # a benchmark extra: the arm says it is skipped
        assert das["pyvene_pairs_per_s"] is None and "absent" in das["pyvene"]
    else:  # the same initial rotation, batches and order: the same held-out IIA (float rounding may move a pair or two)
        assert das["pyvene_pairs_per_s"] > 0 and das["pyvene_held_out_iia"] == pytest.approx(das["held_out_iia"], abs=1 / 16), das
    assert json.loads((tmp_path / "gpu.json").read_text())["env"]["smoke"] is True
    before = (tmp_path / "gpu.json").read_bytes()
    with pytest.raises(SystemExit, match="--repeats must be at least 1"):
        gpu.main(["--smoke", "--monli", str(monli_dir), "--arms", "engine", "--repeats", "0"])
    with pytest.raises(SystemExit, match="gpu.json exists"):  # another run into the same folder keeps the first run's figures
        gpu.main(["--smoke", "--monli", str(monli_dir), "--arms", "cache", "--out", str(tmp_path)])
    assert (tmp_path / "gpu.json").read_bytes() == before
    table = capsys.readouterr().out.splitlines()
    assert table[-1].startswith("| whole script |") and any("intervene, all 576 pairs, bf16" in line for line in table)
    assert any(line.startswith("| DAS k=64 training, MiniLM, one epoch | ") and "held-out IIA" in line for line in table)


def test_an_arm_that_fails_is_reported_and_the_later_arms_still_run(monli_dir, tmp_path, capsys, monkeypatch):
    """One GPU call is all a lease may give: a failure (a kernel's limit, a tensor on the wrong device) must not cost the rest."""
    gpu = _load()

    def fails(*args, **kwargs):
        raise RuntimeError("CUDA error: invalid argument\nmore")

    monkeypatch.setattr(gpu, "all_pairs_arm", fails)
    results = gpu.main(["--smoke", "--monli", str(monli_dir), "--arms", "finetune,allpairs,cache", "--out", str(tmp_path)])
    assert results["allpairs"] == {"error": "RuntimeError: CUDA error: invalid argument"}
    assert results["cache"]["seconds"] > 0  # the arm after it ran
    assert json.loads((tmp_path / "gpu.json").read_text())["allpairs"]["error"].startswith("RuntimeError")
    out = capsys.readouterr()
    assert "| allpairs | failed: RuntimeError: CUDA error: invalid argument |" in out.out.splitlines()
    assert "Traceback" in out.err


def test_a_precision_that_fails_leaves_the_others_measured(monli_dir, tmp_path, capsys, monkeypatch):
    """bf16 failing (as it once did at the attention kernels' grid limit) keeps fp32's and tf32's rows."""
    import interp.jobs.intervene as intervene

    gpu, real = _load(), intervene.run_interventions

    def fails_in_bf16(config, **kwargs):
        if config.precision == "bf16":
            raise RuntimeError("CUDA error: invalid argument")
        return real(config, **kwargs)

    monkeypatch.setattr(intervene, "run_interventions", fails_in_bf16)
    results = gpu.main(["--smoke", "--monli", str(monli_dir), "--arms", "finetune,allpairs", "--out", str(tmp_path)])
    assert [r["precision"] for r in results["allpairs"]] == ["fp32", "tf32", "bf16"]
    assert results["allpairs"][1]["engine_s"] > 0 and results["allpairs"][2] == {"precision": "bf16", "compile": "auto", "error": "RuntimeError: CUDA error: invalid argument"}
    assert "| intervene, all pairs, bf16, auto | failed: RuntimeError: CUDA error: invalid argument |" in capsys.readouterr().out.splitlines()


def test_prepare_writes_what_a_gpu_machine_without_network_needs(monli_dir, tmp_path, capsys):
    """`--prepare DIR`: the embedded model as float16 (cast back to float32, its hidden states those of the installed
    model to float16's rounding), MoNLI with its checksums, under the 64 MiB a GPU call carries; an existing folder is refused untouched."""
    import torch
    from safetensors import safe_open

    import interp

    gpu = _load()
    folder = tmp_path / "carry"
    assert gpu.main(["--prepare", str(folder), "--monli", str(monli_dir)]) == {}
    assert sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) < 64 * 2**20
    with safe_open(folder / "minilm" / "model.safetensors", "pt") as weights:
        assert {str(weights.get_tensor(k).dtype) for k in weights.keys() if "position_ids" not in k} == {"torch.float16"}
    task = interp.load_task("monli", data_dir=str(folder / "monli"))  # checksums verified
    examples = task.examples(("nmonli_test",))[:16]
    carried = interp.load_model(str(folder / "minilm"), labels=task.labels, seed=0)
    installed = interp.load_model("minilm", labels=task.labels, seed=0)
    carried.module.float()  # as the script does
    with torch.no_grad():
        hidden = [m.module.base_model(**m.tokenizer([e.premise for e in examples], [e.hypothesis for e in examples], padding=True,
                                                  return_tensors="pt")).last_hidden_state for m in (carried, installed)]  # fmt: skip
    assert 0 < (hidden[0] - hidden[1]).abs().max() < 2e-2  # float16 rounding of the weights, nothing more
    (folder / "mine").write_text("kept")
    with pytest.raises(FileExistsError):
        gpu.prepare(folder, str(monli_dir))
    assert (folder / "mine").read_text() == "kept" and not (tmp_path / "carry.partial").exists()


def test_the_smollm2_arm_carries_its_shape_and_tokenizer_and_draws_weights_where_they_are_not(monli_dir, tmp_path, tmp_path_factory, monkeypatch):
    """`--prepare DIR --with-smollm2` copies the converted folder's config and tokenizer, not its weights (here the
    real SmolLM2 cut to two blocks, standing for the converted package); from that folder the arm builds SmolLM2's
    shape with random weights, said so, its tokenizer reading every pair as the pretrained model's does; with the
    weights in the folder it loads them."""
    import shutil

    import torch
    from gguf_files import truncated_checkpoint

    import interp
    import interp.models.gguf as gguf_module

    converted = truncated_checkpoint(tmp_path_factory, "smollm2-135m")
    monkeypatch.setattr(gguf_module, "packaged_gguf", lambda name: Path(name))
    monkeypatch.setattr(gguf_module, "converted_checkpoint", lambda path: converted)
    gpu = _load()
    folder = tmp_path / "carry"
    gpu.main(["--prepare", str(folder), "--monli", str(monli_dir), "--with-smollm2"])
    carried = folder / "smollm2"
    assert {"config.json", "tokenizer.json"} <= {f.name for f in carried.iterdir()} and not (carried / "model.safetensors").exists()
    smollm2 = importlib.import_module("gpu_smollm2")
    task = interp.load_task("monli", data_dir=str(monli_dir))
    args = gpu.parse(["--smollm2", str(carried), "--monli", str(monli_dir)])
    drawn, weights = smollm2.load(args, task)
    assert weights.startswith("random at SmolLM2-135M's shape") and drawn.n_layers == 2 and drawn.module.config.num_key_value_heads == 3
    shutil.copyfile(converted / "model.safetensors", carried / "model.safetensors")
    own, weights = smollm2.load(args, task)
    assert weights.startswith("pretrained") and drawn.labels == own.labels == task.labels
    examples = task.examples(("pmonli", "nmonli_test"), per_split=8, seed=0)
    pairs = [interp.IntervenableModel(m, task).encode(examples) for m in (drawn, own)]
    assert [e.input_ids for e in pairs[0]] == [e.input_ids for e in pairs[1]] and [e.positions for e in pairs[0]] == [e.positions for e in pairs[1]]
    inner = [dict(m.module.named_parameters())["inner.model.layers.0.mlp.down_proj.weight"] for m in (drawn, own)]
    assert not torch.equal(*inner)  # drawn afresh, not the carried weights


def test_the_recipe_screen_runs_fine_tunings_in_parallel_and_aggregates_over_seeds(monli_dir, tmp_path):
    """`benchmarks/recipes.py`: worker processes share the jobs; every (recipe, seed) comes back once, each recipe is
    summarized over its seeds, and the file is written (and never replaced)."""
    import subprocess
    import sys

    recipes = "3,1e-4,32,0.1;5,5e-5,16,0.2,max_grad_norm=1,head_epochs=1"
    command = [sys.executable, str(REPO / "benchmarks" / "recipes.py"), "--smoke", "--monli", str(monli_dir), "--workers", "2", "--seeds", "0-1",
               "--recipes", recipes, "--out", str(tmp_path)]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads((tmp_path / "recipes.json").read_text())
    assert sorted((r["recipe"], r["seed"]) for r in found["rows"]) == sorted((r, s) for r in recipes.split(";") for s in (0, 1))
    assert all("error" not in r and r["low"] <= r["nmonli_test"] <= r["high"] for r in found["rows"])
    assert [(s["recipe"], s["n"]) for s in found["summary"]] == [(r, 2) for r in recipes.split(";")]
    assert all(s["lowest"] <= s["median"] <= max(s["by_seed"].values()) for s in found["summary"])
    assert "| 5,5e-5,16,0.2,max_grad_norm=1,head_epochs=1 | 2 |" in done.stdout
    again = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert again.returncode != 0 and "recipes.json exists" in again.stderr
    bad = subprocess.run([*command[:-2], "--recipes", "5,5e-5,16,0.2,max_grad_norm=-1"], capture_output=True, text=True, timeout=600)
    assert bad.returncode != 0 and "--recipes: max_grad_norm= must be" in bad.stderr and "Traceback" not in bad.stderr


def test_a_recipe_names_its_settings():
    spec = importlib.util.spec_from_file_location("recipes_benchmark", REPO / "benchmarks" / "recipes.py")
    recipes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recipes)
    assert recipes.parse_recipe("5,5e-5,16,0.2,shuffle,0.1,max_grad_norm=1") == {
        "epochs": 5, "lr": 5e-5, "batch_size": 16, "warmup_ratio": 0.2, "batching": "shuffle", "weight_decay": 0.1, "max_grad_norm": 1.0}
    assert recipes.parse_recipe("5,5e-5,16,0.2,head_epochs=2,head_lr=1e-3,precision=bf16") == {
        "epochs": 5, "lr": 5e-5, "batch_size": 16, "warmup_ratio": 0.2, "head_epochs": 2, "head_lr": 1e-3, "precision": "bf16"}
    assert recipes.parse_recipe("5,5e-5,16,0.2,reinit_pooler=1")["reinit_pooler"] is True
    assert recipes.parse_recipe("5,5e-5,16,0.2,reinit_pooler=false")["reinit_pooler"] is False
    assert recipes.parse_seeds("0-2,7") == [0, 1, 2, 7]
    for bad in ("5,5e-5,16", "5,5e-5,16,0.2,clip=1", "5,5e-5,16,0.2,seed=3", "5,5e-5,16,0.2,reinit_pooler=yes"):
        with pytest.raises(ValueError, match="recipe"):
            recipes.parse_recipe(bad)
