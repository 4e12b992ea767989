"""A lint over ``docs/results/``: a sentence that says a finding holds, or agrees with the paper, sits beside an interval.

A claim is a sentence with "holds" (on, for, here, across, ... or at a clause's end), "agrees with the paper", or "as
the paper finds/does/reports/found"; a comparison is one that calls a recipe or model steadier, or its mean higher, or
says its figures spread less (:data:`COMPARISON`), unless it says that is not shown. Either needs the interval. Beside it (in it, the sentence before or the one after) there must be a 95%
interval written ``[low, high]``, or the claim must say it is over every seed ("on every seed", where each seed's
figures are in the table above it). Negations ("does not hold") claim nothing. Tables, code blocks and headings are
not prose and are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"


def example_script(relative: str):
    """The module of the repository's script ``examples/<relative>`` (what makes a page's tables from its files)."""
    import importlib.util

    script = RESULTS.parents[1] / "examples" / relative
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CLAIM = re.compile(r"as the paper (finds|does|reports|found)|\bagrees? with the paper|(?<!not )(?<!antecedent )\b(holds|hold)\b"
                   r"(?=[.,;:)]| (here|for|on|in|over|across|up|true|of)\b)", re.I)  # fmt: skip
#: A comparison of two recipes or models that needs an interval for its difference (a p-value alone does not carry it).
COMPARISON = re.compile(r"\b(steadier|steadies|steadiest|higher mean|spreads? (far )?less|more steadily)\b", re.I)
#: What withdraws a comparison: it is said not to be shown, is asked, or is another paper's (cited).
NOT_CLAIMED = re.compile(r"\bnot (shown|steadier)|\bno steadier\b|\bnor\b|\bwhether\b|\bis not\b|\bwere not\b|\bet al\b", re.I)
INTERVAL = re.compile(r"\[\s*[−+-]?\d+(\.\d+)?%?\s*,\s*[−+-]?\d+(\.\d+)?%?\s*\]|\bon every seed\b|\bin every seed\b")


def sentences(text: str) -> list[list[str]]:
    """Each prose paragraph of a Markdown page as its sentences (tables, indented code, fences, headings, images left out)."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        if paragraph.lstrip().startswith(("|", "![", "#")) or paragraph.startswith("    "):
            continue
        found.append(re.split(r"(?<=[.;:!?])\s+(?=[A-Z*(`-])", " ".join(paragraph.split())))
    return found


def unsupported(text: str) -> list[str]:
    """The claim sentences of ``text`` with no interval beside them."""
    bad = []
    for paragraph in sentences(text):
        for i, sentence in enumerate(paragraph):
            claims = CLAIM.search(sentence) or (COMPARISON.search(sentence) and not NOT_CLAIMED.search(sentence))
            if claims and not INTERVAL.search(" ".join(paragraph[max(0, i - 1) : i + 2])):
                bad.append(sentence)
    return bad


@pytest.mark.parametrize("page", sorted(p.name for p in RESULTS.glob("*.md")))
def test_every_claim_on_a_results_page_sits_beside_an_interval(page):
    assert unsupported((RESULTS / page).read_text(encoding="utf-8")) == []


def test_the_lint_finds_a_bare_claim_and_passes_one_with_its_interval():
    """The null: the sentences the pages used to carry are found; the same with an interval, or a negation, are not."""
    bare = "Productivity holds: generalization reaches one level deeper (d3 70.1 ± 9.4 over three seeds)."
    assert unsupported(bare) == [bare]
    assert unsupported("Downward is harder at depth 5 (52.2 against 45.6), as the paper finds (§4).") != []
    assert unsupported("Productivity holds: 70.1 [46.9, 93.3] over three seeds.") == []
    assert unsupported("What does not hold: how far below.") == []
    assert unsupported("| a | holds here |\n| --- | --- |") == []
    steadier = "The default is the steadier recipe (Levene p = 0.96)."
    assert unsupported(steadier) == [steadier]  # a comparison with a p-value and no interval for the difference
    assert unsupported("The default is not shown to be steadier (Levene p = 0.96).") == []
    assert unsupported("The default has the higher mean (+2.25 [−0.43, +4.93] points).") == []


#: A variable named where it is "not shown to be found", and where it "is found": a page must not say both.
VARIABLE = re.compile(r"\b(lexrel|negat(?:ed|ion)|output_position|output_token|Country|Continent)\b")
FOUND = re.compile(r"(?<!not )\b(is|was) found\b")
#: A level read from the screen's estimates: the screen ranks sites, it does not measure them.
SCREEN_LEVEL = re.compile(r"\(estimated\)|by the estimates,? [^.;]*\b(changes nothing|carries|gives)\b", re.I)


def contradictions(text: str) -> list[str]:
    """Sentences that say a variable "is found" where the page says that variable is "not shown to be found" (in the
    clause that says so), and sentences that read a level from the screen's estimates."""
    prose = [s for paragraph in sentences(text) for s in paragraph]
    withheld = set()
    for sentence in prose:
        for clause in re.split(r"[;:]", sentence):
            if "not shown to be found" in clause:
                withheld |= {m.group(1)[:5] for m in VARIABLE.finditer(clause)}
    bad = [s for s in prose if SCREEN_LEVEL.search(s)]
    for sentence in prose:
        for clause in re.split(r"[;:]", sentence):
            named = {m.group(1)[:5] for m in VARIABLE.finditer(clause)}
            if FOUND.search(clause) and "not shown" not in clause and named & withheld:
                bad.append(sentence)
                break
    return bad


@pytest.mark.parametrize("page", sorted(p.name for p in RESULTS.glob("*.md")))
def test_no_page_says_found_and_not_shown_of_one_variable_or_reads_a_level_off_the_screen(page):
    assert contradictions((RESULTS / page).read_text(encoding="utf-8")) == []


def test_the_contradiction_lint_finds_planted_copies_of_each_kind():
    page = ("negated is not shown to be found at layer 4; the gap was not computed.\n\n"
            "* **negated** is found later: DAS 0.82 at layer 4.\n\n"
            "lexrel is found in a subspace [0.92, 0.93].\n\n"
            "Block 14's attention output alone carries 0.625 [0.500, 0.800] (estimated).\n\n"
            "Before block 14, by the estimates, swapping it changes nothing.")
    assert sorted(contradictions(page)) == ["* **negated** is found later:", "Before block 14, by the estimates, swapping it changes nothing.",
                                            "Block 14's attention output alone carries 0.625 [0.500, 0.800] (estimated)."]  # not lexrel's


#: Sentences the results pages once carried that claimed more than their figures (each rewritten to what they carry).
WITHDRAWN = (
    "which find lexrel where whole vectors do not",
    "the hypothesis-only model learned, from pretrained representations, how general a word is",
    "so its order is shown to agree with the exact interchange's there;",
    "within groups 0.896",
    "answer as setting lexrel would, under negation too",
    "a linear lexrel direction at w_h that the rest of the model reads through negation is shown here",
    "the IIA, 0.522, sits at chance",
    "the relation is held across both tokens, not at w_h",
    "negated** is found later",
    "where negated was found on one model",
    "and is at layer 4 (0.845",
    "The chain the paths point to is block 4's heads",
    "no rotation can make the interchange follow INFER",
    "by the estimates, swapping it changes nothing",
    "carries 0.625 [0.500, 0.800] (estimated)",
)


def test_no_withdrawn_sentence_is_back():
    text = " ".join(" ".join((RESULTS / p).read_text(encoding="utf-8").split()) for p in ("monli.md", "pretrained-decoders.md"))
    assert [w for w in WITHDRAWN if w in text] == []


def test_the_screen_table_of_the_monli_page_remakes_from_its_committed_files(capsys):
    """The MoNLI page's screen-against-sweep table is what ``examples/screen_vs_sweep.py`` prints from the two CSVs
    committed beside the page (``docs/results/data/screen_page/``): every Spearman with its interval, within-group
    figure, recall and p."""

    data = RESULTS / "data" / "screen_page"
    module = example_script("screen_vs_sweep.py")
    module.main(str(data / "screen.csv"), str(data / "heads.csv"))
    printed = {}
    for line in capsys.readouterr().out.splitlines()[1:]:
        found = re.match(r"(\w+) +(\d+) +([\d.]+ (?:\[[\d.]+, [\d.]+\]|\(no interval: \d+ groups\))) +([\d.]+) +(\d+) of 10 "
                         r"\([\d.]+ (\[[\d.]+, [\d.]+\])\) +(\S+)$", line)  # fmt: skip
        if found:
            printed[found.group(1)] = found.groups()[1:]
    names = {"all": "all", "residual stream": "residual", "single heads": "heads", "attention and MLP outputs, `hook_resid_mid`": "components"}
    text = (RESULTS / "monli.md").read_text(encoding="utf-8")
    section = text[text.index("## Every site screened, against the full exact sweep") :]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().replace("**", "") for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in names:
            rows[names[cells[0]]] = (cells[1], cells[2], cells[3], cells[4].split(" of ")[0], cells[4].split(" ", 3)[3], cells[5])
    assert set(rows) == set(printed) == set(names.values()), (rows, printed)
    for kind, (locations, spearman, within, found, recall, p) in rows.items():
        assert (locations, spearman, within, found, recall) == printed[kind][:5], kind
        assert float(p) == pytest.approx(float(printed[kind][5]), rel=1e-3), kind


def test_the_ablation_and_steering_table_of_the_monli_page_is_its_committed_files():
    """Each figure of the MoNLI page's ablation and steering table is the committed CSV's (``docs/results/data/effects/``),
    in points or %, with its interval (within the rounding of the CSV's four decimals and the page's one)."""
    import csv

    def read(name):
        with open(RESULTS / "data" / "effects" / name, newline="") as handle:
            return list(csv.DictReader(handle))

    def figures(cell):
        return [float(x) for x in re.findall(r"[−-]?\d+\.\d", cell.replace("−", "-"))[:3]]

    def expected(row, key):
        return [100 * float(row[key + end]) for end in ("", "_low", "_high")]

    text = (RESULTS / "monli.md").read_text(encoding="utf-8")
    table = text[text.index("## Ablating and steering at the demo's sites") :].split("\n\n")[3]
    for site, shown in (("blocks.0.hook_resid_post_w_h", "blocks.0.hook_resid_post@w_h"), ("blocks.5.hook_resid_post_cls", "blocks.5.hook_resid_post@cls")):
        ablated = {r["split"]: r for r in read(f"ablate_{site}.csv")}
        steered = {(r["direction"], float(r["scale"])): r for r in read(f"steer_{site}.csv")}
        cells = [c.strip() for c in next(row for row in table.splitlines() if f"`{shown}`" in row).strip("|").split("|")]
        for cell, row, key in ((cells[1], ablated["nmonli_test"], "change"), (cells[2], ablated["pmonli"], "change"),
                               (cells[3], steered[("direction", 4.0)], "to_counterfactual"), (cells[4], steered[("random", 4.0)], "to_counterfactual")):
            assert figures(cell) == pytest.approx(expected(row, key), abs=0.06), (shown, cell, key)


def test_the_localization_page_is_its_committed_csv():
    """The localization page's two tables are what ``examples/localization/tables.py`` makes from the CSV committed
    beside it (``docs/results/data/localization/``), verdicts included; and the verdict can fail: a unit whose IIA
    does not clear the re-initialised model is not said to localize."""

    module = example_script("localization/tables.py")
    made = module.tables(str(RESULTS / "data" / "localization" / "ioi_smollm2.csv"))
    text = (RESULTS / "localization.md").read_text(encoding="utf-8")
    shown = text[text.index("<!-- tables:begin -->") + len("<!-- tables:begin -->") : text.index("<!-- tables:end -->")].strip()
    assert shown == made.strip()
    row = {"verdict": "learned", "iia_low": "0.80", "untrained_iia_high": "0.50", "stays_base": "0.60"}
    assert module.verdict(row, {"iia_high": "0.70"}) == "localizes"
    assert module.verdict(row, {"iia_high": "0.85"}) == "not shown: re-initialised"  # a random model that matches it
    assert module.verdict(row, None) == "not shown: no re-initialised run"


def test_the_localization_pages_runs_of_interp_localize_are_their_committed_csvs():
    """Each block of the localization page marked ``<!-- localize: NAME -->`` is what
    ``examples/localization/localize_tables.py`` prints from ``data/localization/NAME.csv`` and ``NAME_mib.csv``
    (the two files ``interp localize`` wrote), verdicts and RAVEL's scores included."""

    module = example_script("localization/localize_tables.py")
    text = (RESULTS / "localization.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- localize: (\w+) -->\n(.*?)\n<!-- /localize -->", text, re.S)
    for name, shown in blocks:
        data = RESULTS / "data" / "localization"
        assert shown.strip() == module.tables(str(data / f"{name}.csv"), str(data / f"{name}_mib.csv")).strip(), name
    assert len(blocks) == text.count("<!-- localize:")
    # MIB's grid over two runs on the same pairs (the last token at every block, the names at every other block)
    grids = re.findall(r"<!-- localize-grid: ([\w ]+) -->\n(.*?)\n<!-- /localize-grid -->", text, re.S)
    for names, shown in grids:
        assert shown.strip() == module.grid([str(data / n) for n in names.split()]).strip(), names
    assert len(grids) == text.count("<!-- localize-grid:")
    # the grid of one run is that run's own mib.csv: pairs.json read back gives the job's intervals to the digit
    assert module.grid([str(data / "ioi_smollm2_sweep")]) == module.tables(
        str(data / "ioi_smollm2_sweep.csv"), str(data / "ioi_smollm2_sweep_mib.csv")).split("\n\n")[0]


def test_the_monli_pages_clique_verdict_is_its_committed_run():
    """The MoNLI page's rerun clique verdict is the run's ``cliques.json`` (committed without its examples' words,
    ``docs/results/data/cliques/demo_seed0.json``): the largest clique, its values, its block-model odds and every
    figure of the verdict's three checks."""
    import json

    run = json.loads((RESULTS / "data" / "cliques" / "demo_seed0.json").read_text(encoding="utf-8"))
    text = " ".join((RESULTS / "monli.md").read_text(encoding="utf-8").split())
    section = text[text.index("**The clique verdict on this recipe, rerun.**") :][:2500]
    top, second = run["cliques"][:2]
    counts = " , ".join(f"{n} {v}" for v, n in top["value_counts"].items()).replace(" , ", ", ")
    assert f"largest lexrel clique of {top['size']} examples ({counts}; best α {run['best_alpha']}; " in section
    assert f"$10^{{{top['log10_expected_count_block_model']:.1f}}}$ expected under the block model" in section
    assert f"one of {second['size']} ({', '.join(f'{n} {v}' for v, n in second['value_counts'].items())})" in section
    assert run["verdict"].startswith("evidence:") and "the verdict **evidence**" in section and run["model_at_chance"] == []
    for figure in re.findall(r"\d+\.\d+ \[\d+\.\d+, \d+\.\d+\]|p = [\d.]+|\d+ \(median; 95th percentile \d+\)", run["verdict"]):
        assert figure in section, figure
    gate = run["copy_gate"]
    assert gate["passes"] and f"{gate['difference'][0]:.3f} [{gate['difference'][1]:.3f}, {gate['difference'][2]:.3f}]" in section


def test_the_monli_pages_rerun_iit_clique_table_is_its_committed_runs():
    """Each cell of the MoNLI page's rerun clique table (plain against IIT at ``blocks.2.hook_resid_post@w_h``) is its
    run's ``cliques.json`` (``docs/results/data/cliques/iit_plain_b2wh.json``, ``iit_b2wh.json``): the largest clique
    and its values, the minimum size, both nulls' median and 95th percentile, the copy gate and the verdict."""
    import json

    import numpy as np

    text = (RESULTS / "monli.md").read_text(encoding="utf-8")
    table = text[text.index("| at `blocks.2.hook_resid_post@w_h`, rerun |") :].split("\n\n")[0]
    cells = {row.split("|")[1].strip(): [c.strip() for c in row.strip().strip("|").split("|")[1:]] for row in table.splitlines()[2:]}
    for column, name in enumerate(("iit_plain_b2wh", "iit_b2wh")):
        run = json.loads((RESULTS / "data" / "cliques" / f"{name}.json").read_text(encoding="utf-8"))
        top, n = run["cliques"][0], run["graph"]["nodes"]
        counts = f"({run['cliques'][0]['value_counts']['⊏']} + {run['cliques'][0]['value_counts']['⊐']})"
        assert cells["largest lexrel clique (⊏ + ⊐)"][column] in (f"{top['size']} {counts}", f"{top['size']} of {n} {counts}")
        assert cells["smallest size beyond chance at the graph's density"][column] == str(run["min_size"])
        for key, null in (("sources shuffled", "shuffle_null"), ("causal model's side permuted", "relation_null")):
            row = next(v for k, v in cells.items() if key in k)
            drawn = run[null]["shuffled"]
            assert row[column] == f"{np.median(drawn):.0f} ({np.percentile(drawn, 95):.0f})" and f"{len(drawn)} " in next(k for k in cells if key in k)
        gate = run["copy_gate"]
        shown = " against ".join(f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]" for v in (gate["iia"], gate["copies_source"]))
        assert cells["IIA over all pairs, against copying the source's label"][column] == shown
        assert cells["verdict"][column] == run["verdict"].split(":")[0] and run["model_at_chance"] == []


def test_the_grid_refuses_runs_on_other_examples_and_a_unit_run_twice(tmp_path):
    """``localize_tables.py --grid`` aggregates only runs scored on the same pairs of the same examples, each unit once."""
    import json
    import shutil

    module = example_script("localization/localize_tables.py")
    data = RESULTS / "data" / "localization"
    shutil.copy(data / "ioi_smollm2_names.csv", tmp_path / "other.csv")
    pairs = json.loads((data / "ioi_smollm2_names_pairs.json").read_text(encoding="utf-8"))
    for held in pairs.values():
        held["examples"] = held["examples"][::-1]  # the same indices into other examples
    (tmp_path / "other_pairs.json").write_text(json.dumps(pairs))
    with pytest.raises(SystemExit, match="other held-out pairs"):
        module.grid([str(data / "ioi_smollm2_sweep"), str(tmp_path / "other")])
    with pytest.raises(SystemExit, match="is in another run too"):
        module.grid([str(data / "ioi_smollm2_sweep"), str(data / "ioi_smollm2_sweep")])


def test_the_decoder_pages_learning_curves_are_their_committed_csv():
    """Each block of the pretrained-decoders page marked ``<!-- curves: NAME -->`` is what
    ``examples/decoders/learning_curves.py`` prints from ``data/curves/NAME.csv`` (gathered from the runs'
    ``curve.csv``), and each of its runs is named in the CSV."""

    module = example_script("decoders/learning_curves.py")
    text = (RESULTS / "pretrained-decoders.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- curves: (\w+) -->\n(.*?)\n<!-- /curves -->", text, re.S)
    assert blocks and len(blocks) == text.count("<!-- curves:")
    for name, shown in blocks:
        rows = module.read(RESULTS / "data" / "curves" / f"{name}.csv")
        assert shown.strip() == module.table(rows).strip(), name
        assert len(module.runs(rows)) >= (3 if name == "smollm2_monli" else 1), name  # SmolLM2: at least three routes' curves


def test_the_decoder_pages_learned_model_tables_are_their_committed_runs():
    """Each block of the pretrained-decoders page marked ``<!-- learned: NAME -->`` is what
    ``examples/decoders/learned_tables.py`` prints from ``data/learned/smollm2/`` (each fine-tuning seed's demo run,
    gathered), over at least two seeds; and the generalization model meets the criterion on every seed."""

    module = example_script("decoders/learned_tables.py")
    data = RESULTS / "data" / "learned" / "smollm2"
    made = module.tables(str(data))
    text = (RESULTS / "pretrained-decoders.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- learned: (\w+) -->\n(.*?)\n<!-- /learned -->", text, re.S)
    assert blocks and len(blocks) == text.count("<!-- learned:")
    for name, shown in blocks:
        assert shown.strip() == made[name].strip(), name
    assert len(module.seeds(str(data))) >= 2
    for folder in module.seeds(str(data)).values():
        test = next(r for r in module.read(folder / "accuracy.csv") if (r["model"], r["split"]) == ("generalization", "nmonli_test"))
        assert float(test["low"]) > 0.85, folder.name
