"""Generate the monotonicity fragment (Richardson et al. 2020, Appendix, Algorithm 1): premises, polarities, labelled pairs.

For each random premise of the setting (:func:`~interp.tasks.fragments.monotonicity.grammar.random_sentence`)
three pairs are made, one per label, so labels are balanced 1:1:1:

* **entailment**: a walk of 1 .. ``depth`` entailment steps (Algorithm 1's
  inference search, one random branch);
* **neutral**: a walk of 1 .. ``depth`` reversed steps ("neutrals are
  generated in a reverse manner as the entailments", §3);
* **contradiction**: 0 .. ``depth - 1`` entailment steps, then one
  contradiction rule (:mod:`~interp.tasks.fragments.monotonicity.substitution`).

Premises are assigned to train, dev and test, so no premise is in two
splits. A pair made by one word substitution (no insertion, deletion or
equivalence) is *lexical*: its polarity and direction decide its label,
the fragment's causal model (:mod:`~interp.tasks.fragments.generated`).

Usage::

    >>> records = generate_records(GenerateConfig(setting="simple", n_train=6, n_dev=3, n_test=3, seed=0))
    >>> sorted({r["label"] for r in records}), len(records)
    (['contradiction', 'entailment', 'neutral'], 12)
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from interp.core.checks import check_int
from interp.core.errors import ConfigError, named
from interp.core.outputs import generate_into
from interp.tasks.fragments.monotonicity.grammar import SETTINGS, Sentence, clauses, random_sentence, render, span
from interp.tasks.fragments.monotonicity.polarity import marked
from interp.tasks.fragments.monotonicity.substitution import allowed, contradiction_steps, word_steps
from interp.tasks.fragments.monotonicity.trees import to_json

#: Longest walk of substitutions, by setting.
DEPTH = {"simple": 2, "hard": 3}


#: The most pairs one split may ask for (the released fragments have 3,000 / 1,000 / 1,000), checked before any work.
MAX_PER_SPLIT = 20_000
#: Premises in a row that may be repeats (or give no pair) before a split is declared exhausted.
MAX_REPEATS = 10_000


@dataclass(frozen=True)
class GenerateConfig:
    """What to generate: the setting, the number of pairs per split, the longest walk and the seed.

    Each premise gives one pair of each label, so label counts differ by at most one.
    """

    setting: str = "simple"
    n_train: int = 3000
    n_dev: int = 1000
    n_test: int = 1000
    seed: int = 0
    depth: int | None = None

    def validate(self) -> None:
        """Raises ConfigError naming the bad field."""
        if self.setting not in SETTINGS:
            raise ConfigError(f"{named('setting', repr(self.setting))}: choose from {', '.join(SETTINGS)}")
        for name in ("n_train", "n_dev", "n_test"):
            check_int(getattr(self, name), name, least=0, most=MAX_PER_SPLIT)
        if self.n_train + self.n_dev + self.n_test == 0:
            raise ConfigError("`n_train=`, `n_dev=` and `n_test=` are all 0: nothing to generate")
        if self.depth is not None and self.depth < 1:
            raise ConfigError(f"{named('depth', self.depth)}: at least 1")


def _walk(sentence: Sentence, setting: str, rng: random.Random, length: int, forward: bool):
    steps = []
    for i in range(length):
        options = word_steps(sentence, setting, forward=forward, rng=rng)
        if forward:
            options = [(s, t) for s, t in options if allowed(s, steps)]
        if not options:
            return None
        step, sentence = rng.choice(options)
        steps.append(step)
    return steps, sentence


def _pairs(premise: Sentence, setting: str, depth: int, rng: random.Random):
    """One (label, steps, hypothesis) per label, or ``None`` if the premise cannot give all three."""
    text = render(premise)
    out = []
    for label in ("entailment", "neutral", "contradiction"):
        for _ in range(10):
            if label == "contradiction":
                walk = _walk(premise, setting, rng, rng.randint(0, depth - 1), True)
                options = contradiction_steps(walk[1], setting) if walk else []
                options = [(s, t) for s, t in options if allowed(s, walk[0])]
                if not options:
                    continue
                step, hypothesis = rng.choice(options)
                walk = (walk[0] + [step], hypothesis)
            else:
                walk = _walk(premise, setting, rng, rng.randint(1, depth), label == "entailment")
            if walk and render(walk[1]) != text:
                out.append((label, *walk))
                break
        else:
            return None
    return out


def _record(premise: Sentence, label: str, steps, hypothesis: Sentence, split: str, setting: str, index: int) -> dict:
    record = {
        "id": f"{setting}/{split}:{index}",
        "split": split,
        "setting": setting,
        "premise": render(premise),
        "hypothesis": render(hypothesis),
        "label": label,
        "premise_polarity": marked(premise),
        "depth": len(steps),
        "clauses": clauses(premise),
        "steps": [s.record() for s in steps],
        "premise_tree": to_json(premise),
        "hypothesis_tree": to_json(hypothesis),
    }
    only = steps[0] if len(steps) == 1 else None
    if only is not None and only.kind == "word" and only.direction in ("up", "down") and label != "contradiction":
        record["polarity"], record["direction"] = only.polarity, only.direction
        record["spans"] = {"sub.p": list(span(premise, only.path)), "sub.h": list(span(hypothesis, only.path))}
    return record


def generate_records(config: GenerateConfig) -> list[dict]:
    """The pairs of every split, train first (seeded: the same config gives the same records).

    Raises:
        ConfigError: a bad field of ``config``.
    """
    config.validate()
    rng = random.Random(config.seed)
    depth = config.depth or DEPTH[config.setting]
    seen: set[str] = set()
    records = []
    for split, n in (("train", config.n_train), ("dev", config.n_dev), ("test", config.n_test)):
        made = misses = 0
        while made < n:
            premise = random_sentence(rng, config.setting)
            text = render(premise)
            pairs = None if text in seen else _pairs(premise, config.setting, depth, rng)
            if pairs is None:
                misses += 1
                if misses > MAX_REPEATS:
                    raise ConfigError(f"{named('n_' + split)} {n}: only {made} {split} pairs were made before {MAX_REPEATS} premises "
                                      "in a row were repeats or gave no pair; ask for fewer")
                continue
            misses = 0
            seen.add(text)
            for label, steps, hypothesis in pairs[: n - made]:
                records.append(_record(premise, label, steps, hypothesis, split, config.setting, made + 1))
                made += 1
    return records


def statistics(records: list[dict]) -> dict:
    """Sizes, label shares, depth, polarity and lexical counts of generated records, by split."""
    out = {}
    for split in ("train", "dev", "test"):
        rows = [r for r in records if r["split"] == split]
        if not rows:
            continue
        lexical = [r for r in rows if "polarity" in r]
        out[split] = {
            "pairs": len(rows),
            "premises": len({r["premise"] for r in rows}),
            "labels": dict(Counter(r["label"] for r in rows)),
            "depth": dict(sorted(Counter(r["depth"] for r in rows).items())),
            "lexical": len(lexical),
            "lexical_polarity_direction": dict(Counter(f"{r['polarity']}/{r['direction']}" for r in lexical)),
            "step_kinds": dict(Counter(s["kind"] for r in rows for s in r["steps"])),
        }
    return out


def generate_fragment(config: GenerateConfig, out: str | Path, *, overwrite: bool = False) -> dict:
    """Write the records to ``out`` (JSONL) and their statistics, with the depth, to ``<out stem>.stats.json``; returns the statistics.

    Raises:
        ConfigError: a bad field of ``config``.
        OutputError: as :func:`~interp.core.outputs.generate_into`.
    """
    config.validate()
    depth = config.depth or DEPTH[config.setting]
    return generate_into(out, overwrite, lambda: generate_records(config),
                         lambda records: {"config": asdict(config), "depth": depth, **statistics(records)})  # fmt: skip
