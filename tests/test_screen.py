"""The attribution-patching screen: its estimate against a naive loop, its ranking and confirmation against the exact
interchange, its agreement figures against a hand count, and the command."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import torch
from click.testing import CliRunner

import interp
from interp.analysis.attribution import agreement, estimated_logits
from interp.cli import main

LOCATIONS = "blocks.0.hook_resid_post@w_h,blocks.1.hook_resid_post@w_p,blocks.1.hook_mlp_out@w_h,blocks.0.attn.hook_z.h1@w_h,blocks.1.hook_resid_post@cls"


def test_the_estimate_is_the_first_order_expansion_pair_by_pair():
    """The einsum path against a loop over pairs and labels; a base as its own source gives its own logits exactly."""
    g = torch.Generator().manual_seed(0)
    own, acts, grads = torch.randn(5, 3, generator=g), torch.randn(5, 7, generator=g), torch.randn(5, 3, 7, generator=g)
    fast = estimated_logits(own, acts, grads)
    for b in range(5):
        for s in range(5):
            for label in range(3):
                naive = float(own[b, label]) + sum(float(grads[b, label, w]) * float(acts[s, w] - acts[b, w]) for w in range(7))
                assert float(fast[b, s, label]) == pytest.approx(naive, abs=1e-5)
    assert torch.allclose(fast[range(5), range(5)], own)
    with pytest.raises(interp.ConfigError, match="do not fit"):
        estimated_logits(own, acts, grads[:, :2])


def test_agreement_counts_the_misses_among_the_drawn_against_the_top():
    rows = [{"location": name, "estimated_iia": est, "exact_iia": exact}
            for name, est, exact in (("a", 0.9, 0.8), ("b", 0.8, 0.6), ("c", 0.5, 0.7), ("d", 0.4, 0.3), ("e", 0.3, 0.2))]  # fmt: skip
    found = agreement(rows, top=["a", "b"], drawn=["c", "d", "e"])
    assert found["bar"] == 0.6 and found["missed"] == 1 and float(found["miss_rate"]) == pytest.approx(1 / 3)
    assert found["miss_rate"].low < 1 / 3 < found["miss_rate"].high
    assert float(found["spearman"]) == pytest.approx(0.9) and found["spearman"].low <= 0.9 <= found["spearman"].high
    with pytest.raises(interp.ConfigError, match="location a has no exact IIA"):
        agreement([{"location": "a", "estimated_iia": 0.5}], top=["a"], drawn=[])


def test_a_recall_any_ranking_reaches_says_so():
    """The residual stream's "exact top 10 in the screen's top 20" over 21 locations: a random ranking finds all 10 with
    probability 11/21; over 291 locations, 10 of 10 within 20 is far from chance."""
    from interp.analysis.attribution import sweep_agreement

    few = {f"l{i:02d}": float(i) for i in range(21)}
    found = sweep_agreement(few, few)
    assert found["found"] == 10 and found["recall_p"] == pytest.approx(11 / 21)
    many = {f"l{i:03d}": float(i) for i in range(291)}
    assert sweep_agreement(many, many)["recall_p"] < 1e-12


def test_a_sweep_agreement_counts_the_exact_top_among_the_screens_best(tmp_path, capsys):
    """Recall of the exact top 2 in the screen's top 3, by hand; Spearman over every location; the example script."""
    import importlib.util
    from pathlib import Path

    from interp.analysis.attribution import sweep_agreement

    exact = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.2, "e": 0.1}
    estimated = {"a": 0.5, "b": 0.1, "c": 0.6, "d": 0.7, "e": 0.0, "only_screened": 1.0}
    found = sweep_agreement(estimated, exact, top=2, within=3)
    assert found["found"] == 1 and found["locations"] == 5 and float(found["recall"]) == 0.5  # a is in {d, c, a}; b is not
    # a random ranking: 3 of 5 locations within the cut, so at least 1 of the top 2 is found with probability 1 - C(3,2)... = 0.9
    assert found["recall_chance"] == 0.6 and found["recall_p"] == pytest.approx(1 - 1 / 10)
    assert float(found["spearman"]) == pytest.approx(0.1)  # 1 - 6·(4 + 4 + 1 + 9 + 0) / (5·24)
    with pytest.raises(interp.ConfigError, match="top=10"):
        sweep_agreement(estimated, exact)
    names = [f"blocks.{l}.hook_resid_post@w_h" for l in range(12)] + [f"blocks.{l}.attn.hook_z.h{h}@w_h" for l in range(3) for h in range(8)]
    values = np.random.default_rng(0).random(len(names))
    pd.DataFrame({"location": names, "estimated_iia": values, "cancels": False}).to_csv(tmp_path / "screen.csv", index=False)
    pd.DataFrame({"location": names, "iia_causal": values}).to_csv(tmp_path / "heads.csv", index=False)
    spec = importlib.util.spec_from_file_location("screen_vs_sweep", Path(__file__).resolve().parents[1] / "examples" / "screen_vs_sweep.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    script.main(str(tmp_path / "screen.csv"), str(tmp_path / "heads.csv"))
    out = capsys.readouterr().out
    assert re.search(r"^all\s+36\s+1\.000", out, re.M) and re.search(r"^heads\s+24\s", out, re.M) and "10 of 10" in out
    assert "residual" not in out  # 12 residual locations: too few to rank


@pytest.fixture(scope="module")
def lab(tiny_classifier_dir, monli_dir):
    return interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))


