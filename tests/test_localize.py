"""`interp localize`: MIB's featurizers at every site, its table with intervals, the verdict against the untrained
featurizer, the stays-the-base null and the re-initialised model (a planted control that matches the model: never
"localizes"), resumed after a kill, refused on bad input; on a tiny random decoder (IOI) and on MiniLM fine-tuned on
MoNLI (real data)."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from interp.analysis.localization import (
    HeldOut, format_mib_table, hits_array, hits_string, mib_table, ravel, read_pairs, same_pairs, verdict,
)
from interp.api.specs import DataSpec
from interp.cli import main
from interp.core.errors import ConfigError, DataError, OutputError
from interp.jobs import localize as job
from interp.jobs.localize import LocalizeConfig, parse_blocks, run_localize

from decoders import save_bare_ioi_lm

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")


def test_blocks_are_read_as_all_none_lists_and_ranges():
    assert parse_blocks("all", 4) == [0, 1, 2, 3] and parse_blocks("none", 4) == []
    assert parse_blocks("0-5:2,1", 6) == [0, 2, 4, 1] and parse_blocks(" 3 ", 6) == [3]
    for bad in ("6", "a", "2-1", "0-3:0"):
        with pytest.raises(ConfigError, match="blocks"):
            parse_blocks(bad, 6)


def _pairs(n=40, seed=0, breakdown=None):
    rng = np.random.default_rng(seed)
    return HeldOut(rng.integers(0, 20, n), rng.integers(0, 20, n), np.arange(20) // 2, "pairs of examples", breakdown)


def _row(hits, stays, model="pretrained", block=0, position="last", featurizer="das", gain_low=0.2):
    hits, stays = np.asarray(hits, bool), np.asarray(stays, bool)
    value = float(hits.mean())
    return {"model": model, "featurizer": featurizer, "variable": "v", "block": block, "position": position, "iia": value, "iia_low": value - 0.1,
            "iia_high": value + 0.1, "untrained_iia": 0.1, "gain": 0.5, "gain_low": gain_low, "gain_high": 0.7, "stays_base": float(stays.mean()),
            "stays_base_low": 0.0, "stays_base_high": float(stays.mean()), "hits": hits_string(hits), "stays_hits": hits_string(stays)}  # fmt: skip


def test_the_verdict_needs_every_control_cleared_and_a_planted_twin_fails_it():
    pairs = _pairs()
    good, none = np.ones(40, bool), np.zeros(40, bool)
    row = _row(good, none)
    assert verdict(row, _row(none, none, "re-initialised"), pairs) == "localizes"
    # the re-initialised model does as well: the featurizer shows nothing the weights' training made
    assert verdict(row, _row(good, none, "re-initialised"), pairs) == "not shown: the re-initialised model"
    assert verdict(row, None, pairs) == "not shown: no re-initialised run"
    assert "stays the base" in verdict(_row(good, good), _row(none, none), pairs)  # the intervention did nothing
    assert "its untrained featurizer" in verdict(_row(good, none, gain_low=-0.1), _row(none, none), pairs)
    assert verdict({**row, "chance": 0.95}, _row(none, none, "re-initialised"), pairs) == "not shown: chance"  # below the commonest answer
    assert hits_array(hits_string([True, False, True])).tolist() == [True, False, True]


def test_mibs_table_takes_each_layers_best_position_then_the_mean_and_the_best_layer():
    pairs = _pairs()
    rng = np.random.default_rng(1)
    rows = []
    for block, shares in ((0, (0.2, 0.6)), (1, (0.9, 0.3))):
        for position, share in zip(("a", "b"), shares):
            rows.append(_row(rng.random(40) < share, np.zeros(40, bool), block=block, position=position))
    best = {b: max((r for r in rows if r["block"] == b), key=lambda r: r["iia"]) for b in (0, 1)}
    (table,) = mib_table(rows, {"v": pairs})
    assert table["blocks"] == 2 and table["mean"] == pytest.approx((best[0]["iia"] + best[1]["iia"]) / 2)
    assert table["mean"].low <= table["mean"] <= table["mean"].high and table["mean"].high - table["mean"].low > 0
    assert table["best_block"] == 1 and table["position"] == best[1]["position"]
    assert "| pretrained | das | v |" in format_mib_table([table])


def test_ravel_splits_a_units_iia_by_the_attribute_each_base_asks():
    asked = np.array(["country", "continent"] * 20)
    pairs = _pairs(breakdown={"attribute": asked})
    hits = asked == "country"  # moves every country answer, leaves no continent answer alone
    scores = ravel({"hits": hits_string(hits)}, "Country", pairs)
    assert float(scores["cause"]) == 1.0 and float(scores["isolate"]) == 0.0 and float(scores["ravel"]) == 0.5
    assert ravel({"hits": hits_string(hits)}, "Country", _pairs()) is None


def test_mibs_ioi_signals_on_one_draws_four_prompts_and_its_linear_model():
    """MIB's (position, token) signals over every (base, source) of one draw's four prompts, by hand: a source whose
    first clause is flipped keeps the answer and moves the slot; one whose subject is swapped moves both; a source of
    other names has no term for ``output_token``. The fit recovers planted coefficients, and a unit whose readouts follow
    the model for its variable scores its noise."""
    from interp.analysis.localization import linear_error, linear_fit
    from interp.tasks.ioi.data import ioi_examples
    from interp.tasks.ioi.task import mib_both, mib_signals

    examples = ioi_examples(("test",), draws={"test": 2})
    draw, other = examples[:4], examples[4:]
    for base in draw:
        for source in draw:
            same_slot = (base.subject == base.name_b) == (source.subject == source.name_b)
            same_io = source.label == base.label
            assert mib_both(base, source) == (1 if same_slot else -1, 1 if same_io else -1)
            assert mib_signals(base, source, "output_position") == (1 if same_slot else -1, 1)
            assert mib_signals(base, source, "output_token") == (1, 1 if same_io else -1)
        assert mib_both(base, other[0]) is None and mib_signals(base, other[0], "output_token") is None
        assert mib_signals(base, other[0], "output_position") is not None
    rng = np.random.default_rng(0)
    both = rng.choice([-1.0, 1.0], size=(40, 2))
    fit = linear_fit(both, 0.5 + 1.5 * both[:, 0] + 3.0 * both[:, 1] + rng.normal(scale=0.01, size=40))
    assert fit["bias"] == pytest.approx(0.5, abs=0.02) and fit["coefficients"] == pytest.approx([1.5, 3.0], abs=0.02) and fit["r2"] > 0.99
    pairs = _pairs()
    signals = np.where(np.arange(40)[:, None] % 5 == 0, np.nan, rng.choice([-1.0, 1.0], size=(40, 2)))
    follows = 0.5 + signals @ np.array([1.5, 3.0]) + 0.1
    found = linear_error(follows, signals, fit, pairs)
    assert float(found) == pytest.approx(0.01, abs=0.002) and found.low <= float(found) <= found.high
    assert float(linear_error(np.zeros(40), signals, fit, pairs)) > 5  # a unit that does nothing is far from the model
    assert linear_fit(np.ones((40, 2)), np.ones(40))["bias"] is None  # signals that never vary fit nothing


@pytest.fixture(scope="module")
def bare_lm(tmp_path_factory):
    return str(save_bare_ioi_lm(tmp_path_factory.mktemp("localize") / "bare"))


def _config(model, out, **settings):
    base = dict(model=model, out=str(out), data=DataSpec(task="ioi"), featurizers=("full", "das"), variables=("output_position",),
                blocks="0,1", positions=("cls",), control_blocks="1", train_pairs=16, test_pairs=8, epochs=1, k=2)  # fmt: skip
    return LocalizeConfig(**{**base, **settings})


def _check_linear_by_hand(found, model_dir):
    import torch

    import interp
    from interp.analysis.localization import linear_error, linear_fit
    from interp.tasks.ioi.task import logit_difference, mib_both, mib_signals

    lab = interp.IntervenableModel(model_dir, "ioi")
    pairs = json.loads((found.out / "pairs.json").read_text())["output_position"]
    examples = {e.id: e for e in found.examples}
    kept = [examples[i] for i in pairs["examples"]]
    bases, sources = [kept[i] for i in pairs["linear_bases"]], [kept[i] for i in pairs["linear_sources"]]
    assert all({b.name_a, b.name_b} == {s.name_a, s.name_b} and b is not s for b, s in zip(bases, sources))
    row = next(r for r in found.rows if (r["model"], r["featurizer"], r["block"]) == ("pretrained", "full", 0))
    site = lab.location("blocks.0.hook_resid_post@cls")
    logits = torch.stack([lab.interchange([b], [s], site, naive=True).logits[0, 0] for b, s in zip(bases, sources)])
    readouts = logit_difference(logits, bases, lab.model.labels).numpy()
    own = logit_difference(lab.predict(bases), bases, lab.model.labels).numpy()
    groups = np.array([" / ".join(sorted((e.name_a, e.name_b))) for e in kept])
    held = HeldOut(np.array(pairs["linear_bases"]), np.array(pairs["linear_sources"]), groups, pairs["unit"])
    nan = (np.nan, np.nan)
    fit = linear_fit(np.array([mib_both(b, s) or nan for b, s in zip(bases, sources)]), readouts)
    signals = np.array([mib_signals(b, s, "output_position") or nan for b, s in zip(bases, sources)])
    assert row["readouts"].split() == [f"{v:.4f}" for v in readouts] or np.allclose(
        [float(x) for x in row["readouts"].split()], readouts, atol=2e-4)  # fmt: skip
    assert fit["bias"] is not None and fit["pairs"] >= 3  # the held-out pairs share names often enough to fit
    assert row["mib_linear"] == pytest.approx(float(linear_error(readouts, signals, fit, held)), abs=1e-3)
    assert row["mib_linear_stays"] == pytest.approx(float(linear_error(own, signals, fit, held)), abs=1e-3)
    assert all(r.get("mib_linear", "") != "" for r in found.rows if r["block"] == 0)


def test_mibs_linear_score_is_the_hand_computed_one_on_mibs_counterfactual_pairs(bare_lm, tmp_path, monkeypatch):
    """Every unit of an IOI localization carries MIB's linear score: on the held-out prompts that share their names (MIB's
    counterfactuals), the squared error of the intervened logit difference from the linear model fitted on the full
    vector's, equal to the same computed from hand-written hooks; the base's own run beside it."""
    from interp.api.example_set import ExampleSet

    # the tiny random model answers few prompts right; counted right everywhere, MIB's filter keeps whole draws
    monkeypatch.setattr(ExampleSet, "own_labels", lambda self: np.array([self.binding.task.labels.index(e.label) for e in self.examples]))
    found = run_localize(_config(bare_lm, tmp_path / "linear", featurizers=("full", "dbm"), blocks="0", control_blocks="none", test_pairs=64),
                         progress=False)  # fmt: skip
    _check_linear_by_hand(found, bare_lm)
    assert "MIB linear (stays)" in found.format()


def test_a_localization_on_a_decoder_writes_every_unit_and_resumes_after_a_kill(bare_lm, tmp_path):
    out = tmp_path / "loc"
    found = run_localize(_config(bare_lm, out), progress=False)
    rows = list(csv.DictReader(open(out / "localize.csv")))
    assert {(r["model"], r["featurizer"], r["block"]) for r in rows} == {
        ("pretrained", f, b) for f in ("full", "das") for b in ("0", "1")} | {("re-initialised", f, "1") for f in ("full", "das")}
    assert all(r["verdict"] for r in rows if r["model"] == "pretrained") and (out / "mib.csv").is_file() and (out / "localize.png").is_file()
    pairs = json.loads((out / "pairs.json").read_text())["output_position"]
    assert len(pairs["bases"]) == len(rows[0]["hits"]) == int(rows[0]["test_pairs"]) and pairs["unit"] == "name pairs"
    assert found.kept <= found.of and "MIB's filter" in found.format() and len(found.to_frame()) == 6
    assert all(r["control_iia"] != "" for r in rows if r["model"] == "pretrained" and r["block"] == "1")
    # pairs.json read back recomputes MIB's table from the CSV's hits, intervals included
    held = read_pairs(out / "pairs.json")
    again = mib_table(rows, held)
    assert [(t["featurizer"], t["variable"]) for t in again] == [(t["featurizer"], t["variable"]) for t in found.table]
    figures = [[float(t["mean"]), t["mean"].low, t["mean"].high, float(t["best"])] for t in found.table]
    assert np.allclose([[float(a["mean"]), a["mean"].low, a["mean"].high, float(a["best"])] for a in again], figures, atol=1e-9)
    assert same_pairs(held, read_pairs(out / "pairs.json")) and not same_pairs(held, {"output_position": _pairs(len(pairs["bases"]))})
    other = {v: HeldOut(h.bases, h.sources, h.groups, h.unit, examples=list(h.examples)[::-1]) for v, h in held.items()}
    assert held["output_position"].examples == pairs["examples"] and not same_pairs(held, other)  # the same indices into other examples
    # killed after some units: the finished ones are kept, the missing one run again, the numbers the same
    parts = out / "localize.parts"
    kept = parts / "model__das__output_position__b0__cls.json"
    lost = parts / "model__full__output_position__b1__cls.json"
    stamp = os.stat(kept).st_mtime_ns
    lost.unlink()
    again = run_localize(_config(bare_lm, out), progress=False)
    assert os.stat(kept).st_mtime_ns == stamp and lost.is_file()
    assert [r["iia"] for r in again.rows] == pytest.approx([r["iia"] for r in found.rows], abs=1e-6)
    with pytest.raises(OutputError, match="other settings"):
        run_localize(_config(bare_lm, out, epochs=2), progress=False)


def test_a_pairs_file_that_is_not_a_localizations_is_refused_naming_it(tmp_path):
    for text, said in (("", "not a localization's pairs.json"), ("[1]", "not a localization's pairs.json"),
                       ('{"output_token": {"bases": [0]}}', "'output_token' has no held-out")):
        (tmp_path / "pairs.json").write_text(text)
        with pytest.raises(DataError, match=said) as raised:
            read_pairs(tmp_path / "pairs.json")
        assert str(tmp_path / "pairs.json") in str(raised.value)
    with pytest.raises(DataError, match="missing"):
        read_pairs(tmp_path / "none.json")


def test_heads_are_units_each_trained_and_scored_at_its_own_output(bare_lm, tmp_path):
    """``sites=("heads", "attn")``: a unit per attention head (``attn.hook_z.h{H}``) and one for all heads together, at
    each block and position, each with its re-initialised control; MIB's table per site kind; the full vector of a head
    is as wide as the head (the interchange at a head equals hand-written hooks: ``tests/test_components.py``)."""
    from transformers import AutoConfig

    from interp.hooks.locations import Location

    config = AutoConfig.from_pretrained(bare_lm)
    out = tmp_path / "heads"
    found = run_localize(_config(bare_lm, out, sites=("heads", "attn"), blocks="1", featurizers=("full", "dbm")), progress=False)
    rows = list(csv.DictReader(open(out / "localize.csv")))
    heads = config.num_attention_heads
    expected = {f"blocks.1.attn.hook_z.h{h}@last" for h in range(heads)} | {"blocks.1.attn.hook_z@last"}
    assert {r["location"] for r in rows} == expected and len(rows) == 2 * 2 * len(expected)  # 2 featurizers, model and control
    assert {r["site"] for r in rows} == {"head", "attn"} and all(r["verdict"] for r in rows if r["model"] == "pretrained")
    width = {r["location"]: int(r["k"]) for r in rows if r["featurizer"] == "full"}
    d_head = Location.parse("blocks.1.attn.hook_z.h0@cls").token_width(config)
    assert width["blocks.1.attn.hook_z.h0@last"] == d_head and width["blocks.1.attn.hook_z@last"] == heads * d_head
    assert {(t["featurizer"], t["site"]) for t in found.table if t["model"] == "pretrained"} == {(f, s) for f in ("full", "dbm") for s in ("head", "attn")}
    assert "| site |" in found.format() and (out / "localize.png").is_file()
    with pytest.raises(ConfigError, match="sites"):
        run_localize(_config(bare_lm, tmp_path / "bad", sites=("neurons",)), progress=False)


def test_a_control_that_matches_the_model_never_localizes(bare_lm, tmp_path, monkeypatch):
    """A planted re-initialised 'twin' that is the model itself: every unit's IIA equals its control's, and the verdict
    cannot say it localizes, whatever the IIA."""
    monkeypatch.setattr(job, "reinitialised", lambda model, seed: model)
    found = run_localize(_config(bare_lm, tmp_path / "twin", blocks="1"), progress=False)
    mine = [r for r in found.rows if r["model"] == "pretrained"]
    assert mine and all(r["verdict"].startswith("not shown") and "the re-initialised model" in r["verdict"] for r in mine)
    assert all(float(r["iia"]) == pytest.approx(float(r["control_iia"])) for r in mine)


@pytest.mark.parametrize("args, said", [
    (["--featurizers", "full,sae"], "--featurizers 'sae': choose among full, das, dbm, dbm-pca, dbm-sae"),
    (["--variable", "lexrel"], "lexrel"),
    (["--blocks", "9"], "--blocks '9': '9' is outside the model's blocks 0-2"),
    (["--positions", "w_h"], "w_h"),
    (["--sites", "residual,neurons"], "--sites 'neurons': choose among residual, heads, attn"),
])  # fmt: skip
def test_bad_input_is_one_line_with_exit_2_and_nothing_written(bare_lm, tmp_path, args, said):
    out = tmp_path / "bad"
    result = CliRunner().invoke(main, ["localize", "--model", bare_lm, "--task", "ioi", "--out", str(out), "--quiet", *args])
    assert result.exit_code == 2, result.output
    assert said in result.output and len(result.output.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.slow(seconds=40)
def test_localize_runs_on_minilm_fine_tuned_on_monli(finetuned_minilm, monli_dir, tmp_path):
    """Real data, the embedded model fine-tuned: lexrel at one block's w_h, the full vector and DAS, the control."""
    out = tmp_path / "monli"
    model, _ = finetuned_minilm
    result = CliRunner().invoke(main, ["localize", "--model", str(model), "--task", "monli", "--data-dir", str(monli_dir), "--splits",
                                       "pmonli_heldout", "--variable", "lexrel", "--blocks", "3", "--positions", "w_h", "--featurizers", "full,das",
                                       "--max-examples", "120", "--train-pairs", "64", "--test-pairs", "60", "--epochs", "1", "--k", "8",
                                       "--out", str(out), "--quiet"])  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(out / "localize.csv")))
    assert len(rows) == 4 and "word pairs" in rows[0]["over"] and "| pretrained | full | lexrel |" in result.output
    full = next(r for r in rows if r["model"] == "pretrained" and r["featurizer"] == "full")
    assert 0 <= float(full["iia_low"]) <= float(full["iia"]) <= float(full["iia_high"]) <= 1


