"""clique.png: a clique's word pairs grouped by the more general word (the paper's Figure 5).

Each example contributes its pair "w_p → w_h" (the premise word first, as in
the paper). Pairs are grouped under the more general word of the pair (w_h
when w_p ⊏ w_h, else w_p): the paper's caption says "hyponyms", but its
Table 2 shows the grouping is by the general word. Pairs with ⊏ are drawn
in one colour, ⊐ in another, so a reader sees both relations present.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Sequence

from interp.core.outputs import save_figure_atomic

FORWARD_COLOUR, REVERSE_COLOUR = "#1b6ca8", "#c0392b"


def group_by_general_word(pairs: Sequence[tuple[str, str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """``(w_p, w_h, lexrel symbol)`` pairs grouped by their general word, largest group first (then alphabetical)."""
    groups: dict[str, list] = defaultdict(list)
    for w_p, w_h, symbol in pairs:
        groups[w_h if symbol == "⊏" else w_p].append((w_p, w_h, symbol))
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def plot_clique(pairs: Sequence[tuple[str, str, str]], title: str, path: Path) -> Path:
    """Draw the grouped pairs to ``path`` (written beside it, then moved into place)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_by_general_word(pairs)
    columns = max(1, min(5, len(groups)))
    rows_per_group = [len(v) + 2 for v in groups.values()]
    column_height: list[int] = [0] * columns
    placement = []
    for (word, members), height in zip(groups.items(), rows_per_group):
        col = column_height.index(min(column_height))
        placement.append((word, members, col, column_height[col]))
        column_height[col] += height
    total = max(column_height) if column_height else 1
    fig, ax = plt.subplots(figsize=(3.0 * columns, max(2.5, 0.24 * total + 1.2)))
    ax.set_xlim(0, columns)
    ax.set_ylim(total, -1.5)
    ax.axis("off")
    for word, members, col, top in placement:
        ax.text(col + 0.05, top, f"{word}  ({len(members)})", fontsize=10, fontweight="bold", va="top")
        for k, (w_p, w_h, symbol) in enumerate(members, start=1):
            colour = FORWARD_COLOUR if symbol == "⊏" else REVERSE_COLOUR
            ax.text(col + 0.15, top + k, f"{w_p} {symbol} {w_h}", fontsize=9, color=colour, va="top")
    ax.text(0, -1.2, title, fontsize=11, va="top")
    ax.text(columns, -1.2, "⊏ forward", color=FORWARD_COLOUR, fontsize=9, ha="right", va="top")
    ax.text(columns, -0.6, "⊐ reverse", color=REVERSE_COLOUR, fontsize=9, ha="right", va="top")
    return save_figure_atomic(fig, path, dpi=150, bbox_inches="tight")
