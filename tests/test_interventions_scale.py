"""`interp intervene` at scale: kill -9 and resume, torchrun workers, out-of-memory halving, precision."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from interp.api.intervenable import IntervenableModel
from interp.api.loading import load_task
from interp.api.specs import DataSpec
import interp.engine.batched as engine
from interp.engine import interchange_logits, source_vectors
from interp.files.interventions import Fp32Check
from interp.hooks.locations import Location
from interp.jobs.distributed import Workers
from interp.jobs.fp32_check import CHECK_BASES, compare_with_fp32, sample_pairs
from interp.tasks.monli import encode_examples, load_monli

LOCATIONS = "blocks.1.hook_resid_post@w_h,blocks.0.hook_resid_pre@w_p"


def intervene(tiny_classifier_dir, monli_dir, out: Path, *extra: str) -> list[str]:
    return [
        "intervene", "--model", str(tiny_classifier_dir), "--out", str(out), "--splits", "nmonli_test",
        "--max-examples", "120", "--locations", LOCATIONS, "--unit-size", "2", "--batch-size", "16",
        "--data-dir", str(monli_dir), "--quiet", *extra,
    ]  # fmt: skip


def forked(server, *args: str) -> list[str]:
    """The command through the suite's fork server (``tests/forkserver.py``): the same entry point, without a new
    interpreter's imports."""
    return [str(server.bin / "interp"), *args]


def same_file(a: Path, b: Path) -> None:
    """The same attributes and datasets (logits within float rounding); the environment record the same but for torch's
    thread count, which torchrun sets to 1 in its processes whatever the caller runs with."""
    import json

    with h5py.File(a, "r") as x, h5py.File(b, "r") as y:
        attrs = [{k: str(v) for k, v in f.attrs.items()} for f in (x, y)]
        environments = [json.loads(found.pop("environment", "{}")) for found in attrs]
        assert attrs[0] == attrs[1]
        assert [{k: v for k, v in e.items() if k != "threads"} for e in environments] == [{k: v for k, v in environments[1].items() if k != "threads"}] * 2
        names: list[str] = []
        y.visit(names.append)
        seen: list[str] = []
        x.visit(seen.append)
        assert sorted(seen) == sorted(names)
        for name in names:
            if isinstance(y[name], h5py.Dataset):
                if name.endswith("logits"):
                    np.testing.assert_allclose(x[name][:], y[name][:], atol=1e-6, rtol=0)
                else:
                    np.testing.assert_array_equal(x[name][:], y[name][:], err_msg=name)
            else:
                assert dict(x[name].attrs) == dict(y[name].attrs)


@pytest.fixture(scope="module")
def uninterrupted(tiny_classifier_dir, monli_dir, tmp_path_factory, fork_server) -> Path:
    out = tmp_path_factory.mktemp("whole") / "iv.h5"
    subprocess.run(forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, out)), check=True, capture_output=True)
    return out


@pytest.mark.slow(seconds=15)
def test_kill_9_at_any_moment_then_the_same_command_ends_as_an_uninterrupted_run(uninterrupted, tiny_classifier_dir, monli_dir, tmp_path, fork_server):
    """Each run a fork of the suite's fork server (the command's own process, without a new interpreter's imports), killed
    with SIGKILL: nothing of it runs on, no handler, no ``finally``."""
    out = tmp_path / "iv.h5"
    parts = tmp_path / "iv.h5.parts"
    command = forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, out))
    kills = 0
    for delay in (0.0, 0.3, 0.0, 0.7):  # kill right after a new unit lands, or a little later
        if out.exists():
            break
        before = len(list(parts.glob("*.npy"))) if parts.exists() else 0
        others = set(fork_server.children())  # none, unless an earlier test left a command running: not this run's
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if parts.exists() and len(list(parts.glob("*.npy"))) > before:
                time.sleep(delay)
                break
            time.sleep(0.02)
        if process.poll() is not None:
            break
        running = set(fork_server.children()) - others
        if not running:  # the command ended between the two looks
            process.wait()
            break
        for pid in running:
            os.kill(pid, signal.SIGKILL)
        assert process.wait() == 128 + signal.SIGKILL  # the client reports its command's death by the signal
        kills += 1
    assert kills >= 2, "the run finished before it could be killed twice"
    if not out.exists():  # a late kill can land after the file is in place, before the process dropped its unit files
        shards = len(list(parts.glob("*.npy")))
        assert 0 < shards <= 120  # 2 locations x 60 units of 2 bases (all of them if the kill came while assembling)
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert out.exists() and not parts.exists() and not (tmp_path / "iv.h5.partial").exists()
    same_file(out, uninterrupted)


