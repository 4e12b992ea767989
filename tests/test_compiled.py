"""The compiled suffix (`compile=`, `--compile/--no-compile`) against the eager engine and the naive loop, on the CPU; the device
check that measures it on a GPU (`benchmarks/gpu.py --check`), at tiny sizes. One file: one process pays for starting inductor."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from transformers import BertConfig, BertForSequenceClassification

import interp
from interp.backends import get_runner
from interp.cli import main
from interp.core.errors import ConfigError
from interp.engine import interchange_logits, naive_interchange, source_vectors
from interp.engine.compiled import CompileStats, compile_problem, use_compile
from interp.hooks.locations import Location
from interp.tasks.monli import encode_examples, load_monli
from ties import assert_labels_agree

from decoders import decoder_model, tokenizer  # tests/decoders.py, at collection: a benchmark script loaded later may bring its own

pytestmark = pytest.mark.slow(seconds=60)

CPU = torch.device("cpu")
REPO = Path(__file__).resolve().parents[1]
needs_compiler = pytest.mark.skipif(compile_problem(CPU) is not None, reason=f"torch.compile on the CPU: {compile_problem(CPU)}")


@pytest.fixture(scope="module")
def model_and_encoded(monli_dir, minilm_tokenizer):
    """A random 3-block BERT classifier and up to 5 NMoNLI-test examples of each of three token lengths."""
    torch.manual_seed(3)
    config = BertConfig(vocab_size=minilm_tokenizer.vocab_size, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
                        intermediate_size=37, num_labels=2, initializer_range=0.5)  # fmt: skip
    model = BertForSequenceClassification(config).eval()
    encoded = encode_examples(load_monli(monli_dir, ("nmonli_test",)), minilm_tokenizer)
    lengths = sorted({len(e.input_ids) for e in encoded})[:3]  # three buckets: a static graph, then the dynamic one
    picked = [e for length in lengths for e in [e for e in encoded if len(e.input_ids) == length][:5]]
    assert len(lengths) == 3 and len(picked) >= 12, lengths
    return model, picked


@needs_compiler
@pytest.mark.parametrize("location", ["blocks.0.hook_resid_post@w_h", "blocks.1.hook_mlp_out@w_h"])
def test_the_compiled_suffix_equals_the_eager_engine_and_the_naive_loop(model_and_encoded, minilm_tokenizer, location):
    """A residual site (the first block's attention from the bases' shares, passed in) and a component site (computed
    in the graph); full batches compiled, each bucket's shorter last batch eager; the model left as it was."""
    model, encoded = model_and_encoded
    loc = Location.parse(location)
    weights = {k: v.clone() for k, v in model.state_dict().items()}
    sources = source_vectors(model, encoded, loc)
    eager = interchange_logits(model, encoded, sources, loc, batch_size=8)
    stats = CompileStats()
    compiled = interchange_logits(model, encoded, sources, loc, batch_size=8, compile=True, stats=stats)
    assert (compiled - eager).abs().max().item() <= 1e-5
    naive = naive_interchange(model, encoded, encoded, loc, minilm_tokenizer.pad_token_id)
    assert_labels_agree(compiled, naive)
    assert (eager - eager.diagonal().T[:, None, :]).abs().max().item() > 1e-3, "the interventions do not move the logits"
    assert stats.compiled_pairs + stats.eager_pairs == len(encoded) ** 2 and stats.compiled_pairs > 0 and stats.eager_pairs > 0
    assert all(rows == 8 for rows, *_ in stats.shapes) and stats.first_call_seconds > 0 and stats.note is None
    assert all(torch.equal(v, weights[k]) for k, v in model.state_dict().items())


