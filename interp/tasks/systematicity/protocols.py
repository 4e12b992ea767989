"""The four train/test protocols of Yanaka et al. (2020, §2.2) as named splits of one generated file.

* ``predicate`` (systematicity of predicate replacements, depth 1): train on
  D1^{{q},R} ∪ D1^{Q,{r}} plus, at step i, the first i-1 (upward, downward)
  quantifier pairs of a seeded permutation with every replacement; test on
  the remaining quantifiers with the replacements other than r (``test``),
  and the same with a fronted adverb (``test_adverb``), a fronted PP
  (``test_preposition``) and the replacement in the object (``test_object``).
  Steps 1 to 3.
* ``quantifier`` (systematicity of embedding quantifiers, depth 2): train on
  D1^{Q,R} plus D2 of the first i quantifier pairs; test on D2 whose two
  quantifiers are both unseen there. Steps 1 to 3.
* ``productivity``: train on depths 1 .. i+1, test on each depth i+2 .. 5
  (``test_d3`` ...). Steps 1 to 3.
* ``localism``: train on depth d, test on each depth 1 .. d. Steps (d) 3 to 5.

Usage::

    records = protocol_records(ProtocolConfig(protocol="productivity", step=1, n_train=600, n_test=200))
    {r["split"] for r in records}     # {'train', 'test_d3', 'test_d4', 'test_d5'}
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from statistics import mean

from interp.core.errors import ConfigError, named
from interp.tasks.systematicity import grammar as G
from interp.tasks.systematicity.generate import sample_pairs

PROTOCOLS: tuple[str, ...] = ("predicate", "quantifier", "productivity", "localism")
MAX_DEPTH = 5
#: Average sentence length by depth in the paper's data (Table 1).
PAPER_LENGTH = {1: 4.6, 2: 9.0, 3: 12.3, 4: 16.6}


@dataclass(frozen=True)
class ProtocolConfig:
    """A protocol and its step, the pairs per training component and per test set, the fixed q and r of ``predicate``, the seed."""

    protocol: str = "productivity"
    step: int = 1
    n_train: int = 6000
    n_test: int = 1000
    quantifier: str = "some"
    replacement: str = "hyponym"
    seed: int = 0


def _pairs_of(quantifiers: list[str]) -> list[tuple[str, str]]:
    return [(u, d) for u in G.UP_QUANTIFIERS if u in quantifiers for d in G.DOWN_QUANTIFIERS if d in quantifiers]


def _components(c: ProtocolConfig, rng: random.Random) -> tuple[list, dict]:
    """(training components, test sets): each a (depth, quantifiers, replacements, variant)."""
    every, all_r = list(G.QUANTIFIERS), list(G.REPLACEMENTS)
    if c.protocol == "predicate":
        if c.quantifier not in G.QUANTIFIERS or c.replacement not in G.REPLACEMENTS:
            raise ConfigError(f"{named('quantifier', repr(c.quantifier))} / {named('replacement', repr(c.replacement))}: choose from {', '.join(G.QUANTIFIERS)} / {', '.join(G.REPLACEMENTS)}")
        if not 1 <= c.step <= 3:
            raise ConfigError(f"{named('step', c.step)}: the predicate protocol has steps 1 to 3 (n - 1 with n = 4 quantifiers a side)")
        order = _pairs_of([q for q in every if q != c.quantifier])
        rng.shuffle(order)
        added = order[: c.step - 1]
        train = [(1, [c.quantifier], all_r, "subject"), (1, every, [c.replacement], "subject")] + [(1, list(p), all_r, "subject") for p in added]
        unseen = [q for q in every if q != c.quantifier and all(q not in p for p in added)]
        rest = [r for r in all_r if r != c.replacement]
        nouns = [r for r in rest if G.REPLACEMENTS[r] == "noun"]
        tests = {"test": (1, unseen, rest, "subject"), "test_adverb": (1, unseen, rest, "adverb"),
                 "test_preposition": (1, unseen, rest, "preposition"), "test_object": (1, unseen, nouns, "object")}
        return train, tests
    if c.protocol == "quantifier":
        if not 1 <= c.step <= 3:
            raise ConfigError(f"{named('step', c.step)}: the quantifier protocol has steps 1 to 3")
        order = _pairs_of(every)
        rng.shuffle(order)
        added = order[: c.step]
        seen = {q for p in added for q in p}
        unseen = [q for q in every if q not in seen]
        train = [(1, every, all_r, "subject")] + [(2, list(p), all_r, "subject") for p in added]
        return train, {"test": (2, unseen, all_r, "subject")}
    if c.protocol == "productivity":
        if not 1 <= c.step <= MAX_DEPTH - 2:
            raise ConfigError(f"{named('step', c.step)}: productivity trains on depths 1 .. step+1 and tests deeper, so steps 1 to {MAX_DEPTH - 2} (else the test set is empty)")
        train = [(d, every, all_r, "subject") for d in range(1, c.step + 2)]
        return train, {f"test_d{d}": (d, every, all_r, "subject") for d in range(c.step + 2, MAX_DEPTH + 1)}
    if c.protocol == "localism":
        if not 3 <= c.step <= MAX_DEPTH:
            raise ConfigError(f"{named('step', c.step)}: localism trains on one depth d of 3 to {MAX_DEPTH} and tests on 1 .. d")
        return [(c.step, every, all_r, "subject")], {f"test_d{d}": (d, every, all_r, "subject") for d in range(1, c.step + 1)}
    raise ConfigError(f"{named('protocol', repr(c.protocol))}: choose from {', '.join(PROTOCOLS)}")


def protocol_records(config: ProtocolConfig) -> list[dict]:
    """Every pair of the protocol's training set (``split`` train) and test sets (their names), seeded.

    Raises:
        ConfigError: an unknown protocol, quantifier or replacement; a step whose test set would be empty; sizes below 1.
    """
    if config.n_train < 1 or config.n_test < 1:
        raise ConfigError(f"{named('n_train', config.n_train)}, {named('n_test', config.n_test)}: each at least 1")
    rng = random.Random(config.seed)
    train, tests = _components(config, rng)
    records, seen = [], set()
    per = -(-config.n_train // len(train))
    for split, parts, n in [("train", train, per), *((name, [spec], config.n_test) for name, spec in tests.items())]:
        for depth, quantifiers, replacements, variant in parts:
            if not quantifiers:
                raise ConfigError(f"{config.protocol} step {config.step}: the {split} set has no quantifier left")
            for pair in sample_pairs(rng, depth, quantifiers, replacements, n, variant):
                key = (pair["premise"], pair["hypothesis"])
                if split != "train" and key in seen:
                    continue  # never test on a training pair
                seen.add(key)
                records.append({"id": f"{config.protocol}{config.step}/{split}:{len(records) + 1}", "split": split, **pair})
    return records


def statistics(records: list[dict], config: ProtocolConfig) -> dict:
    """Pairs, labels, polarities and mean sentence length per split and per depth, beside the paper's Table 1 lengths."""
    by_split = {}
    for split in dict.fromkeys(r["split"] for r in records):
        rows = [r for r in records if r["split"] == split]
        by_split[split] = {"pairs": len(rows), "labels": dict(Counter(r["label"] for r in rows)),
                           "polarity": dict(Counter(r["polarity"] for r in rows)), "depths": dict(Counter(r["depth"] for r in rows)),
                           "replacements": dict(Counter(r["replacement"] for r in rows)), "quantifiers": sorted({q for r in rows for q in r["quantifiers"]})}
    lengths = {}
    for d in sorted({r["depth"] for r in records if r["position"] in ("noun", "verb")}):
        rows = [r for r in records if r["depth"] == d and r["position"] in ("noun", "verb")]
        lengths[d] = {"mean_words": mean(len(s.split()) for r in rows for s in (r["premise"], r["hypothesis"])), "paper": PAPER_LENGTH.get(d)}
    return {"config": asdict(config), "splits": by_split, "length_by_depth": lengths}


def write_protocol(config: ProtocolConfig, out, *, overwrite: bool = False) -> dict:
    """Write the protocol's records to ``out`` (JSONL) and their statistics to ``<out stem>.stats.json``; returns the statistics.

    Raises:
        ConfigError: as :func:`protocol_records`.
        OutputError: as :func:`~interp.core.outputs.generate_into`.
    """
    from interp.core.outputs import generate_into

    return generate_into(out, overwrite, lambda: protocol_records(config), lambda records: statistics(records, config))
