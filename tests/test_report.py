"""`interp report`: the page collects a run through its manifests, leaves out what is absent, and works in a real browser."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from interp.cli import main

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
N_EXAMPLES = 40


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def tiny_run(minilm_tokenizer, monli_dir, tmp_path_factory) -> Path:
    """A demo-shaped run of a tiny model: a checkpoint, a cache, probes, interventions and cliques, each through the CLI.

    The tiny BERT is initialized wide so that its outputs vary with the input and its graph has causal edges.
    """
    from conftest import _tiny_classifier

    base = _tiny_classifier(tmp_path_factory.mktemp("tiny_wide"), minilm_tokenizer, ("entailment", "neutral"), seed=1, initializer_range=0.2)
    out = tmp_path_factory.mktemp("report") / "run"
    model = out / "model"
    data = ("--data-dir", monli_dir)
    steps = [
        ("train", "--model", base, "--splits", "nmonli_test", "--max-examples", "32", "--epochs", "1",
         "--eval-splits", "nmonli_test", "--out", model, "--quiet", *data),
        ("cache", "--model", model, "--splits", "nmonli_test", "--out", out / "activations.h5", "--quiet", *data),
        ("probe", "--cache", out / "activations.h5", "--model", model, "--out", out, "--probe-seeds", "1", "--quiet",
         "--locations", ",".join(f"blocks.{l}.hook_resid_post@{r}" for l in range(2) for r in ("w_h", "cls"))),
        ("intervene", "--model", model, "--out", out / "interventions.h5", "--splits", "pmonli,nmonli_test",
         "--max-examples", N_EXAMPLES, "--locations", "blocks.1.hook_resid_post@cls", "--quiet", *data),
        ("cliques", "--interventions", out / "interventions.h5", "--out", out, "--min-size", "2", "--format", "graphml,json"),
    ]  # fmt: skip
    for step in steps:
        result = run(*step)
        assert result.exit_code == 0, (step[0], result.stderr)
    return out


@pytest.fixture(scope="module")
def page(tiny_run) -> Path:
    result = run("report", tiny_run)
    assert result.exit_code == 0, result.stderr
    assert f"graphs: {N_EXAMPLES} nodes" in result.stdout
    return tiny_run / "report" / "index.html"


def page_data(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_every_section_comes_from_its_manifest(tiny_run, page):
    import networkx as nx

    from interp.analysis.iia import summarize_all

    data = page_data(page)
    assert {m["command"] for m in data["manifests"]} == {"cache", "probe", "intervene", "cliques"}
    probe_rows = (tiny_run / "probes.csv").read_text().strip().splitlines()[1:]
    assert len(data["probes"][0]["records"]) == len(probe_rows) == 4 * 2 * 2  # locations × targets × kinds
    assert {(r["role"], r["layer"]) for r in data["probes"][0]["records"]} == {(r, l) for r in ("w_h", "cls") for l in (1, 2)}
    with open(tiny_run / "probes.csv", newline="") as handle:  # each cell carries its interval over examples and its null
        written = {(r["location"], r["target"], r["probe"]): r for r in csv.DictReader(handle)}
    for cell in data["probes"][0]["records"]:
        row = written[cell["location"], cell["target"], cell["probe"]]
        for key in ("task_acc_low", "task_acc_high", "selectivity_type_low", "selectivity_shuffle_high", "chance", "n_examples"):
            assert cell[key] == float(row[key])
        assert cell["task_acc_low"] <= cell["task_acc_mean"] <= cell["task_acc_high"]
    summaries = summarize_all(tiny_run / "interventions.h5")
    expected = {(s["variable"], s["location"]): s["iia_causal"] for s in summaries}
    assert {(r["variable"], r["location"]): r["iia"] for r in data["iia"][0]["records"]} == expected
    for s, r in zip(summaries, data["iia"][0]["records"]):  # each cell says whether it stands above both nulls
        assert f"IIA − larger null {s['gap_causal']:+.3f} [{s['gap_causal_low']:+.3f}, {s['gap_causal_high']:+.3f}]" in r["detail"]
    assert data["behavioral"][0]["rows"][0]["model"] == "model"  # no metrics.json: the checkpoint's own record
    from interp.core.estimates import wilson

    record = json.loads((tiny_run / "model" / "training.json").read_text())["metrics"]
    shown = data["behavioral"][0]["rows"][0]["interval"]  # each accuracy with its Wilson interval over the split
    assert shown and {s: pytest.approx([wilson(m["correct"], m["n"]).low, wilson(m["correct"], m["n"]).high]) for s, m in record.items()} == shown
    (graph,) = data["graphs"]
    written = nx.read_graphml(tiny_run / "graph.graphml")
    assert len(graph["nodes"]) == written.number_of_nodes() == N_EXAMPLES
    assert len(graph["edges"]) == written.number_of_edges()
    report = json.loads((tiny_run / "cliques.json").read_text())
    assert [c["size"] for c in graph["cliques"]] == [c["size"] for c in report["cliques"]] and report["cliques"]
    for node in graph["nodes"]:
        d = written.nodes[node["id"]]
        assert (node["premise"], node["hypothesis"], node["clique"]) == (d["premise"], d["hypothesis"], d["clique"])
        assert node["premise"] and node["prediction"] in ("entailment", "neutral")


def test_clique_pairs_are_grouped_by_the_general_word(tiny_run, page):
    """Figure 5: under ⊏ (w_p below w_h) the hypothesis word is the general one; under ⊐ the premise word."""
    report = json.loads((tiny_run / "cliques.json").read_text())
    graph = page_data(page)["graphs"][0]
    for described, shown in zip(report["cliques"], graph["cliques"]):
        pairs = {(g["general"], s) for g in shown["groups"] for s in g["specific"]}
        want = {(h, p) if rel == "⊏" else (p, h) for p, h, rel in described["pairs"]}
        assert pairs == want


def test_the_page_is_self_contained(page):
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", text)
    assert text.count('id="report-data"') == 1 and len(text) > 1_000_000  # plotly.js is inline


def test_a_slot_name_in_the_data_stays_text():
    """A premise that reads like a template slot is data, not a place to inline the script."""
    from interp.analysis.report.page import render_page

    data = {"run_dir": "{{script}}", "note": "{{plotly}} </script>"}
    page = render_page(data)
    assert page.count("function (") > 0 and page.count('id="report-data"') == 1
    shown = page[page.index('id="report-data">') :]
    shown = shown[: shown.index("</script>")]
    assert json.loads(shown.split(">", 1)[1].replace("<\\/", "</")) == data


def test_absent_sections_are_left_out(tiny_run, tmp_path):
    only = tmp_path / "only_cliques"
    only.mkdir()
    for name in ("cliques.json", "graph.graphml", "cliques.manifest.json"):
        shutil.copy(tiny_run / name, only / name)
    manifest = json.loads((only / "cliques.manifest.json").read_text())
    manifest["files"] = {k: v for k, v in manifest["files"].items() if k in ("cliques.json", "graph.graphml")}
    (only / "cliques.manifest.json").write_text(json.dumps(manifest))
    result = run("report", only)
    assert result.exit_code == 0, result.stderr
    data = page_data(only / "report" / "index.html")
    assert (data["probes"], data["iia"], data["behavioral"]) == ([], [], []) and len(data["graphs"]) == 1


def test_a_file_no_manifest_lists_is_named_as_left_out(tiny_run, tmp_path):
    """An interventions file copied without its manifest: the page and the command say it was left out; with it, it is read."""
    moved = tmp_path / "moved"
    moved.mkdir()
    listed = json.loads((tiny_run / "cliques.manifest.json").read_text())["files"]
    for name in (*listed, "cliques.manifest.json", "interventions.h5"):
        shutil.copy(tiny_run / name, moved / name)
    result = run("report", moved)
    assert result.exit_code == 0, result.stderr
    data = page_data(moved / "report" / "index.html")
    assert data["iia"] == [] and [w for w in data["warnings"] if "left out" in w] == [
        "interventions.h5: left out, as no manifest lists it (moved without its manifest, or from a run that never finished); "
        "move it with its manifest, or run its command again"]  # fmt: skip
    assert "interp: warning: interventions.h5: left out" in result.stderr
    shutil.copy(tiny_run / "interventions.h5.manifest.json", moved / "interventions.h5.manifest.json")
    result = run("report", moved)
    assert result.exit_code == 0 and "left out" not in result.stderr
    assert len(page_data(moved / "report" / "index.html")["iia"]) == 1


def test_das_summaries_become_one_cell_per_method_and_location(tmp_path):
    """DAS and the best block once per k, vanilla (the same for every k) once."""
    from interp.core.outputs import OutputSet, write_csv_atomic
    from interp.analysis.report import collect_run

    header = "variable,location,size,seeds,k,chance,das_iia,das_low,das_high,block_iia,block_low,block_high,vanilla_iia,vanilla_low,vanilla_high"
    rows = [dict(zip(header.split(","), line.split(","))) for line in (
        "lexrel,blocks.2.hook_resid_post@w_h,2,3,2,0.5,0.81,0.78,0.84,0.60,0.58,0.62,0.55,0.55,0.55",
        "lexrel,blocks.2.hook_resid_post@w_h,8,3,8,0.5,0.93,0.90,0.96,0.70,0.69,0.71,0.55,0.55,0.55",
    )]  # fmt: skip
    with OutputSet(tmp_path / "das", "das") as outputs:
        write_csv_atomic(rows, outputs.path("das_summary.csv"))
    (cells,) = collect_run(tmp_path)["iia"]
    found = {(c["method"], c["role"], c["layer"]): c["iia"] for c in cells["records"]}
    assert found == {("das k=2", "w_h", 3): 0.81, ("block k=2", "w_h", 3): 0.60, ("das k=8", "w_h", 3): 0.93,
                     ("block k=8", "w_h", 3): 0.70, ("vanilla", "w_h", 3): 0.55}  # fmt: skip


@pytest.fixture(scope="module")
def seeds_page(tiny_classifier_dir, monli_dir, tmp_path_factory) -> Path:
    """`interp train --seeds 0,1` of a tiny model, then `interp report` of its folder."""
    out = tmp_path_factory.mktemp("seeds") / "train"
    trained = run("train", "--model", tiny_classifier_dir, "--splits", "nmonli_test", "--max-examples", "32", "--epochs", "1",
                  "--eval-splits", "nmonli_test,pmonli", "--seeds", "0,1", "--out", out, "--quiet", "--data-dir", monli_dir)  # fmt: skip
    assert trained.exit_code == 0, trained.output
    result = run("report", out)
    assert result.exit_code == 0, result.stderr
    assert "seed tables 1, behavioral tables 1," in result.stdout
    return out / "report" / "index.html"


def test_a_table_over_seeds_leads_the_page_and_the_seeds_share_one_behavioral_table(seeds_page):
    from interp.analysis.intervals import mean_interval

    data = page_data(seeds_page)
    run_dir = seeds_page.parent.parent
    (table,) = data["seeds"]
    assert table["seeds"] == [0, 1] and "fine-tuning seed" in table["varied"]
    records = {s: json.loads((run_dir / f"seed{s}" / "training.json").read_text())["metrics"] for s in (0, 1)}
    for row in table["rows"]:
        split = row["figure"].removeprefix("accuracy on ")
        values = [records[s][split]["accuracy"] for s in (0, 1)]
        assert row["values"] == pytest.approx(values, abs=1e-4)
        mean, low, high = mean_interval(values, bounds=(0.0, 1.0))
        assert (row["mean"], row["low"], row["high"]) == pytest.approx((mean, low, high), abs=1e-4)
        assert row["null"] == pytest.approx(max(records[s][split]["majority"] for s in (0, 1)), abs=1e-4)
    assert {r["figure"] for r in table["rows"]} == {"accuracy on nmonli_test", "accuracy on pmonli"}
    (behavioral,) = data["behavioral"]  # the seeds' checkpoints side by side, not a table each
    assert [r["model"] for r in behavioral["rows"]] == ["seed0", "seed1"]


def test_the_table_over_seeds_is_drawn_in_a_real_browser(seeds_page):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    (table,) = page_data(seeds_page)["seeds"]
    driver = _chromium()
    try:
        driver.get(seeds_page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#seeds-0 table"))
        sections = [s.get_attribute("id") for s in driver.find_elements(By.CSS_SELECTOR, "main > section")]
        assert sections[0] == "seeds-0"  # first, before the behavioral table
        rows = driver.find_elements(By.CSS_SELECTOR, "#seeds-0 tbody tr")
        assert len(rows) == len(table["rows"])
        for tr, row in zip(rows, table["rows"]):
            cells = [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            assert cells[0] == row["figure"] and len(cells) == 5
            shown = [float(x) for cell in cells[1:] for x in re.findall(r"-?\d+\.\d", cell)]  # rounded in JavaScript: ties go up
            want = [100 * v for v in (*row["values"], row["mean"], row["low"], row["high"], row["null"])]
            assert shown == pytest.approx(want, abs=0.051) and re.fullmatch(r"\d+\.\d \[\d+\.\d, \d+\.\d\]", cells[3])
            assert all(re.fullmatch(r"\d+\.\d", cell) for cell in (*cells[1:3], cells[4]))
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()


def _metrics(correct: dict, n: int = 200) -> dict:
    return {"accuracy": {s: c / n for s, c in correct.items()}, "metrics": {s: {"accuracy": c / n, "correct": c, "n": n} for s, c in correct.items()}}


@pytest.fixture(scope="module")
def demo_page(tiny_run, tmp_path_factory) -> Path:
    """The tiny run with a demo's ``metrics.json`` beside it (Table 1's two fine-tunings, their checks, the paper's BERT)."""
    from interp.core.outputs import OutputSet, write_json_atomic

    run_dir = tmp_path_factory.mktemp("demo_page") / "run"
    shutil.copytree(tiny_run, run_dir)
    shutil.rmtree(run_dir / "report", ignore_errors=True)
    metrics = {
        "config": {"epochs": 1}, "challenge_model": {"trained_on": ["pmonli"], **_metrics({"pmonli": 196, "nmonli_test": 4})},
        "model": {"trained_on": ["pmonli", "nmonli_train"], **_metrics({"pmonli": 197, "nmonli_test": 199})},
        "checks": {"challenge_effect": {"nmonli_test": 0.02, "at_most": 0.2, "holds": True},
                   "systematic_generalization": {"nmonli_test": 0.995, "at_least": 0.85, "holds": True}},
        "paper_bert": {"challenge": {"trained_on": "SNLI train", "pmonli": 94.4, "nmonli": 2.2},
                       "generalization": {"snli_then_nmonli": 90.0, "nmonli_only": 96.7}},
    }  # fmt: skip
    with OutputSet(run_dir, "behavioral") as outputs:
        write_json_atomic(outputs.path("metrics.json"), metrics)
    result = run("report", run_dir)
    assert result.exit_code == 0, result.stderr
    return run_dir / "report" / "index.html"


