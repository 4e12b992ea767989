"""clique.png: a clique's word pairs grouped by the more general word (Geiger et al. 2020, Figure 5).

Each example contributes its pair of words, the premise's first, as in the
paper, and the value of the variable relating them. The task says, for each
value, which word of the pair is the more general (MoNLI: w_h when w_p ⊏ w_h,
else w_p; :class:`~interp.tasks.base.WordPairs`), and pairs are grouped under
it: the paper's caption says "hyponyms", but its Table 2 shows the grouping
is by the general word. Each value is drawn in its own colour, so a reader
sees both relations present.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Mapping, Sequence

from interp.core.outputs import save_figure_atomic

COLOURS = ("#1b6ca8", "#c0392b", "#2e8b57", "#8e44ad")  # one per value, in the order ``general`` names them


def group_by_general_word(pairs: Sequence[tuple[str, str, str]], general: Mapping[str, int]) -> dict[str, list[tuple[str, str, str]]]:
    """``(premise word, hypothesis word, value)`` pairs grouped by their general word, largest group first (then alphabetical).

    ``general``: value -> 0 where the premise's word is the more general, 1
    where the hypothesis' is (a value not named: the premise's).
    """
    groups: dict[str, list] = defaultdict(list)
    for pair in pairs:
        groups[pair[general.get(pair[2], 0)]].append(tuple(pair))
    return dict(sorted(groups.items(), key=lambda item: (-len(item[1]), item[0])))


def plot_clique(pairs: Sequence[tuple[str, str, str]], title: str, path: Path, general: Mapping[str, int] | None = None) -> Path:
    """Draw the pairs, grouped as :func:`group_by_general_word`, to ``path`` (written beside it, then moved into place).

    ``general`` ``None``: no grouping (each entry its own line, in one colour).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    general = general or {}
    colour_of = {value: COLOURS[i % len(COLOURS)] for i, value in enumerate(general)}
    groups = group_by_general_word(pairs, general)
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
        for k, (premise, hypothesis, value) in enumerate(members, start=1):
            colour = colour_of.get(value, COLOURS[0])
            ax.text(col + 0.15, top + k, f"{premise} {value} {hypothesis}", fontsize=9, color=colour, va="top")
    ax.text(0, -1.2, title, fontsize=11, va="top")
    for i, (value, colour) in enumerate(colour_of.items()):
        side = "the hypothesis' word" if general[value] else "the premise's word"
        ax.text(columns, -1.2 + 0.6 * i, f"{value}: {side} is the more general", color=colour, fontsize=9, ha="right", va="top")
    return save_figure_atomic(fig, path, dpi=150, bbox_inches="tight")
