"""A generated monotonicity fragment beside the released one: label balance, determiners, sentence length, vocabulary.

Usage::

    >>> rows = [{"premise": "every dog ran", "hypothesis": "every poodle ran", "label": "entailment"}]
    >>> profile(rows)["determiners"]["every"]
    1.0
"""

from __future__ import annotations

import re
from collections import Counter
from statistics import mean

DETERMINER_PATTERNS = {
    "every": r"every", "all": r"all", "each": r"each", "a/an": r"an?", "some": r"some(?! but)", "many": r"many",
    "several": r"several", "few": r"few", "most": r"most", "the": r"the", "some but not all": r"some but not all",
    "no": r"no", "at least n": r"at least \d+", "at most n": r"at most \d+", "exactly n": r"exactly \d+",
}


def _determiners(sentence: str) -> Counter:
    text = f" {sentence} "
    counts = Counter()
    for name, pattern in DETERMINER_PATTERNS.items():
        counts[name] = len(re.findall(rf"(?<= ){pattern}(?= )", text))
    return counts


def profile(rows) -> dict:
    """Statistics of pairs (dicts with premise, hypothesis, label): label shares, determiner use per sentence, lengths, vocabulary."""
    rows = list(rows)
    sentences = [r["premise"] for r in rows] + [r["hypothesis"] for r in rows]
    dets = sum((_determiners(s) for s in sentences), Counter())
    words = Counter(w for s in sentences for w in s.split())
    return {
        "pairs": len(rows),
        "premises": len({r["premise"] for r in rows}),
        "labels": {k: v / len(rows) for k, v in sorted(Counter(r["label"] for r in rows).items())},
        "determiners": {k: dets[k] / len(sentences) for k in DETERMINER_PATTERNS},
        "premise_words": mean(len(r["premise"].split()) for r in rows),
        "hypothesis_words": mean(len(r["hypothesis"].split()) for r in rows),
        "relative_clauses": mean(s.split().count("who") for s in sentences),
        "vocabulary": sorted(words),
    }


def compare(generated, released) -> dict:
    """Both profiles and their vocabulary overlap (Jaccard, and the share of the released vocabulary generated)."""
    a, b = profile(generated), profile(released)
    va, vb = set(a["vocabulary"]), set(b["vocabulary"])
    return {
        "generated": a,
        "released": b,
        "vocabulary": {
            "generated": len(va), "released": len(vb), "shared": len(va & vb), "jaccard": len(va & vb) / len(va | vb),
            "released_covered": len(va & vb) / len(vb), "only_released": sorted(vb - va), "only_generated": sorted(va - vb),
        },
    }


def format_comparison(result: dict, names=("generated", "released")) -> str:
    """A plain-text table of :func:`compare`'s result."""
    a, b = result["generated"], result["released"]
    lines = [f"{'':26}{names[0]:>22}{names[1]:>22}"]
    for key in ("pairs", "premises"):
        lines.append(f"{key:26}{a[key]:>22}{b[key]:>22}")
    for label in sorted(set(a["labels"]) | set(b["labels"])):
        lines.append(f"{'label ' + label:26}{100 * a['labels'].get(label, 0):>21.1f}%{100 * b['labels'].get(label, 0):>21.1f}%")
    for key in ("premise_words", "hypothesis_words", "relative_clauses"):
        lines.append(f"{key.replace('_', ' ') + ' (mean)':26}{a[key]:>22.2f}{b[key]:>22.2f}")
    lines.append("determiners per sentence:")
    for det in DETERMINER_PATTERNS:
        if a["determiners"][det] or b["determiners"][det]:
            lines.append(f"  {det:24}{a['determiners'][det]:>22.3f}{b['determiners'][det]:>22.3f}")
    v = result["vocabulary"]
    lines.append(f"vocabulary: {v['generated']} generated, {v['released']} released, {v['shared']} shared "
                 f"(Jaccard {v['jaccard']:.2f}; {100 * v['released_covered']:.0f}% of the released words)")
    lines.append(f"  only released: {' '.join(v['only_released']) or '-'}")
    lines.append(f"  only generated: {' '.join(v['only_generated']) or '-'}")
    return "\n".join(lines)
