"""The batched interchange engine against the naive per-pair loop; model slicing; `interp intervene`."""

from __future__ import annotations

import h5py
import numpy as np
import pytest
import torch
from click.testing import CliRunner
from transformers import AutoModelForSequenceClassification

import interp.backends.hf as backend_module
from interp.causal import interchange_table
from interp.cli import main
from interp.engine import interchange_logits, naive_interchange, source_vectors
from interp.engine.slicing import (
    block_first_token,
    first_token_block,
    run_prefix,
    run_suffix,
)
from interp.hooks import n_layers, site_modules
from interp.hooks.locations import Location, all_locations
from interp.tasks.monli import (
    LABELS,
    ROLES,
    encode_examples,
    infer_for,
    load_monli,
    monli_inputs,
)
from ties import assert_labels_agree


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def examples(monli_dir):
    """12 NMoNLI-test examples, 4 of them with a w_h of several WordPieces."""
    return load_monli(monli_dir, ("nmonli_test",))


def _pick(encoded, n_multi: int, n_total: int):
    multi = [e for e in encoded if len(e.pieces["w_h"]) > 1][:n_multi]
    single = [e for e in encoded if len(e.pieces["w_h"]) == 1][: n_total - len(multi)]
    assert len(multi) == n_multi
    return multi + single


@pytest.mark.parametrize("family", ["bert", "roberta"])
@torch.no_grad()
def test_prefix_and_suffix_reassemble_the_model(family, tiny_classifier_dir, examples, minilm_tokenizer, tmp_path):
    if family == "roberta":
        from transformers import RobertaConfig, RobertaForSequenceClassification

        torch.manual_seed(2)
        config = RobertaConfig(
            vocab_size=30522, hidden_size=32, num_hidden_layers=3, num_attention_heads=2,
            intermediate_size=37, max_position_embeddings=130, pad_token_id=0, num_labels=2,
        )  # fmt: skip
        model = RobertaForSequenceClassification(config).eval()
    else:
        model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    e = encode_examples(examples[:1], minilm_tokenizer)[0]
    ids = torch.tensor([e.input_ids] * 3)
    types = torch.zeros_like(ids) if family == "roberta" else torch.tensor([e.token_type_ids] * 3)
    full = model(input_ids=ids, token_type_ids=types, output_hidden_states=True)
    hooks_before = sum(len(m._forward_hooks) for m in site_modules(model))  # transformers keeps its own
    for h in range(n_layers(model) + 1):
        prefix = run_prefix(model, ids, types, h)
        assert torch.equal(prefix, full.hidden_states[h]), h
        assert torch.allclose(run_suffix(model, prefix, h, ids, types), full.logits, atol=1e-6, rtol=0), h
    assert len(model.base_model.encoder.layer) == n_layers(model) == len(site_modules(model)) - 1
    last = model.base_model.encoder.layer[-1]
    assert first_token_block(model, last)
    row0 = block_first_token(last, full.hidden_states[-2])
    assert row0.shape == (3, 1, model.config.hidden_size)
    assert torch.allclose(row0[:, 0], full.hidden_states[-1][:, 0], atol=1e-6, rtol=0)
    calls = []
    handle = last.register_forward_hook(lambda *args: calls.append(1))
    try:
        run_suffix(model, full.hidden_states[0], 0, ids, types)
    finally:
        handle.remove()
    assert calls == []  # the last block ran for [CLS] only, not through its own forward
    assert not first_token_block(model.train(), last)  # dropout: the full block
    model.eval()
    model.__class__ = type("MeanPooledHead", (type(model),), {})  # a head not known to read [CLS] only
    assert not first_token_block(model, last)
    assert torch.allclose(run_suffix(model, full.hidden_states[1], 1, ids, types), full.logits, atol=1e-6, rtol=0)
    with pytest.raises(RuntimeError):
        run_suffix(model, torch.zeros(3, 2, 5), 1, ids, types)  # wrong width: fails inside the model
    assert len(model.base_model.encoder.layer) == n_layers(model)
    assert sum(len(m._forward_hooks) for m in site_modules(model)) == hooks_before


