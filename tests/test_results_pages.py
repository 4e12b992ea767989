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
