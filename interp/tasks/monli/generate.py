"""MoNLI-style pairs from WordNet (Geiger, Richardson & Potts 2020, §3), and WordNet's agreement with MoNLI's lexrel.

MoNLI was made by substituting WordNet hypernyms and hyponyms for a noun
of an SNLI sentence. This does the same on a corpus of sentences with a
marked noun: by default MoNLI's own premises and their marked words
(PMoNLI's as positive sentences, NMoNLI's as negated ones). For each
sentence, up to ``per_sentence`` hypernyms and as many hyponyms of the
noun's first WordNet sense within ``max_depth`` steps replace it
(:func:`~interp.tasks.monli.wordnet.neighbours`: single, lower-case,
non-rare lemmas); each substitution gives both directions, as MoNLI does.
``depth`` is signed like MoNLI's (positive: the hypothesis word is the more
general, lexrel ⊏); the label is INFER's: entailment when lexrel is ⊏ in a
positive sentence or ⊐ in a negated one. Lines carry ``negated``, so
``--task monli --data-file FILE`` reads them (no checksum: they are yours).

Usage::

    stats = generate_monli(MonliGenerateConfig(corpus=("nmonli_test",), new_words_only=True), "runs/wn/new.jsonl")
    stats["wordnet_agreement"]["agreement_of_both"]   # WordNet's relation against MoNLI's lexrel
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

from interp.core.errors import ConfigError, named
from interp.core.outputs import new_output, write_generated
from interp.hooks.encoding import word_spans
from interp.tasks.monli.wordnet import neighbours, noun_relation


@dataclass(frozen=True)
class MonliGenerateConfig:
    """How many substitutes per sentence and direction, how far in WordNet, how rare a lemma may be, new words only, seed;
    and where the corpus (MoNLI splits in ``data_dir``) and WordNet (``wordnet_dir``) lie, for :func:`generate_monli`."""

    per_sentence: int = 2
    max_depth: int = 2
    min_count: int = 1
    new_words_only: bool = False
    seed: int = 0
    corpus: tuple[str, ...] = ("pmonli", "nmonli_train")
    data_dir: str | None = None
    verify_checksums: bool = True
    wordnet_dir: str | None = None

    def validate(self) -> None:
        """Raises ConfigError naming the bad field."""
        from interp.tasks.monli.data import SPLITS

        unknown = [c for c in self.corpus if c not in SPLITS]
        if unknown or not self.corpus:
            raise ConfigError(f"{named('corpus', ','.join(self.corpus))}: name MoNLI splits ({', '.join(SPLITS)})")
        if self.per_sentence < 1:
            raise ConfigError(f"{named('per_sentence', self.per_sentence)}: at least 1")
        if self.max_depth < 1:
            raise ConfigError(f"{named('max_depth', self.max_depth)}: at least 1")
        if self.min_count < 0:
            raise ConfigError(f"{named('min_count', self.min_count)}: at least 0")


def corpus_from_monli(examples) -> list[tuple[str, str, bool, str]]:
    """(sentence, marked noun, negated, source id) for each distinct premise of MoNLI examples."""
    seen, out = set(), []
    for e in examples:
        key = (e.premise, e.w_p)
        if key not in seen:
            seen.add(key)
            out.append((e.premise, e.w_p, e.negated, e.id))
    return out


def substitute(sentence: str, word: str, new: str) -> str | None:
    """``sentence`` with its one whole-word ``word`` replaced by ``new`` (a/an fixed, capital kept); ``None`` if ``word`` is not there once or ``new`` already is."""
    spans = word_spans(word, sentence)
    if len(spans) != 1 or word_spans(new, sentence):
        return None
    start, end = spans[0]
    replacement = new.capitalize() if sentence[start].isupper() else new
    before = sentence[:start]
    article = before.rstrip().rsplit(" ", 1)[-1] if before.strip() else ""
    if article.lower() in ("a", "an") and before.endswith(" "):
        wanted = "an" if new[0] in "aeiou" else "a"
        wanted = wanted.capitalize() if article[0].isupper() else wanted
        before = before[: len(before.rstrip()) - len(article)] + wanted + " "
    return before + replacement + sentence[end:]


def _label(depth: int, negated: bool) -> str:
    return "entailment" if (depth > 0) != negated else "neutral"


def generate_monli_records(config: MonliGenerateConfig, corpus: Sequence[tuple[str, str, bool, str]], wn, known_words=frozenset()) -> tuple[list[dict], dict]:
    """MoNLI-format records and their statistics (seeded; the same inputs give the same records).

    Raises:
        ConfigError: a bad field of ``config``, or nothing could be generated.
    """
    config.validate()
    rng = random.Random(config.seed)
    records, used = [], set()
    for sentence, word, negated, source in corpus:
        near = neighbours(wn, word, config.max_depth, config.min_count)
        if config.new_words_only:
            near = {w: d for w, d in near.items() if w not in known_words}
        for sign in (1, -1):
            options = sorted(w for w, d in near.items() if d * sign > 0)
            for new in rng.sample(options, min(config.per_sentence, len(options))):
                other = substitute(sentence, word, new)
                if other is None:
                    continue
                depth = near[new]
                used.add(new)
                for s1, w1, s2, w2, d in ((sentence, word, other, new, depth), (other, new, sentence, word, -depth)):
                    records.append({
                        "sentence1": s1, "sentence2": s2, "gold_label": _label(d, negated), "depth": d,
                        "sentence1_lex": w1, "sentence2_lex": w2, "negated": negated, "source": source,
                        "new_word": new not in known_words,
                    })
    if not records:
        raise ConfigError("no pair could be generated: the corpus's marked nouns have no WordNet neighbours under these filters")
    stats = {
        "config": asdict(config),
        "sentences": len(corpus),
        "pairs": len(records),
        "negated": sum(r["negated"] for r in records),
        "labels": dict(Counter(r["gold_label"] for r in records)),
        "depths": dict(sorted(Counter(r["depth"] for r in records).items())),
        "substitutes": len(used),
        "new_words": len(used - set(known_words)),
    }
    return records, stats


def wordnet_agreement(examples, wn) -> dict:
    """WordNet's relation (over all noun senses, :func:`~interp.tasks.monli.wordnet.noun_relation`) against MoNLI's lexrel, per distinct (w_p, w_h).

    Returns:
        counts of pairs, those with both words WordNet nouns, those WordNet relates,
        the agreement rate among the latter and among all with both words, the share
        whose distance equals MoNLI's ``|depth|``, and the disagreeing pairs.
    """
    pairs = {}
    for e in examples:
        pairs.setdefault((e.w_p, e.w_h), e)
    both = related = agree = same_depth = 0
    disagree = []
    for (w_p, w_h), e in sorted(pairs.items()):
        if not (wn.synsets(w_p, "n") and wn.synsets(w_h, "n")):
            continue
        both += 1
        found = noun_relation(wn, w_p, w_h)
        if found is None:
            disagree.append({"w_p": w_p, "w_h": w_h, "monli": e.lexrel.symbol, "wordnet": "none", "example": e.id})
            continue
        related += 1
        symbol = "⊏" if found[0] == "forward" else "⊐"
        if symbol == e.lexrel.symbol:
            agree += 1
            same_depth += found[1] == abs(e.depth)
        else:
            disagree.append({"w_p": w_p, "w_h": w_h, "monli": e.lexrel.symbol, "wordnet": symbol, "example": e.id})
    rng = random.Random(0)  # the null: the same words paired at random, how often WordNet relates them at all
    shuffled = [w for _, w in pairs]
    rng.shuffle(shuffled)
    null = [(w_p, w) for (w_p, _), w in zip(pairs, shuffled) if w_p != w and wn.synsets(w_p, "n") and wn.synsets(w, "n")]
    null_related = sum(noun_relation(wn, a, b) is not None for a, b in null) / len(null) if null else 0.0
    return {
        "null_related_at_random": null_related,
        "pairs": len(pairs), "both_in_wordnet": both, "related_by_wordnet": related, "agree": agree,
        "agreement_when_related": agree / related if related else 0.0, "agreement_of_both": agree / both if both else 0.0,
        "same_distance_when_agreeing": same_depth / agree if agree else 0.0, "disagreements": disagree,
    }


def generate_monli(config: MonliGenerateConfig, out: str | Path, *, overwrite: bool = False) -> dict:
    """Generate from the configured corpus and WordNet into ``out`` (JSONL); write the statistics, with WordNet's agreement with MoNLI, to ``<out stem>.stats.json``.

    Returns:
        The statistics, ``wordnet_agreement`` included.

    Raises:
        ConfigError: as :func:`generate_monli_records`, or an unknown corpus split.
        DataError: MoNLI or WordNet missing.
        OutputError: ``out`` exists and ``overwrite`` is false, or cannot be written.
    """
    from interp.tasks.monli.data import SPLITS, load_monli
    from interp.tasks.monli.wordnet import open_wordnet

    config.validate()
    out = new_output(out, overwrite)
    wn = open_wordnet(config.wordnet_dir)
    monli = load_monli(config.data_dir, tuple(SPLITS), verify_checksums=config.verify_checksums)
    corpus = corpus_from_monli([e for e in monli if e.split in config.corpus])
    known = frozenset(w for e in monli for w in (e.w_p, e.w_h))
    records, stats = generate_monli_records(config, corpus, wn, known)
    stats["wordnet_agreement"] = wordnet_agreement(monli, wn)
    write_generated(out, records, stats)
    return stats
