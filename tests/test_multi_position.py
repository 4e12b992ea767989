"""Locations at several tokens (``SITE@r1+r2``, ``--wordpiece all``): hooks, the engine against the naive loop on MQNLI, the MQNLI task."""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager

import h5py
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from interp.core.errors import ConfigError
from interp.engine import interchange_logits, naive_interchange, source_vectors
from interp.hooks import hooked
from interp.hooks.locations import Location, parse_locations
from interp.tasks import resolve_task
from interp.hooks.encoding import collate, encode_examples, location_tokens
from ties import assert_labels_agree


@pytest.fixture(scope="module")
def mqnli(mqnli_file):
    task = resolve_task("mqnli", data_file=str(mqnli_file))
    return task, task.load(("test",))


@pytest.fixture(scope="module")
def model(tiny_mqnli_classifier_dir):
    return AutoModelForSequenceClassification.from_pretrained(tiny_mqnli_classifier_dir).eval()


def test_mqnli_task_aligns_each_node_to_the_words_below_it(mqnli):
    task, examples = mqnli
    assert task.roles[0] == "cls" and len(task.roles) == 19
    assert task.alignment["n_s"] == ("n_s.p", "n_s.h")
    assert task.alignment["subj_np"] == ("adj_s.p", "n_s.p", "adj_s.h", "n_s.h")
    assert task.alignment["neg_vp"] == tuple(f"{k}.{s}" for s in "ph" for k in ("neg", "adv", "v", "q_o", "adj_o", "n_o"))
    assert len(task.alignment["root"]) == 18 and "label" not in task.alignment  # the file's own dataset name
    causal = task.build_causal_model(examples)
    assert set(task.values(causal, examples, "root").names) <= {"≡", "⊏", "⊐", "^", "|", "‿", "#"}
    with pytest.raises(ConfigError, match="task=mqnli needs data_file="):
        resolve_task("mqnli")


def test_mqnli_roles_find_repeated_words_by_position(mqnli, minilm_tokenizer):
    """ε (and a quantifier) can occur twice in a sentence: each role still gets its own token."""
    task, examples = mqnli
    example = next(e for e in examples if e.premise.count("ε") >= 2)
    e = encode_examples([example], minilm_tokenizer, "first", task.labels)[0]
    tokens = minilm_tokenizer.convert_ids_to_tokens(e.input_ids)
    epsilon = [r for r in task.roles if r.endswith(".p") and example.words[r] == "ε"]
    assert len(epsilon) >= 2 and len({e.positions[r] for r in epsilon}) == len(epsilon)
    assert all(tokens[e.positions[r]] == "ε" for r in epsilon)
    order = [e.positions[r] for r in task.roles[1:10]]
    assert order == sorted(order), "premise roles in surface order"


def test_parse_several_roles_and_aligned():
    roles = ("cls", "a.p", "a.h", "b.p")
    assert str(Location.parse("blocks.1.hook_resid_post@a.p+a.h")) == "blocks.1.hook_resid_post@a.p+a.h"
    assert parse_locations("blocks.1.hook_resid_post", 2, roles, [("a.p", "a.h"), ("cls",)]) == [
        Location(2, ("a.p", "a.h")), Location(2, "cls")
    ]  # fmt: skip
    assert len(parse_locations("aligned", 2, roles, [("a.p", "a.h")])) == 3
    with pytest.raises(ConfigError, match="names a token role twice"):
        Location.parse("blocks.1.hook_resid_post@a.p+a.p")
    with pytest.raises(ConfigError, match="unknown token role 'c.h'"):
        parse_locations("blocks.1.hook_resid_post@a.p+c.h", 2, roles)
    with pytest.raises(ConfigError, match="has 2 token roles; this needs one"):
        Location.parse("blocks.1.hook_resid_post@a.p+a.h").role