def test_the_screen_ranks_by_estimate_and_confirms_the_top_and_a_draw_exactly(lab):
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=8, seed=1)
    with pytest.warns(interp.InterpWarning):  # a random tiny model is at chance: said once
        found = lab.screen(examples, examples, LOCATIONS, variable="lexrel", confirm=2, seed=0)
    rows = found.rows
    assert [r["rank"] for r in rows] == [1, 2, 3, 4, 5] and len(rows) == 5
    assert [r["estimated_iia"] for r in rows] == sorted((r["estimated_iia"] for r in rows), reverse=True)
    assert [r["confirmed"] for r in rows[:2]] == ["top", "top"] and sum(r["confirmed"] == "drawn" for r in rows) == 2
    for r in rows:  # the estimate read as every IIA is: the same groups, the same nulls
        assert r["estimated_iia_low"] <= r["estimated_iia"] <= r["estimated_iia_high"]
        if r["confirmed"]:
            exact = lab.interchange(examples, examples, r["location"], variables=["lexrel"]).summary("lexrel")
            assert r["exact_iia"] == exact["iia_causal"] and r["above_nulls"] == (exact["gap_causal_low"] > 0)
    estimated = lab.interchange(examples, examples, rows[0]["location"], variables=["lexrel"])
    assert "word pairs" in found.interval and found.examples == len(examples)
    assert found.agreement["top"] == 2 and found.agreement["drawn"] == 2 and "Spearman" in repr(found)
    assert found.to_frame().shape[0] == 5 and estimated.logits.shape[:2] == (len(examples), len(examples))
    with pytest.raises(interp.ConfigError, match="confirm="):
        lab.screen(examples, examples, LOCATIONS, variable="lexrel", confirm=-1)
    with pytest.raises(interp.ConfigError, match="variable="):
        lab.screen(examples, examples, LOCATIONS, variable="nope")
    with pytest.raises(interp.ConfigError, match="confirm=6.? asks for more locations than the 5 screened"):
        lab.screen(examples, examples, LOCATIONS, variable="lexrel", confirm=6)
    with pytest.raises(interp.ConfigError, match="blocks.9"):
        lab.screen(examples, examples, "blocks.9.hook_resid_post@w_h", variable="lexrel")