def test_engine_equals_naive_loop_at_every_location_of_a_tiny_model(tiny_classifier_dir, examples, minilm_tokenizer):
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    encoded = _pick(encode_examples(examples, minilm_tokenizer), 3, 8)
    for loc in all_locations(n_layers(model), ROLES):
        fast = interchange_logits(model, encoded, source_vectors(model, encoded, loc), loc, batch_size=5)
        naive = naive_interchange(model, encoded, encoded, loc, minilm_tokenizer.pad_token_id)
        assert_labels_agree(fast, naive)
        assert torch.allclose(fast, naive, atol=1e-5, rtol=0), str(loc)


@pytest.mark.slow(seconds=25)
@pytest.mark.parametrize("location", ["blocks.2.hook_resid_post@w_h"])  # every other site: the tiny model's test above
def test_engine_equals_naive_loop_on_1024_pairs_with_the_finetuned_embedded_model(location, finetuned_minilm, examples):
    from interp.models import load_classifier

    model, tokenizer = load_classifier(str(finetuned_minilm[0]), require_head=True)
    encoded = _pick(encode_examples(examples, tokenizer), 10, 32)
    loc = Location.parse(location)
    fast = interchange_logits(model, encoded, source_vectors(model, encoded, loc), loc)
    naive = naive_interchange(model, encoded, encoded, loc, tokenizer.pad_token_id)
    assert fast.shape == naive.shape == (32, 32, 2)
    assert_labels_agree(fast, naive)
    assert (fast - naive).abs().max().item() <= 1e-5
    own = fast.diagonal().T[:, None, :]  # each base with its own vector: [32, 1, 2]
    assert (fast - own).abs().max().item() > 1e-2, "the interventions do not move the logits: a vacuous comparison"