def test_a_kill_after_the_file_landed_leaves_no_unit_files_once_run_again(uninterrupted, tiny_classifier_dir, monli_dir, tmp_path, fork_server):
    """Killed between moving the file into place and dropping ``<out>.parts``: the same command reuses the file and removes the units."""
    import shutil

    from interp.jobs.shards import MARKER

    out = tmp_path / "iv.h5"
    shutil.copy(uninterrupted, out)
    shutil.copy(uninterrupted.with_name(uninterrupted.name + ".manifest.json"), tmp_path / "iv.h5.manifest.json")
    parts = tmp_path / "iv.h5.parts"
    parts.mkdir()
    (parts / MARKER).write_text("")
    (parts / "loc0-unit0.npy").write_bytes(b"left by the killed run")
    result = subprocess.run(forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, out)), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert not parts.exists()
    same_file(out, uninterrupted)


@pytest.mark.slow(seconds=25)
def test_two_torchrun_processes_share_the_units_and_write_the_same_file(uninterrupted, tiny_classifier_dir, monli_dir, tmp_path):
    out = tmp_path / "iv.h5"
    command = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
        "-m", "interp.cli", *intervene(tiny_classifier_dir, monli_dir, out)[:-1],  # not --quiet: each worker reports
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("wrote ") == 1  # rank 0 alone reports
    assert "worker 0 of 2: ran 60 units" in result.stdout and "worker 1 of 2: ran 60 units" in result.stdout
    same_file(out, uninterrupted)


def test_workers_deal_units_by_rank():
    units = list(range(7))
    team = [Workers(r, 3) for r in range(3)]
    assert [w.mine(units) for w in team] == [[0, 3, 6], [1, 4], [2, 5]]
    assert sorted(sum((w.mine(units) for w in team), [])) == units
    assert Workers().mine(units) == units and Workers().leader


def test_out_of_memory_halves_the_batch_and_drops_no_pair(tiny_classifier_dir, monli_dir, monkeypatch):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_classifier_dir)
    encoded = encode_examples(load_monli(monli_dir, ("nmonli_test",))[:12], tokenizer)
    loc = Location.parse("blocks.1.hook_resid_pre@w_h")
    sources = source_vectors(model, encoded, loc)
    expected = interchange_logits(model, encoded, sources, loc, batch_size=64)
    real, sizes = engine.run_suffix, []

    def small_memory(model, hidden, *args):
        sizes.append(len(hidden))
        if len(hidden) > 5:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(model, hidden, *args)

    monkeypatch.setattr(engine, "run_suffix", small_memory)
    got = interchange_logits(model, encoded, sources, loc, batch_size=64)
    assert torch.allclose(got, expected, atol=1e-6, rtol=0) and not got.isnan().any()
    assert max(sizes) > 5 and max(s for s in sizes if s <= 5) == 4  # halved until passes of 4 fit

    def no_memory(*args):
        raise torch.OutOfMemoryError("always")

    monkeypatch.setattr(engine, "run_suffix", no_memory)
    with pytest.raises(torch.OutOfMemoryError):  # even one row does not fit: raised, not dropped
        interchange_logits(model, encoded[:1], sources[:1], loc, batch_size=4)


def test_a_unit_holds_16_bases_on_a_cpu_and_up_to_512_on_a_gpu():
    """On a GPU a 16-base unit runs each length group as a pass of a few thousand rows: units grow, but every torchrun
    process still gets one."""
    from interp.jobs.intervene import CPU_UNIT_SIZE, GPU_UNIT_SIZE, default_unit_size

    cpu, gpu = torch.device("cpu"), torch.device("cuda", 0)
    assert (CPU_UNIT_SIZE, GPU_UNIT_SIZE) == (16, 512)
    assert default_unit_size(cpu, 2678) == default_unit_size(cpu, 2678, world=8) == 16
    assert default_unit_size(gpu, 2678) == 512 and default_unit_size(gpu, 2678, world=8) == 335  # 8 processes, 8 units
    assert default_unit_size(gpu, 300) == 300 and default_unit_size(gpu, 5) == 16  # never below the CPU's