def test_bases_and_sources_of_their_own_are_estimated_pair_by_pair_and_confirmed_as_interchanged(lab):
    """Bases and sources apart (some shared): each pair's estimated IIA comes from the bases' gradients and the sources'
    vectors (a loop over pairs against the screen's own rows), and the confirmed rows are ``lab.interchange(bases,
    sources, ...)``'s figures."""
    from interp.analysis.attribution import estimated_logits

    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=6, seed=2)
    bases, sources = examples[:7], examples[4:]
    site = "blocks.0.hook_resid_post@w_h"
    with pytest.warns(interp.InterpWarning):
        found = lab.screen(bases, sources, f"{site},blocks.1.hook_mlp_out@w_h", variable="lexrel", confirm=1, qk_fix=False)
    assert found.examples == len(examples)
    grads = lab.gradients(examples, [site])[lab.location(site)]
    own = lab.predict(examples)
    loop = torch.stack([torch.stack([estimated_logits(own[[b, s]], grads.activations[[b, s]], grads.gradients[[b, s]])[0, 1]
                                     for s in range(4, len(examples))]) for b in range(7)])  # fmt: skip
    mine = lab.interchange(bases, sources, site, variables=["lexrel"])
    from interp.api.interchange import result_of_logits

    expected = result_of_logits(lab.bind(examples), bases, sources, lab.location(site), ("lexrel",), loop, None).summary("lexrel")
    (row,) = [r for r in found.rows if r["location"] == site]
    assert row["estimated_iia"] == pytest.approx(expected["iia_causal"]) and mine.logits.shape[:2] == (7, len(sources))
    for r in found.rows:
        exact = lab.interchange(bases, sources, r["location"], variables=["lexrel"]).summary("lexrel")
        assert r["exact_iia"] == exact["iia_causal"] and r["exact_iia_low"] == exact["iia_causal_low"]
    with pytest.raises(interp.ConfigError, match="sources"):
        lab.screen(bases, [object()], site, variable="lexrel")


def test_all_covers_every_residual_component_and_head_location(lab):
    from interp.api.screen import screen_locations

    found = screen_locations(lab.locations, lab.task.roles, "all")
    names = {str(loc) for loc in found}
    assert len(names) == len(found)
    layers, heads = lab.model.n_layers, lab.model.n_heads
    for role in lab.task.roles:
        assert f"blocks.0.hook_resid_pre@{role}" in names or f"blocks.{layers - 1}.hook_resid_post@{role}" in names
        assert sum(n.endswith(f"hook_mlp_out@{role}") for n in names) == layers
        assert sum(".attn.hook_z.h" in n and n.endswith(f"@{role}") for n in names) == layers * heads


def test_the_command_resumes_its_confirmation_to_the_rows_the_library_gives(tiny_classifier_dir, monli_dir, tmp_path, monkeypatch):
    """The exact interchange at the confirmed locations runs into screen.h5, a unit at a time: interrupted there, the
    screen writes no table, and run again does only the units left; its rows equal ``lab.screen``'s, estimates and
    exact figures alike; bad input exits 2; the report draws it."""
    import interp.backends.hf as backend_module

    out = tmp_path / "screen"
    args = [str(a) for a in ["screen", "--model", tiny_classifier_dir, "--out", out, "--locations", LOCATIONS, "--confirm", "1",
                             "--max-per-split", "6", "--data-dir", monli_dir, "--quiet"]]  # fmt: skip
    calls, real = {"n": 0}, backend_module.interchange_logits

    def counting(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(backend_module, "interchange_logits", counting)
    stopped = CliRunner().invoke(main, args)
    assert stopped.exit_code == 130 and not (out / "screen.csv").exists()
    assert len(list((out / "screen.h5.parts").glob("*.npy"))) == 1  # the first confirmed location's one unit
    calls["n"] = 100
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert calls["n"] == 101  # only the second location's unit
    assert "estimated IIA [95%]" in result.output and "miss rate" in result.output and "sampling only" in result.output
    written = json.loads((out / "screen.json").read_text())
    assert written["locations"] == 5 and written["confirm"] == 1 and "spearman" in written["agreement"]
    assert written["qk_fix"] and written["graddrop"] and "QK fix" in result.output and "GradDrop" in result.output
    # The agreement in one sentence, in the printout and the file: shown to agree only where Spearman's interval is above 0.
    spearman_low = float(written["agreement"]["spearman"].split("[")[1].split(",")[0]) if "[" in written["agreement"]["spearman"] else float("nan")
    opening = "The screen's order agrees" if spearman_low > 0 else "The screen's order is not"
    assert written["verdict"].startswith(opening) and written["verdict"] in result.output, written["verdict"]
    for k in ("-1", "6"):  # below 0; more than the 5 locations
        bad = CliRunner().invoke(main, [*args[:-1], "--confirm", k])
        assert bad.exit_code == 2 and "--confirm" in bad.output and np.isfinite(written["examples"]), bad.output
    table = pd.read_csv(out / "screen.csv", keep_default_na=False)
    lab = interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=6, seed=0)
    with pytest.warns(interp.InterpWarning):
        rows = lab.screen(examples, examples, LOCATIONS, variable="lexrel", confirm=1, seed=0).rows
    assert list(table["location"]) == [r["location"] for r in rows]
    for column in ("estimated_iia", "estimated_iia_low", "robustness", "exact_iia", "exact_iia_high"):
        mine = [r.get(column, "") for r in rows]
        assert [float(x) if x != "" else "" for x in table[column]] == pytest.approx(mine, abs=6e-5, nan_ok=True), column  # 4 decimals kept
    # Finished: the same screen again is read back (nothing estimated), printing what it printed; another seed runs anew.
    import interp.api.intervenable as face

    real_screen = face.IntervenableModel.screen
    monkeypatch.setattr(face.IntervenableModel, "screen", lambda *a, **k: pytest.fail("a finished screen was estimated again"))
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and again.stdout == result.stdout, again.output
    ran = []
    monkeypatch.setattr(face.IntervenableModel, "screen", lambda *a, **k: ran.append(1) or real_screen(*a, **k))
    other = CliRunner().invoke(main, [*args, "--seed", "1"])
    assert other.exit_code == 0 and ran == [1], other.output
    _the_report_draws_the_screen(out)