def test_an_export_in_mibs_layout_reads_back_to_the_same_iia(bare_lm, tmp_path):
    """The full vector, DAS and DBM over the neurons written as MIB's three files per unit, read back as chosen
    features and scored on the same held-out pairs: the same IIA; an export folder that exists is refused before any work."""
    import interp
    from interp.files.mib import mib_unit_name, read_mib_unit

    export = tmp_path / "mib"
    found = run_localize(_config(bare_lm, tmp_path / "loc", featurizers=("full", "das", "dbm"), blocks="1", control_blocks="none",
                                 export=str(export)), progress=False)  # fmt: skip
    assert set(found.exported) == {"full", "das", "dbm"} and not (tmp_path / "mib.partial").exists()
    lab = interp.IntervenableModel(bare_lm, "ioi")
    for row in found.rows:
        prefix = export / row["featurizer"] / f"ioi_GPT2LMHeadModel_{row['variable']}" / mib_unit_name(1, "cls")
        assert {p.name.rsplit("_", 1)[-1] for p in prefix.parent.iterdir()} == {"featurizer", "indices"}  # _inverse_featurizer ends so too
        chosen = read_mib_unit(prefix, lab.width(found.examples, row["location"]))
        scored = lab.score_das(found.examples, chosen, row["location"], row["variable"], seed=0, test_share=0.2, test_pairs=8)
        assert scored["intervention"]["iia"] == pytest.approx(float(row["iia"]), abs=1e-9), row["featurizer"]
    with pytest.raises(OutputError, match="exists"):
        run_localize(_config(bare_lm, tmp_path / "again", export=str(export)), progress=False)
    assert not (tmp_path / "again").exists()


def test_a_mib_unit_of_another_width_or_with_bad_indices_is_refused_naming_its_file(tmp_path):
    import torch

    from interp.core.errors import DataError
    from interp.engine.interventions import RotatedSubspace
    from interp.files.mib import read_mib_unit, write_mib_unit

    prefix = tmp_path / "ResidualStream(Layer-0,Token-last_token)"
    write_mib_unit(prefix, RotatedSubspace(8, 3, seed=0))
    chosen = read_mib_unit(prefix, 8)
    base, source = torch.randn(5, 8), torch.randn(5, 8)
    assert torch.allclose(chosen(base, source), RotatedSubspace(8, 3, seed=0)(base, source), atol=1e-5)
    with pytest.raises(DataError, match=r"_featurizer: its rotation is \(8, 3\), not \[6, k\]"):
        read_mib_unit(prefix, 6)
    (tmp_path / f"{prefix.name}_indices").write_text("[0, 7]\n")
    with pytest.raises(DataError, match="_indices: the indices must be one line, a JSON list of feature numbers below 3"):
        read_mib_unit(prefix, 8)
    with pytest.raises(DataError, match="exists"):
        write_mib_unit(prefix, RotatedSubspace(8, 3, seed=0))