def test_auto_batch_size_on_a_gpu_stays_under_the_attention_kernels_grid_limit(tiny_classifier_dir, monkeypatch):
    """With memory for more, a GPU pass takes at most 2**16 - 1 rows: flash and memory-efficient attention fail at 2**16."""
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()

    class OnGpu:  # the model's first parameter as auto_batch_size sees it on a GPU
        device = torch.device("cuda", 0)

        @staticmethod
        def element_size() -> int:
            return 2  # bf16: the most rows for the memory

    class Placed:
        config = model.config

        @staticmethod
        def parameters():
            return iter([OnGpu()])

    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (140 * 2**30, 140 * 2**30))
    assert engine.auto_batch_size(Placed(), 4) == engine.GPU_MAX_ROWS == 65_535
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device: (2**20, 2**30))
    assert 1 <= engine.auto_batch_size(Placed(), 4) < engine.GPU_MAX_ROWS  # little memory: what half of it holds


def test_auto_batch_size_on_cpu_and_bf16_precision(uninterrupted, tiny_classifier_dir, monli_dir, tmp_path, fork_server):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    assert engine.auto_batch_size(model, 12) == engine.CPU_BATCH_SIZE
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cudnn_attention = torch.backends.cuda.cudnn_sdp_enabled()
    with engine.precision(model, "tf32"):
        assert torch.backends.cuda.cudnn_sdp_enabled() == cudnn_attention  # only bf16 moves attention off cuDNN
    with engine.precision(model, "bf16"):
        assert next(model.parameters()).dtype == torch.bfloat16
        assert not torch.backends.cuda.cudnn_sdp_enabled() and torch.backends.cuda.flash_sdp_enabled()  # no cuDNN plan per shape
    assert next(model.parameters()).dtype == torch.float32 and torch.backends.cuda.cudnn_sdp_enabled() == cudnn_attention
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())  # not rounded through bf16
    with pytest.raises(ValueError):
        with engine.precision(model, "fp8"):
            pass
    lab = IntervenableModel(str(tiny_classifier_dir), load_task("monli", data_dir=str(monli_dir)))
    with lab.precision("bf16"), pytest.raises(ValueError, match="float32"):
        compare_with_fp32(lab, [], torch.zeros(1, 4), Location.parse("blocks.0.hook_resid_post@w_h"), torch.zeros(0, 1, 2))
    assert next(lab.model.module.parameters()).dtype == torch.float32
    out = tmp_path / "bf16.h5"
    result = subprocess.run(forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, out, "--precision", "bf16")), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    bases, sources = sample_pairs(120, seed=0)
    assert (len(bases), len(sources)) == (CHECK_BASES, 120)
    with h5py.File(out, "r") as a, h5py.File(uninterrupted, "r") as b:
        assert a.attrs["precision"] == "bf16" and b.attrs["precision"] == "fp32"
        for loc in LOCATIONS.split(","):
            x, y = a[f"interchange/{loc}"], b[f"interchange/{loc}"]
            np.testing.assert_allclose(x["logits"][:], y["logits"][:], atol=0.05)
            # the fp32 check: the sampled pairs of the bf16 file against the fp32 file's
            check = Fp32Check.from_attrs(x.attrs)
            assert Fp32Check.from_attrs(y.attrs) is None
            ours, fp32 = x["logits"][:][np.ix_(bases, sources)], y["logits"][:][np.ix_(bases, sources)]
            assert check.pairs == CHECK_BASES * 120
            assert check.agreement == pytest.approx((ours.argmax(-1) == fp32.argmax(-1)).mean(), abs=1e-9)
            assert check.max_abs_logit_diff == pytest.approx(np.abs(ours - fp32).max(), abs=1e-5)
            assert f"{loc}: labels agree with fp32 on {check.agreement:.1%} of {check.pairs} sampled pairs" in result.stdout
    bad = subprocess.run(forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, tmp_path / "x.h5", "--precision", "fp8")), capture_output=True, text=True)
    assert bad.returncode == 2 and "--precision must be one of fp32, tf32, bf16" in bad.stderr
    both = subprocess.run(forked(fork_server, *intervene(tiny_classifier_dir, monli_dir, tmp_path / "y.h5", "--pairs", "all")), capture_output=True, text=True)
    assert both.returncode == 2 and "--pairs all" in both.stderr and "--max-examples" in both.stderr
    assert not (tmp_path / "x.h5").exists() and not (tmp_path / "y.h5").exists()