@torch.no_grad()
def test_reading_and_writing_several_tokens_at_once(model, mqnli, minilm_tokenizer):
    task, examples = mqnli
    encoded = encode_examples(examples[:10], minilm_tokenizer, "all", task.labels)
    encoded = [e for e in encoded if len(e.pieces["n_s.p"]) == 2][:4]
    batch = collate(encoded, minilm_tokenizer.pad_token_id)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    hidden = model(**inputs, output_hidden_states=True).hidden_states[2]
    loc = Location.parse("blocks.1.hook_resid_post@n_s.p+cls")
    with hooked(model, batch["positions"], read=[loc]) as trace:
        model(**inputs)
    rows = torch.arange(len(encoded))
    pieces = batch["positions"]["n_s.p"]  # [4, 2]: both pieces of the subject noun
    expected = torch.cat([hidden[rows, pieces[:, 0]], hidden[rows, pieces[:, 1]], hidden[rows, 0]], dim=1)
    assert trace[loc].shape == (4, 3 * 32) and torch.equal(trace[loc], expected)
    # writing every token at once equals writing each one at its own single-token location
    swapped = torch.roll(trace[loc], 1, 0)
    with hooked(model, batch["positions"], write={loc: swapped}):
        together = model(**inputs).logits
    singles = {Location(2, "cls"): swapped[:, 64:]}
    positions = {**batch["positions"], "first": pieces[:, 0], "second": pieces[:, 1]}
    singles.update({Location(2, "first"): swapped[:, :32], Location(2, "second"): swapped[:, 32:64]})
    with hooked(model, positions, write=singles):
        separately = model(**inputs).logits
    assert torch.equal(together, separately)
    assert not torch.allclose(together, model(**inputs).logits), "the write moved nothing: a vacuous comparison"


def _sample(mqnli, tokenizer, wordpiece="first", n=32):
    task, examples = mqnli
    return encode_examples(examples[:n], tokenizer, wordpiece, task.labels)


@pytest.mark.parametrize(
    "location",
    [
        "blocks.0.hook_resid_pre@n_s.p+n_s.h",
        "blocks.1.hook_resid_post@cls+adj_s.p+n_s.p+adj_s.h+n_s.h",
        "blocks.0.hook_resid_post@neg.p+adv.p+v.p+q_o.p+adj_o.p+n_o.p+neg.h+adv.h+v.h+q_o.h+adj_o.h+n_o.h",
        "blocks.0.hook_resid_pre@cls+q_s.p+q_s.h",
    ],
)
@torch.no_grad()
def test_engine_equals_naive_loop_on_1024_mqnli_pairs_at_several_tokens(model, mqnli, minilm_tokenizer, location):
    """Issue #15 item 5: 32 × 32 pairs of MQNLI, sequences of several lengths, locations of 2 to 12 tokens."""
    encoded = _sample(mqnli, minilm_tokenizer)
    assert len({len(e.input_ids) for e in encoded}) > 3, "bases of several lengths"
    loc = Location.parse(location)
    fast = interchange_logits(model, encoded, source_vectors(model, encoded, loc), loc, batch_size=100)
    naive = naive_interchange(model, encoded, encoded, loc, minilm_tokenizer.pad_token_id)
    assert fast.shape == naive.shape == (32, 32, 3)
    assert_labels_agree(fast, naive)
    assert (fast - naive).abs().max().item() <= 1e-5
    own = fast.diagonal().T[:, None, :]
    assert (fast - own).abs().max().item() > 1e-2, "the interventions do not move the logits: a vacuous comparison"
    assert len(fast.argmax(-1).unique()) > 1, "one label everywhere: the label comparison would be vacuous"


@torch.no_grad()
def test_engine_equals_naive_loop_under_wordpiece_all(model, mqnli, minilm_tokenizer):
    encoded = [e for e in _sample(mqnli, minilm_tokenizer, "all", 120) if len(e.pieces["n_s.p"]) == 2 and len(e.pieces["v.h"]) == 2][:12]
    loc = Location.parse("blocks.0.hook_resid_post@n_s.p+v.h")
    vectors = source_vectors(model, encoded, loc)
    assert vectors.shape == (len(encoded), 4 * 32)
    fast = interchange_logits(model, encoded, vectors, loc, batch_size=7)
    naive = naive_interchange(model, encoded, encoded, loc, minilm_tokenizer.pad_token_id)
    assert (fast - naive).abs().max().item() <= 1e-5
    first = _sample(mqnli, minilm_tokenizer, "first", 120)
    mixed = [first[0], *[e for e in _sample(mqnli, minilm_tokenizer, "all", 120)]]
    with pytest.raises(ConfigError, match="covers .* WordPiece token"):
        location_tokens(mixed, ("n_s.p",), "location x")