def _the_report_draws_the_screen(out):
    """`interp report` of the screen's folder: a site × layer heatmap of the estimates, the confirmed cells marked."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from test_report import _chromium, page_data

    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    page = out / "report" / "index.html"
    (section,) = page_data(page)["screens"]
    assert len(section["records"]) == 5 and sum(r["confirmed"] != "" for r in section["records"]) == 2
    assert {r["role"] for r in section["records"]} >= {"resid@w_h", "hook_mlp_out@w_h", "attn.hook_z.h1@w_h"} and section["agreement"]
    by_location = {r["location"]: r for r in section["records"]}  # GradDrop's score, none where no layer follows (NaN stays off the page)
    assert by_location["blocks.1.hook_resid_post@cls"]["robustness"] is None and by_location["blocks.0.hook_resid_post@w_h"]["robustness"] is not None
    driver = _chromium()
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#screen-plot-0 .heatmaplayer"))
        cells = driver.execute_script("return document.getElementById('screen-plot-0').data[0].text")
        assert sum(c.endswith("*") for row in cells for c in row if c) == 2
        assert section["verdict"] and section["verdict"] in driver.find_element(By.ID, "screen-0").text
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()


def test_the_command_never_replaces_a_file_another_command_wrote(tiny_classifier_dir, monli_dir, tmp_path, monkeypatch):
    """A user's ``screen.h5`` written by ``interp intervene`` (its manifest names intervene) and a ``screen.csv`` no manifest
    lists: each refused in one line before any work (the screen never runs), the file byte for byte as it was; a variable
    the task lacks is refused before ``--confirm`` is compared with the locations."""
    import hashlib

    import interp.api.intervenable as face

    out = tmp_path / "screen"
    data = ["--data-dir", str(monli_dir), "--quiet"]
    made = CliRunner().invoke(main, ["intervene", "--model", str(tiny_classifier_dir), "--out", str(out / "screen.h5"), "--max-examples", "6",
                                     "--locations", "blocks.0.hook_resid_post@w_h", *data])  # fmt: skip
    assert made.exit_code == 0, made.output
    before = hashlib.sha256((out / "screen.h5").read_bytes()).hexdigest()
    monkeypatch.setattr(face.IntervenableModel, "screen", lambda *a, **k: pytest.fail("the screen ran before the refusal"))
    args = ["screen", "--model", str(tiny_classifier_dir), "--out", str(out), "--locations", LOCATIONS, "--confirm", "1", "--max-per-split", "4", *data]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "`interp intervene` wrote it, not a screen" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert hashlib.sha256((out / "screen.h5").read_bytes()).hexdigest() == before
    other = tmp_path / "other"
    other.mkdir()
    (other / "screen.csv").write_text("mine\n")
    result = CliRunner().invoke(main, [*args[:4], str(other), *args[5:]])
    assert result.exit_code == 2 and "interp did not write it" in result.stderr and (other / "screen.csv").read_text() == "mine\n"
    assert sorted(p.name for p in other.iterdir()) == ["screen.csv"]
    result = CliRunner().invoke(main, ["screen", "--model", str(tiny_classifier_dir), "--out", str(tmp_path / "new"), "--locations", LOCATIONS,
                                       "--confirm", "9", "--variable", "polarity", "--max-per-split", "4", *data])  # fmt: skip
    assert result.exit_code == 2 and "--variable" in result.stderr, result.stderr


def test_a_sweep_agreement_that_is_only_the_contrast_between_groups_shows_it():
    """Four groups of locations (two roles × residual stream and heads) whose IIA differs by group while the ranks
    within each group are unrelated: the whole-set Spearman is high, each group's own is not, and resampling whole
    groups gives a wider interval than resampling locations as if they were independent draws."""
    from interp.analysis.attribution import location_group, sweep_agreement

    rng = np.random.default_rng(0)
    estimated, exact = {}, {}
    for offset, (role, kind) in enumerate([("w_p", "resid"), ("w_h", "resid"), ("w_p", "head"), ("w_h", "head")]):
        for layer in range(8):
            name = f"blocks.{layer}.hook_resid_post@{role}" if kind == "resid" else f"blocks.{layer}.attn.hook_z.h1@{role}"
            estimated[name], exact[name] = offset + 0.1 * rng.random(), offset + 0.1 * rng.random()
    assert location_group("blocks.3.attn.hook_z.h1@w_h") == "w_h/head" and location_group("blocks.0.hook_mlp_out@w_p") == "w_p/mlp_out"
    grouped = sweep_agreement(estimated, exact)
    loose = sweep_agreement(estimated, exact, grouped=False)
    assert float(grouped["spearman"]) == float(loose["spearman"]) > 0.8
    assert set(grouped["within_groups"]) == {"w_p/resid", "w_h/resid", "w_p/head", "w_h/head"} and abs(grouped["within_mean"]) < 0.5
    assert "groups" in grouped["spearman"].method and "groups" not in loose["spearman"].method
    width = lambda e: e.high - e.low  # noqa: E731
    assert width(grouped["spearman"]) > 2 * width(loose["spearman"]), (grouped["spearman"], loose["spearman"])


def test_the_screen_shows_its_progress_over_examples_and_locations(lab, capsys):
    """``progress=True``: a bar over the gradient pass's examples and one over the locations' estimates; the counts
    they are told add up to every example and every location; without it, nothing on stderr."""
    from interp.api.screen import screen

    examples = lab.task.examples(("nmonli_test",), per_split=6, seed=0)
    rows, located = [], []
    found = screen(lab.bind(examples), examples, examples, lab.locations(LOCATIONS), "lexrel", on_rows=rows.append,
                   on_location=lambda: located.append(1))  # fmt: skip
    assert sum(rows) == 6 and len(located) == 5 == len(found.rows)
    capsys.readouterr()
    lab.screen(examples, examples, LOCATIONS, variable="lexrel", progress=True)
    err = capsys.readouterr().err
    assert "screen: gradients" in err and " 0/6 " in err and "screen: estimates" in err and "/5 " in err, err[-500:]
    lab.screen(examples, examples, LOCATIONS, variable="lexrel")
    assert "screen:" not in capsys.readouterr().err


def test_the_agreement_within_groups_is_not_made_of_ties_and_three_groups_get_no_interval():
    """Locations 0 under both methods are left out of a group's own Spearman (a group of ties only is undefined), a
    group where the screen gives one estimate everywhere counts 0 and is named, and three groups (10 distinct
    resamples) give the whole-set Spearman no interval."""
    from interp.analysis.attribution import sweep_agreement

    estimated, exact = {}, {}
    for layer in range(8):
        estimated[f"blocks.{layer}.hook_resid_post@w_p"], exact[f"blocks.{layer}.hook_resid_post@w_p"] = layer, layer + 0.5  # agrees
        estimated[f"blocks.{layer}.hook_resid_post@w_h"], exact[f"blocks.{layer}.hook_resid_post@w_h"] = 0.0, 0.1 * layer  # screen flat
        estimated[f"blocks.{layer}.hook_resid_post@cls"], exact[f"blocks.{layer}.hook_resid_post@cls"] = 0.0, 0.0  # ties only
    found = sweep_agreement(estimated, exact)
    within = found["within_groups"]
    assert within["w_p/resid"] == (1.0, 8) and within["w_h/resid"] == (0.0, 7) and np.isnan(within["cls/resid"][0])
    assert found["within_flat"] == ["w_h/resid"] and found["within_mean"] == pytest.approx(8 / 15)
    assert np.isnan(found["spearman"].low) and "3 groups allow 10 distinct resamples" in found["spearman"].method