def test_the_page_states_its_findings_in_words_with_no_raw_json(demo_page):
    """Behaviour as a table beside the paper's figures with one sentence per effect; IIA beside both nulls with interval
    bars at every location, its verdict in words; the probe heatmap marks the cells above their null; no JSON on the page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    data = page_data(demo_page)
    (behavioral,) = data["behavioral"]
    assert behavioral["effects"] == [
        "Challenge effect holds: challenge_model on nmonli_test 2.0% [0.8, 5.0] (95% Wilson interval) (it asks at most 20.0%).",
        "Systematic generalization holds: model on nmonli_test 99.5% [97.2, 99.9] (95% Wilson interval) (it asks at least 85.0%).",
    ]
    assert [r["figures"] for r in behavioral["paper"]] == ["pmonli 94.4%; nmonli 2.2%", "snli then nmonli 90.0%; nmonli only 96.7%"]
    records = data["iia"][0]["records"]
    assert all(r["verdict"] in ("above both nulls", f"not above its stays-the-base null ({r['stays']:.3f})",
                                f"not above its copies-the-source null ({r['copies']:.3f})") for r in records)  # fmt: skip
    driver = _chromium()
    try:
        driver.get(demo_page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#iia-verdicts-0 tbody tr"))
        text = driver.find_element(By.ID, "main").text
        assert not re.search(r'[{}]|"\w+":', text), re.search(r'.{0,60}[{}].{0,60}', text)  # raw JSON anywhere on the page
        assert "Challenge effect holds: challenge_model on nmonli_test 2.0% [0.8, 5.0]" in text and "snli then nmonli 90.0%" in text
        rows = driver.find_elements(By.CSS_SELECTOR, "#iia-verdicts-0 tbody tr")
        chosen = [r for r in records if r["variable"] == records[0]["variable"] and r["method"] == records[0]["method"]]
        assert len(rows) == len(chosen) and all(r["verdict"] in text for r in chosen)
        traces = driver.execute_script("return document.getElementById('iia-plot-0').data.map(t => [t.name, t.error_y && t.error_y.array.length])")
        assert traces == [["IIA (causal pairs)", len(chosen)], ["stays the base (null)", len(chosen)], ["copies the source (null)", len(chosen)]]
        # Each null with its interval in the verdict table, and what the intervals resample in visible text under it.
        for row, r in zip(rows, sorted(chosen, key=lambda r: (r["role"], r["layer"]))):
            cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
            assert cells[2] == f"{r['stays']:.3f} [{r['stays_low']:.3f}, {r['stays_high']:.3f}]", cells
            assert cells[3] == f"{r['copies']:.3f} [{r['copies_low']:.3f}, {r['copies_high']:.3f}]", cells
        assert re.search(r"\[95%\]: 95% percentile bootstrap over \d+ word pairs", text), text[-2000:]
        # The probe heatmap opens on selectivity (accuracy alone reads high where the words give the label away).
        first = data["probes"][0]["records"][0]
        cell = [r for r in data["probes"][0]["records"] if r["target"] == first["target"] and r["probe"] == first["probe"]]
        probe = driver.execute_script("return document.getElementById('probe-plot-0').data[0].text")
        selective = [r for r in cell if r["selectivity_type_low"] > 0]
        assert sum(c.endswith("*") for row in probe for c in row if c) == len(selective)
        seeds = f"{int(first['seeds'])} probe seed{'' if first['seeds'] == 1 else 's'}"
        assert f"bootstrap over {int(first['n_examples'])} examples, {seeds}" in driver.find_element(By.ID, "probes-0").text
        from selenium.webdriver.support.ui import Select

        menu = Select(driver.find_elements(By.CSS_SELECTOR, "#probes-0 select")[2])
        assert menu.first_selected_option.text == "selectivity (type control)"
        menu.select_by_visible_text("accuracy")
        probe = driver.execute_script("return document.getElementById('probe-plot-0').data[0].text")
        marked = [r for r in cell if r["task_acc_low"] > r["chance"]]
        assert sum(c.endswith("*") for row in probe for c in row if c) == len(marked)
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "report_findings.png"))
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()


@pytest.mark.parametrize("case", ["empty", "missing", "not_a_folder"])
def test_bad_run_folder_gives_one_line_and_exit_2(tiny_run, tmp_path, case):
    target = tmp_path / "run"
    if case == "empty":
        target.mkdir()
        want = "no manifest"
    elif case == "missing":
        target.mkdir()
        (target / "probe.manifest.json").write_text(json.dumps({"command": "probe", "files": {"probes.csv": {}}}))
        want = "lists probes.csv, which is missing"
    else:
        target.write_text("x")
        want = "not a folder"
    result = run("report", target)
    assert result.exit_code == 2 and want in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (target / "report").exists() if target.is_dir() else True


def _chromium():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver_path, browser = shutil.which("chromedriver"), shutil.which("chromium")
    if driver_path is None or browser is None:
        pytest.skip("chromium and chromium-driver are not installed (make test installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,2400"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver is named explicitly, so Selenium Manager never downloads one.
    return webdriver.Chrome(service=Service(executable_path=driver_path), options=options)


def test_the_page_works_in_a_real_browser(page):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    data = page_data(page)
    driver = _chromium()
    try:
        driver.get(page.as_uri())
        points = "#graph-0 .scatterlayer .trace:last-of-type path.point"
        WebDriverWait(driver, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, points)) > 0)
        assert len(driver.find_elements(By.CSS_SELECTOR, points)) == N_EXAMPLES
        assert len(driver.find_elements(By.CSS_SELECTOR, "#probe-plot-0 .heatmaplayer .hm, #probe-plot-0 .heatmaplayer image")) >= 1
        # Click the node farthest from any other (so no neighbour is nearer the pointer): the panel shows its example.
        graph = data["graphs"][0]
        xy = np.array([[n["x"], n["y"]] for n in graph["nodes"]])
        gaps = np.linalg.norm(xy[:, None] - xy[None], axis=-1) + np.eye(len(xy)) * 1e9
        k = int(gaps.min(axis=1).argmax())
        node = driver.find_elements(By.CSS_SELECTOR, points)[k]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", node)
        ActionChains(driver).move_to_element(node).click().perform()
        detail = driver.find_element(By.ID, "graph-0-detail")
        WebDriverWait(driver, 10).until(lambda d: graph["nodes"][k]["id"] in detail.text)
        assert graph["nodes"][k]["premise"] in detail.text and graph["nodes"][k]["hypothesis"] in detail.text
        # Click the first clique: its word pairs appear, grouped by the general word.
        driver.find_element(By.CSS_SELECTOR, "tr.clique-row").click()
        first = graph["cliques"][0]["groups"][0]
        WebDriverWait(driver, 10).until(lambda d: "grouped by the more general word" in detail.text)
        assert first["general"] in detail.text
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "report.png"))
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
    finally:
        driver.quit()


def test_the_at_chance_warning_gives_the_whole_split_beside_the_sample(page, tiny_run):
    """A warning about the interventions file's sample gives the model's own accuracy on the whole split where its
    folder keeps it (``training.json``, from ``train --eval-splits``), and is shown on the page."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    kept = json.loads((tiny_run / "model" / "training.json").read_text())["metrics"]
    warnings = [w for w in page_data(page)["warnings"] if w.startswith("interventions.h5:")]
    assert warnings, "the tiny model is at chance on the intervention sample: the test needs a warning to read"
    for w in warnings:
        split = re.search(r" on (\w+): accuracy", w).group(1)
        assert (f"(on the whole split, {kept[split]['n']} examples: accuracy" in w) == (split in kept), w
    driver = _chromium()
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.ID, "warnings"))
        assert all(w in driver.find_element(By.ID, "warnings").text for w in warnings)
    finally:
        driver.quit()