def _run(*args):
    from click.testing import CliRunner

    from interp.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def test_mqnli_runs_through_cache_probe_intervene_and_cliques(mqnli_file, tiny_mqnli_classifier_dir, tmp_path):
    """Issue #15 item 6 on a tiny model: every command takes --task mqnli, nodes at the tokens below them."""
    import h5py
    import numpy as np

    from interp.analysis.cliques import build_graph
    from interp.files.interventions import open_interventions

    model, data = tiny_mqnli_classifier_dir, mqnli_file
    task = ("--task", "mqnli", "--data-file", data)
    r = _run("cache", *task, "--model", model, "--splits", "test", "--out", tmp_path / "act.h5", "--quiet")
    assert r.exit_code == 0, r.output
    with h5py.File(tmp_path / "act.h5") as f:
        assert f.attrs["task"] == "mqnli" and "blocks.1.hook_resid_post@n_s.h" in f
    both = "blocks.1.hook_resid_post@n_s.p+n_s.h"
    r = _run("probe", "--cache", tmp_path / "act.h5", "--out", tmp_path / "probes", "--targets", "n_s,subj_np",
             "--locations", f"{both},blocks.0.hook_resid_pre@cls", "--probe-seeds", "1", "--folds", "2", "--quiet")  # fmt: skip
    assert r.exit_code == 0, r.output
    import csv

    rows = list(csv.DictReader(open(tmp_path / "probes" / "probes.csv")))
    subj = next(row for row in rows if row["target"] == "subj_np" and row["location"] == both)
    assert int(subj["classes"]) > 2 and subj["role"] == "n_s.p+n_s.h"
    r = _run("intervene", *task, "--model", model, "--variable", "n_s,subj_np", "--locations", "aligned",
             "--max-examples", "24", "--out", tmp_path / "iv.h5", "--quiet")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "| n_s | " in r.output and "(words)" in r.output  # the layer table, layer 0 marked
    subj_loc = "blocks.1.hook_resid_post@adj_s.p+n_s.p+adj_s.h+n_s.h"
    with open_interventions(tmp_path / "iv.h5") as iv:
        assert iv.task == "mqnli" and subj_loc in iv.locations and len(iv.locations) == 2 * 3
        assert iv.aligned_locations("n_s") == ["blocks.0.hook_resid_pre@n_s.p+n_s.h", "blocks.0.hook_resid_post@n_s.p+n_s.h", both]
        model_pred = iv.matrix("model_pred", subj_loc)
        graphs = {v: build_graph(model_pred, iv.matrix("causal_pred", subj_loc, v), iv.values(v).codes) for v in ("n_s", "subj_np")}
    assert not np.array_equal(graphs["n_s"].causal, graphs["subj_np"].causal), "causal edges come from the chosen variable"
    r = _run("cliques", "--interventions", tmp_path / "iv.h5", "--variable", "subj_np", "--location", subj_loc, "--out", tmp_path / "cl")
    assert r.exit_code == 0, r.output
    assert "variable subj_np" in r.output and (tmp_path / "cl" / "graph.graphml").is_file()


def test_bad_multi_position_input_exits_2(mqnli_file, tiny_mqnli_classifier_dir, tmp_path):
    task = ("--task", "mqnli", "--data-file", mqnli_file)
    common = ("--model", tiny_mqnli_classifier_dir, "--max-examples", "8", "--quiet")
    for location, variable, message in [
        ("blocks.1.hook_resid_post@n_s.p+n_s.p", "n_s", "names a token role twice"),
        ("blocks.1.hook_resid_post@n_s.p+w_h", "n_s", "unknown token role 'w_h'"),
        ("blocks.1.hook_resid_post@n_s.p --wordpiece all", "n_s", "WordPiece token"),
        ("blocks.1.hook_resid_post", "lexrel", "has no such variable"),
    ]:
        out = tmp_path / "x.h5"
        r = _run("intervene", *task, *common, "--variable", variable, "--locations", *location.split(), "--out", out)
        assert r.exit_code == 2 and message in r.output and not out.exists(), (location, r.output)
    r = _run("intervene", "--task", "mqnli", *common, "--locations", "aligned", "--variable", "n_s", "--out", tmp_path / "y.h5")
    assert r.exit_code == 2 and "--task mqnli needs --data-file" in r.output
    r = _run("cache", *task, "--model", tiny_mqnli_classifier_dir, "--wordpiece", "all", "--out", tmp_path / "c.h5")
    assert r.exit_code == 2 and "one vector per site × role" in r.output