def test_compiling_is_off_on_a_cpu_by_default_and_refused_by_name_where_it_cannot_run(monkeypatch, tiny_classifier_dir, monli_dir, tmp_path):
    assert use_compile(None, CPU) is False and use_compile(False, CPU) is False
    monkeypatch.setattr("interp.engine.compiled.importlib.util.find_spec", lambda name: object())
    assert use_compile(None, torch.device("cuda")) is True  # on for CUDA where triton is installed
    monkeypatch.setattr("interp.engine.compiled.importlib.util.find_spec", lambda name: None)
    assert use_compile(None, torch.device("cuda")) is False
    monkeypatch.undo()
    monkeypatch.setattr("interp.engine.compiled.shutil.which", lambda name: None)  # no C++ compiler
    with pytest.raises(ConfigError, match=r"^compile=True on cpu: no C\+\+ compiler on PATH .*build-essential.*; pass compile=False to run eagerly"):
        use_compile(True, CPU)
    with pytest.raises(ConfigError, match="compile=True compiles the engine's suffix; backend=transformer-lens runs eagerly"):
        interp.RunSpec(compile=True, backend="transformer-lens")
    with pytest.raises(ConfigError, match="backend 'transformer-lens' runs its own modules eagerly"):
        get_runner("transformer-lens", None, None, compile=True)
    with pytest.raises(ConfigError, match="compile= must be True, False or None"):
        interp.RunSpec(compile="yes")
    out = tmp_path / "iv.h5"
    result = CliRunner().invoke(main, ["intervene", "--model", str(tiny_classifier_dir), "--out", str(out), "--locations",
                                       "blocks.0.hook_resid_post@w_h", "--max-examples", "4", "--data-dir", str(monli_dir), "--compile", "--quiet"])  # fmt: skip
    assert result.exit_code == 2 and "--compile on cpu: no C++ compiler" in result.output and "pass --no-compile to run eagerly" in result.output
    assert list(tmp_path.iterdir()) == []  # refused before any file


def test_each_runner_has_its_kinds_knob_and_refuses_the_other_by_name(monli_dir, model_and_encoded):
    """``compile`` is the encoder runner's, ``prefix_reuse`` the decoder runner's: asked of the other kind, one line
    naming the parameter and the model; the encoder engine refuses a decoder, naming the decoder's function. Asked to
    compile where no block runs after the location, the encoder runs eagerly and its stats say why, every pair counted."""
    from interp.backends import DecoderRunner, EncoderRunner

    tok = tokenizer("sentencepiece", str(monli_dir))
    lab = interp.IntervenableModel(interp.load_model(decoder_model("llama", tok), tok), "monli", data_dir=str(monli_dir))
    decoder = lab.model.module
    encoder, encoded = model_and_encoded
    assert type(get_runner("hf", decoder, tok)) is DecoderRunner and type(get_runner("hf", encoder)) is EncoderRunner
    assert get_runner("hf", decoder, tok, prefix_reuse=False).prefix_reuse is False and get_runner("hf", decoder, tok).compile_stats is None
    with pytest.raises(ConfigError, match=r"^compile=True compiles an encoder's suffix; the model \(llama\) is a decoder"):
        get_runner("hf", decoder, tok, compile=True)
    with pytest.raises(ConfigError, match=r"^prefix_reuse=False runs every position of a decoder's pairs; the model \(bert\) is an encoder"):
        get_runner("hf", encoder, prefix_reuse=False)
    with pytest.raises(ConfigError, match=r"DecoderRunner runs a decoder; the model \(bert\) is an encoder: use EncoderRunner"):
        DecoderRunner(encoder)
    with pytest.raises(ConfigError, match=r"EncoderRunner runs an encoder; the model \(llama\) is a decoder: use DecoderRunner"):
        EncoderRunner(decoder)
    examples = lab.task.examples(("nmonli_test",))[:4]
    loc = lab.location("blocks.0.hook_resid_post@w_h")
    with pytest.raises(ConfigError, match="is a decoder: its interchange runs through interp.engine.decoder.decoder_interchange_logits"):
        interchange_logits(decoder, lab.encode(examples), lab.source_vectors(examples, loc), loc)
    last = Location.parse("blocks.2.hook_resid_post@cls")
    stats = CompileStats()
    sources = source_vectors(encoder, encoded[:4], last)
    asked = interchange_logits(encoder, encoded[:4], sources, last, compile=True, stats=stats)
    assert torch.equal(asked, interchange_logits(encoder, encoded[:4], sources, last))
    assert stats.note == f"{last}: no block runs after it, so nothing is compiled" and stats.compiled_pairs == 0


