"""The attribution-patching screen: its estimate against a naive loop, its ranking and confirmation against the exact
interchange, its agreement figures against a hand count, and the command."""

from __future__ import annotations

import json

import numpy as np
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


@pytest.fixture(scope="module")
def lab(tiny_classifier_dir, monli_dir):
    return interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir))


def test_the_screen_ranks_by_estimate_and_confirms_the_top_and_a_draw_exactly(lab):
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=8, seed=1)
    with pytest.warns(interp.InterpWarning):  # a random tiny model is at chance: said once
        found = lab.screen(examples, LOCATIONS, variable="lexrel", confirm=2, seed=0)
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
        lab.screen(examples, LOCATIONS, variable="lexrel", confirm=-1)
    with pytest.raises(interp.ConfigError, match="variable="):
        lab.screen(examples, LOCATIONS, variable="nope")


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


def test_the_command_writes_the_table_and_the_agreement(tiny_classifier_dir, monli_dir, tmp_path):
    out = tmp_path / "screen"
    args = ["screen", "--model", tiny_classifier_dir, "--out", out, "--locations", LOCATIONS, "--confirm", "1", "--max-per-split", "6",
            "--data-dir", monli_dir, "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "estimated IIA [95%]" in result.output and "miss rate" in result.output and "sampling only" in result.output
    written = json.loads((out / "screen.json").read_text())
    assert written["locations"] == 5 and written["confirm"] == 1 and "spearman" in written["agreement"]
    assert (out / "screen.csv").read_text().splitlines()[0].startswith("location,estimated_iia")
    bad = CliRunner().invoke(main, [str(a) for a in [*args[:-1], "--confirm", "-1"]])
    assert bad.exit_code == 2 and "--confirm" in bad.output and np.isfinite(written["examples"])
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
    driver = _chromium()
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#screen-plot-0 .heatmaplayer"))
        cells = driver.execute_script("return document.getElementById('screen-plot-0').data[0].text")
        assert sum(c.endswith("*") for row in cells for c in row if c) == 2
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()