def test_a_role_an_example_lacks_is_named(mqnli, minilm_tokenizer):
    task, examples = mqnli
    encoded = encode_examples(examples[:3], minilm_tokenizer, "first", task.labels)
    lacking = encoded[1].__class__(**{**encoded[1].__dict__, "positions": {"cls": 0}})
    with pytest.raises(ConfigError, match=f"example {lacking.example_id} has no token role 'n_s.p'"):
        location_tokens([encoded[0], lacking], ("n_s.p",), "location L")


_OPENING: list[list[str]] = []  # the lists an audit hook appends to (a hook cannot be removed: it records only while one is open)


def _record_opens(event: str, args: tuple) -> None:
    if event == "open" and _OPENING and isinstance(args[0], (str, os.PathLike)):
        _OPENING[-1].append(os.fspath(args[0]))


@contextmanager
def _opened(folder):
    """The files under ``folder`` Python opens inside the block, one entry per open."""
    if not _OPENING and _record_opens not in _HOOKED:
        sys.addaudithook(_record_opens)
        _HOOKED.append(_record_opens)
    found: list[str] = []
    _OPENING.append(found)
    try:
        yield found
    finally:
        _OPENING.pop()
        found[:] = [os.path.relpath(p, folder) for p in found if os.path.abspath(p).startswith(os.path.abspath(folder) + os.sep)]


_HOOKED: list = []


@pytest.mark.slow(seconds=23)
def test_demo_runs_on_another_task(mqnli_file, tiny_encoder_dir, tmp_path):
    """Issue #15 item 3: `interp demo --task mqnli` fine-tunes, caches, probes, intervenes at every aligned location, finds cliques."""
    r = _run("demo", "--task", "mqnli", "--data-file", mqnli_file, "--model", tiny_encoder_dir, "--epochs", "1",
             "--examples", "16", "--probe-seeds", "1", "--no-das", "--no-screen", "--out", tmp_path / "demo", "--quiet")  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "| subj_np | " in r.output and "Cliques (Appendix A.3) at blocks." in r.output
    for name in ("model/model.safetensors", "metrics.json", "activations.h5", "probes.csv", "interventions.h5", "cliques.json"):
        assert (tmp_path / "demo" / name).is_file(), name
    assert json.loads((tmp_path / "demo" / "metrics.json").read_text())["model"]["trained_on"] == ["train"]
    # The same pipeline as MoNLI's: a location given replaces the plan's (every aligned site); the rest is reused.
    checkpoint = tmp_path / "demo" / "model"
    with _opened(checkpoint) as opened:
        again = _run("demo", "--task", "mqnli", "--data-file", mqnli_file, "--model", tiny_encoder_dir, "--epochs", "1",
                     "--examples", "16", "--probe-seeds", "1", "--no-das", "--no-screen", "--out", tmp_path / "demo", "--location",
                     "blocks.1.hook_resid_post@cls")  # fmt: skip
    assert again.exit_code == 0, again.output
    with _opened(checkpoint) as once:  # the null: what one load and one hash of the checkpoint read
        from interp.api.loading import load_model

        assert load_model(str(checkpoint)).sha256
    # The checkpoint is loaded and hashed once and the object handed to every stage (cache, probes, interventions, cliques).
    # (training.json is read too: the fine-tuning is reused, not loaded.)
    assert "model.safetensors" in once and sorted(f for f in opened if f in once) == sorted(once), (opened, once)
    assert "already trained with these settings" in again.output and "Interchange interventions (§6.2) at blocks.1.hook_resid_post@cls: given" in again.output
    with h5py.File(tmp_path / "demo" / "interventions.h5", "r") as f:
        assert list(f.attrs["locations"]) == ["blocks.1.hook_resid_post@cls"]
    assert json.loads((tmp_path / "demo" / "cliques.json").read_text())["location"] == "blocks.1.hook_resid_post@cls"