@pytest.fixture(scope="module")
def intervened(tiny_classifier_dir, monli_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("iv") / "iv.h5"
    args = [
        "intervene", "--model", tiny_classifier_dir, "--out", out, "--splits", "nmonli_test,pmonli",
        "--max-examples", "24", "--locations", "blocks.1.hook_resid_post@w_h,blocks.0.hook_resid_pre@w_p",
        "--data-dir", monli_dir, "--quiet",
    ]  # fmt: skip
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    return out, args, result


def test_intervene_writes_self_describing_outcome_matrices(intervened, tiny_classifier_dir, monli_dir, minilm_tokenizer):
    out, _, result = intervened
    assert result.stdout.startswith(f"wrote {out}\n") and "causal pairs" in result.stdout and "copies" in result.stdout
    with h5py.File(out, "r") as f:
        assert f.attrs["complete"] and f.attrs["causal_model"] == "infer" and list(f.attrs["variables"]) == ["lexrel"]
        assert f.attrs["task"] == "monli" and f.attrs["format"] == "interp.interventions/3"
        assert list(f.attrs["labels"]) == list(LABELS) and f.attrs["wordpiece"] == "first"
        ids = list(f["example_ids"].asstr()[:])
        assert len(ids) == 24 and len(set(ids)) == 24
        assert list(f.attrs["locations"]) == ["blocks.1.hook_resid_post@w_h", "blocks.0.hook_resid_pre@w_p"]
        group = f["interchange/blocks.1.hook_resid_post@w_h"]
        assert group.attrs["hidden_index"] == 2 and list(group.attrs["roles"]) == ["w_h"]
        model_pred, causal_pred = group["model_pred"][:], f["lexrel/blocks.1.hook_resid_post@w_h/causal_pred"][:]
        np.testing.assert_array_equal(f["lexrel/blocks.1.hook_resid_post@w_h/model_pred"][:], model_pred)  # the link
        assert model_pred.dtype == causal_pred.dtype == np.int8 and model_pred.shape == (24, 24)
        assert (model_pred >= 0).all() and (causal_pred >= 0).all()
        np.testing.assert_array_equal(model_pred, group["logits"][:].argmax(-1))
        positions = f["positions"][:]
        assert list(f["positions"].attrs["roles"]) == list(ROLES)
        assert sorted(f["values"]) == ["lexrel", "negated", "output"] and sorted(f["words"]) == ["w_h", "w_p"]
    by_id = {e.id: e for e in load_monli(monli_dir, ("nmonli_test", "pmonli"))}
    chosen = [by_id[i] for i in ids]
    inputs = [monli_inputs(e) for e in chosen]
    expected = interchange_table(infer_for(chosen), inputs, inputs, "lexrel")
    np.testing.assert_array_equal(causal_pred, np.vectorize(LABELS.index)(expected))
    encoded = encode_examples(chosen, minilm_tokenizer)
    assert positions.tolist() == [[e.positions[r] for r in ROLES] for e in encoded]
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    naive = naive_interchange(model, encoded[:4], encoded[:6], Location.parse("blocks.1.hook_resid_post@w_h"))
    np.testing.assert_array_equal(model_pred[:4, :6], naive.argmax(-1).numpy())


def test_interrupted_intervene_resumes_without_redoing_units(intervened, monkeypatch, tmp_path):
    out, args, _ = intervened
    again = tmp_path / "again.h5"
    args = [again if a == out else a for a in args]
    calls = {"n": 0}
    real = backend_module.interchange_logits

    def counting(*a, **k):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(backend_module, "interchange_logits", counting)
    result = run(*args)
    assert result.exit_code == 130 and "run the same command again to resume" in result.stderr
    assert not again.exists() and not (tmp_path / "again.h5.partial").exists()
    shards = sorted(p.name for p in (tmp_path / "again.h5.parts").glob("*.npy"))
    assert shards == ["loc000-unit000000.npy", "loc000-unit000001.npy"]  # 24 bases, 16 a unit: location 1 done
    damaged = tmp_path / "again.h5.parts" / "loc000-unit000001.npy"
    damaged.write_bytes(damaged.read_bytes()[:200])  # a unit file damaged on disk (it was a traceback after every other unit)
    calls["n"] = 100
    result = run(*args)
    assert result.exit_code == 0, result.stderr
    assert calls["n"] == 103  # the 2 units of the second location, and the damaged one again
    assert not (tmp_path / "again.h5.parts").exists()
    with h5py.File(again, "r") as a, h5py.File(out, "r") as b:
        assert {k: str(v) for k, v in a.attrs.items()} == {k: str(v) for k, v in b.attrs.items()}
        for loc in b.attrs["locations"]:
            for name in ("model_pred", "causal_pred"):
                np.testing.assert_array_equal(a[f"lexrel/{loc}/{name}"][:], b[f"lexrel/{loc}/{name}"][:])
            np.testing.assert_allclose(a[f"interchange/{loc}/logits"][:], b[f"interchange/{loc}/logits"][:], atol=1e-6)
    with h5py.File(again, "r") as f:
        before = f["interchange/blocks.1.hook_resid_post@w_h/model_pred"][:]
    result = run(*args[:-1])  # with progress messages
    assert result.exit_code == 0 and "already done, reusing them" in result.output
    with h5py.File(again, "r") as f:
        np.testing.assert_array_equal(f["interchange/blocks.1.hook_resid_post@w_h/model_pred"][:], before)


def test_a_unit_file_that_cannot_be_written_stops_the_run_with_its_error(intervened, monkeypatch, tmp_path):
    """Each unit's file is written on another thread while the next unit runs: a write that fails is raised (exit 2,
    named), the units written before it stay, and the same command then finishes the run."""
    from interp.core.errors import OutputError
    from interp.jobs.shards import Shards

    out, args, _ = intervened
    again = tmp_path / "again.h5"
    args = [again if a == out else a for a in args]
    real = Shards.write

    def failing(self, index, unit, logits):
        if (index, unit) == (0, 1):
            raise OutputError("out= unit 1 could not be written: disk full")
        real(self, index, unit, logits)

    monkeypatch.setattr(Shards, "write", failing)
    result = run(*args)
    assert result.exit_code == 2 and "unit 1 could not be written: disk full" in result.output, result.output
    assert sorted(p.name for p in (tmp_path / "again.h5.parts").glob("*.npy")) == ["loc000-unit000000.npy"] and not again.exists()
    monkeypatch.setattr(Shards, "write", real)
    assert run(*args).exit_code == 0
    with h5py.File(again, "r") as a, h5py.File(out, "r") as b:
        for loc in b.attrs["locations"]:
            np.testing.assert_array_equal(a[f"lexrel/{loc}/model_pred"][:], b[f"lexrel/{loc}/model_pred"][:])


def test_intervene_bad_input_exits_2_and_writes_nothing(intervened, tiny_classifier_dir, monli_dir, tmp_path, monkeypatch):
    out, args, _ = intervened
    common = ["--model", tiny_classifier_dir, "--data-dir", monli_dir, "--splits", "nmonli_test", "--max-examples", "6", "--quiet"]
    target = tmp_path / "x.h5"

    def check(extra, message, where=target):
        result = run("intervene", *common, "--out", where, *extra)
        assert result.exit_code == 2, result.output
        assert message in result.stderr, result.stderr
        assert not target.exists() and not (tmp_path / "x.h5.partial").exists()

    check(["--locations", "blocks.9.hook_resid_post@w_h"], "layer 9 is out of range")
    check(["--locations", "blocks.1.hook_resid_post@w_z"], "unknown token role 'w_z' in location blocks.1.hook_resid_post@w_z; the roles here are cls, w_p, w_h")
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--task", "mqnli-ish"], "--task 'mqnli-ish': not a built-in task")
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--variable", "colour"],
          "--variable 'colour': task 'monli' has no such variable; it has lexrel, negated, output")  # fmt: skip
    check(["--locations", "blocks.1.hook_resid_post", "--variable", "negated,lexrel", "--cache", tmp_path / "none.h5"],
          "activation cache")  # a bare site expands to the aligned roles before the cache is checked  # fmt: skip
    result = run("intervene", *common, "--out", out, "--locations", "blocks.1.hook_resid_post@w_h")
    assert result.exit_code == 2 and "holds other interventions" in result.stderr and "--overwrite" in result.stderr
    # A cache made with other weights, a float16 cache, a cache lacking the location.
    cache = tmp_path / "c.h5"
    built = run("cache", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--out", cache, "--data-dir", monli_dir, "--quiet")
    assert built.exit_code == 0, built.stderr
    half = tmp_path / "half.h5"
    assert run("cache", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--out", half, "--dtype", "float16", "--data-dir", monli_dir, "--quiet").exit_code == 0
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--cache", half], "interventions need a float32 cache")
    with h5py.File(cache, "a") as f:
        del f["blocks.1.hook_resid_post@w_h"]
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--cache", cache], "dataset blocks.1.hook_resid_post@w_h is missing; the file was edited")
    # A user's task whose causal model does not fit the examples (it ignores negation).
    task_file = tmp_path / "lexrel_only.py"
    task_file.write_text(LEXREL_ONLY_TASK.format(monli_dir=str(monli_dir)))
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--task", f"{task_file}:make_task"], "does not fit the dataset")
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--task", f"{task_file}:nothing"], "no function 'nothing' there")
    (tmp_path / "broken.py").write_text("import no_such_module_here\n")
    check(["--locations", "blocks.1.hook_resid_post@w_h", "--task", f"{tmp_path / 'broken.py'}:make_task"], "does not import (ModuleNotFoundError")


LEXREL_ONLY_TASK = """
from interp.causal import CausalModel, Mechanism
from interp.tasks import Task
from interp.tasks.monli import LABELS, ROLES, check_fit, load_monli, monli_inputs, monli_lexicon


def lexrel_only(examples):
    lexicon = monli_lexicon(examples)
    model = CausalModel(
        "lexrel-only",
        ("w_p", "w_h", "negated"),
        {{
            "lexrel": Mechanism(("w_p", "w_h"), lambda p, h: lexicon[(p, h)]),
            "label": Mechanism(("lexrel",), lambda r: "entailment" if r.value == "forward" else "neutral"),
        }},
        output="label",
    )
    check_fit(model, examples)
    return model


def make_task():
    return Task(name="lexrel-only", labels=LABELS, splits=("nmonli_test",), roles=ROLES,
                load=lambda splits: load_monli({monli_dir!r}, tuple(splits)),
                causal_model=lexrel_only, inputs=monli_inputs, alignment={{"lexrel": ("w_h",)}})
"""


def test_intervene_cache_of_other_weights_exits_2(tiny_classifier_dir, monli_dir, tmp_path):
    cache = tmp_path / "c.h5"
    built = run("cache", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--out", cache, "--data-dir", monli_dir, "--quiet")
    assert built.exit_code == 0, built.stderr
    other = tmp_path / "other"
    torch.manual_seed(9)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir)
    with torch.no_grad():
        model.classifier.weight.add_(1.0)
    model.save_pretrained(other, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (tiny_classifier_dir / name).exists():
            (other / name).write_bytes((tiny_classifier_dir / name).read_bytes())
    result = run(
        "intervene", "--model", other, "--out", tmp_path / "x.h5", "--locations", "blocks.1.hook_resid_post@w_h",
        "--cache", cache, "--splits", "nmonli_test", "--max-examples", "4", "--data-dir", monli_dir, "--quiet",
    )  # fmt: skip
    assert result.exit_code == 2 and "not with the weights of" in result.stderr
    assert not (tmp_path / "x.h5").exists()