def load_benchmark(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", REPO / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_device_check_runs_at_tiny_sizes_and_writes_its_rows(monli_dir, tmp_path):
    """`--check --smoke`: the one device check's arms (all pairs at tf32 and bf16, eager and compiled; the device, here
    compiled, against a CPU copy; the engine against pyvene at bf16 at two shapes; SmolLM2's arm; a localize sweep; a decoder), its JSON and its
    BENCHMARKS rows with each target met or not."""
    gpu = load_benchmark("gpu")
    results = gpu.main(["--check", "--smoke", "--monli", str(monli_dir), "--out", str(tmp_path)])
    assert [(r["precision"], r["compile"]) for r in results["allpairs"]] == [(p, m) for p in ("tf32", "bf16") for m in ("eager", "compiled")]
    assert all(r["agreement"] == 1.0 and r["pairs"] == 24 * 24 for r in results["allpairs"])
    eager, compiled = results["allpairs"][0]["compiled"], results["allpairs"][1]["compiled"]
    assert eager["compiled_pairs"] == 0
    if compile_problem(CPU) is None:  # full passes compiled, each bucket's shorter last one eager
        assert compiled["compiled_pairs"] > 0 and compiled["eager_pairs"] > 0 and compiled["shapes"] > 0
    assert [r["size"] for r in results["engine"]] == ["minilm", "base"]
    assert all(r["engine_bf16_pairs_per_s"] > 0 and r["engine_pairs_per_s"] is None and r["pyvene_precision"] == "bf16" for r in results["engine"])
    assert results["decoder"]["reuse_labels_agree"] == 1.0 and results["decoder"]["reuse_pairs_per_s"] > 0
    smol = results["smollm2"]
    assert smol["naive_labels_agree"] == 1.0 and smol["pairs"] == 24 * 24 and smol["pairs_per_s"] > 0 and len(smol["finetune"]) == 3  # every weight, the top blocks, LoRA
    assert all(r["examples_per_s"] > 0 and r["examples"] == 16 for r in smol["finetune"].values())
    assert results["cpu"]["labels_agree"] == 1.0 and results["cpu"]["max_logit_diff"] <= 1e-5 and results["cpu"]["pairs"] == 16 * 24
    sweep = results["localize"]  # full, DAS and DBM for both IOI variables at blocks 0-1
    assert sweep["units"] == 3 * 2 * 2 and set(sweep["seconds_per_unit"]) == {"full", "das", "dbm"} and sweep["best_output_token"] is None
    rows = (tmp_path / "gpu.md").read_text().splitlines()
    assert json.loads((tmp_path / "gpu.json").read_text())["env"]["check"] is True
    assert sum(line.startswith("| target: ") for line in rows) == 4 and any("| intervene, all 576 pairs, bf16, compiled |" in line for line in rows)
    assert any(line.startswith("| decoder, tiny shape, float32") for line in rows)
    assert sum(line.startswith("| fine-tune SmolLM2-135M (random, tiny Llama (--smoke))") for line in rows) == 3
    assert any("LoRA rank 8" in line for line in rows)
    assert any(line.startswith("| intervene SmolLM2-135M (random, tiny Llama (--smoke)), all 576 pairs") for line in rows)
    assert any(line.startswith("| localize SmolLM2-135M (random, tiny Llama (--smoke)), IOI, blocks 0-1 at the last token") for line in rows)
    late = gpu.main(["--check", "--smoke", "--monli", str(monli_dir), "--out", str(tmp_path / "late"), "--deadline", "0"])
    assert late["cpu"] == late["engine"] == late["smollm2"] == late["localize"] == late["decoder"] == {"error": "skipped: past --deadline"}  # a check past its time says what it left out
    assert "| engine | failed: skipped: past --deadline |" in (tmp_path / "late" / "gpu.md").read_text()
    again = load_benchmark("gpu_table")  # the rows again from the run's figures, as gpu.md has them
    assert again.table(json.loads((tmp_path / "gpu.json").read_text())) + "\n" == (tmp_path / "gpu.md").read_text()