def test_location_sweep_ranks_every_location(tiny_classifier_dir, monli_dir, tmp_path, fork_server):
    import csv

    from interp.analysis.cliques.graph import build_graph
    from interp.analysis.cliques.reference import reference_cliques
    from interp.analysis.iia import summarize
    from interp.files.interventions import open_interventions

    out = tmp_path / "sweep"
    args = ["location-sweep", "--model", str(tiny_classifier_dir), "--out", str(out), "--examples", "14",
            "--data-dir", str(monli_dir), "--quiet"]  # fmt: skip
    result = subprocess.run(forked(fork_server, *args), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    rows = list(csv.DictReader(open(out / "locations.csv", encoding="utf-8")))
    assert len(rows) == 9 and [int(r["rank"]) for r in rows] == list(range(1, 10))  # 2 blocks: 3 hidden states x 3 roles
    keys = [(r["copies_source_output"] == "True", -float(r["iia_causal"]), -int(r["largest_clique"])) for r in rows]
    assert keys == sorted(keys)
    assert (out / "locations.png").stat().st_size > 10_000 and "rank" in result.stdout and "IIA - larger null [95%]" in result.stdout
    with open_interventions(out / "sweep.h5") as file:
        assert len(file.example_ids) == 14 and len(file.locations) == 9
        lexrel = file.values("lexrel").codes
        for r in rows:
            s = summarize(out / "sweep.h5", r["location"])  # the IIA, both nulls and the gap, each with its interval
            for key in ("iia_causal", "stays_base_causal_low", "copies_source_causal_high", "gap_causal", "gap_causal_low", "gap_causal_high"):
                assert float(r[key]) == round(s[key], 4), key
            assert float(r["gap_causal"]) == round(s["iia_causal"] - max(s["stays_base_causal"], s["copies_source_causal"]), 4)
            graph = build_graph(file.matrix("model_pred", r["location"]), file.matrix("causal_pred", r["location"]), lexrel)
            largest = max(
                (len(found[0]) for a in range(1, 11) if (found := reference_cliques(graph.edges, graph.causal, a, 2))),
                default=0,
            )
            assert int(r["largest_clique"]) == largest, r["location"]
    again = subprocess.run(forked(fork_server, *args[:-1]), capture_output=True, text=True)  # with progress: reuses sweep.h5
    assert again.returncode == 0 and "already done, reusing them" in again.stderr + again.stdout
    bad = subprocess.run(forked(fork_server, *args[:5], "--examples", "1", *args[7:]), capture_output=True, text=True)
    assert bad.returncode == 2 and "--examples must be at least 2" in bad.stderr


@pytest.mark.slow(seconds=10)
def test_location_sweep_flags_the_last_cls_of_a_finetuned_model(finetuned_minilm, monli_dir, tmp_path):
    from interp.jobs.location_sweep import LocationSweepConfig, run_location_sweep

    model, _ = finetuned_minilm
    config = LocationSweepConfig(
        model=str(model), out=str(tmp_path), examples=12, data=DataSpec(data_dir=str(monli_dir)),
        locations="blocks.5.hook_resid_post@cls,blocks.2.hook_resid_post@w_h",
    )  # fmt: skip
    rows = run_location_sweep(config, progress=False)
    # The last block's [CLS] is all the classifier reads: an interchange there returns the source's own output,
    # "agreeing" with INFER wherever the model is right. It is flagged and ranked last.
    assert [(r["location"], r["copies_source_output"]) for r in rows] == [
        ("blocks.2.hook_resid_post@w_h", False),
        ("blocks.5.hook_resid_post@cls", True),
    ]
    # at chance on NMoNLI test (it was fine-tuned on a few PMoNLI examples): every clique size marked uninterpretable
    from interp.jobs.location_sweep import format_ranking

    assert all(r["model_at_chance"] == "nmonli_test" for r in rows)
    table = format_ranking(rows)
    assert table.count("†") == len(rows) + 1 and "†: uninterpretable, the model is at chance on nmonli_test" in table


def test_the_engine_imports_without_the_libraries_a_gpu_machine_may_lack():
    """Issue #5: the engine's import path needs only torch, transformers, numpy and h5py."""
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] in {'transformer_lens', 'sklearn', 'networkx', 'matplotlib', 'pandas', 'click', 'rich'}:\n"
        "            raise ImportError('blocked ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import interp.jobs.intervene, interp.jobs.fp32_check\n"
        "from interp.engine import interchange_logits, source_vectors\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr

