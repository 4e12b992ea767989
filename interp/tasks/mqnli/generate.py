"""MQNLI: multiply-quantified NLI pairs generated from the natural-logic tree (Geiger et al. 2018; 2019).

Every sentence has the form ``Q_S Adj_S N_S Neg Adv V Q_O Adj_O N_O``;
premise and hypothesis share the frame and differ word by word. Labels come
from the composition tree of :mod:`interp.tasks.mqnli.causal_model` (no theorem
prover). Generation (:func:`generate_mqnli`):

1. **Split** the 524,288 inputs of the tree above the words (quantifier and
   negation pairs, lexical relations): ``fair`` takes the training inputs
   from Algorithm 3 at ``ratio`` (2019, Appendix C) and tests on the rest
   (S̃_train); ``random`` draws a training pool of the same size at random
   and tests on the rest (a control: same size, not fair); ``iid`` draws
   train and test from the whole space, disjoint only as sentence pairs
   (the 2018 paper's setting).
2. **Cover**: the training file first gets, for a fair split, one example
   for each local input of every node that the training inputs realize, so
   the *file*, not only the pool, is fair (Definition 2; checked).
3. **Balance** as the papers do: (i) each adjective-noun and adverb-verb
   phrase pair is ≡, ⊏, ⊐ or # with equal chance; (ii) sampling is then
   restricted so that the three labels are equally frequent.
4. **Realize** each input with words: ≡ heads are one word twice, # heads
   two different words, modifier ⊏ is (word, ε), and so on.

The vocabulary is artificial, as in the papers (100 words per open class by
default, ε a token of its own); quantifiers and negation are written as
English words (``not every``, ``does not``), since a WordPiece tokenizer
splits the papers' fused tokens anyway.

Usage::

    stats = generate_mqnli(MQNLIConfig(n_train=5000, n_test=1000), "runs/mqnli.jsonl")
    train = interp.tasks.mqnli.files.read_mqnli("runs/mqnli.jsonl", splits=("train",))
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from interp.causal.base import run_forward
from interp.core.checks import check_int
from interp.core.errors import ConfigError, OutputError, named
from interp.core.outputs import (
    ensure_writable_dir,
    write_json_atomic,
    write_jsonl_atomic,
)
from interp.natural_logic.composition import evaluate_space, realize, unexposed
from interp.natural_logic.fair_generation import fair_training_set
from interp.natural_logic.relations import LABEL_OF, Relation
from interp.tasks.mqnli.causal_model import (
    EMPTY,
    HEADS,
    MODIFIERS,
    NEGATION_WORD,
    NODES,
    PHRASES,
    POSITIONS,
    abstract_tree,
    inputs_of,
    mqnli_causal_model,
)
from interp.tasks.mqnli.files import MQNLI_LABELS, MQNLI_SPLITS

SPLIT_KINDS = ("fair", "random", "iid")
_SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
MAX_VOCAB = len(_SYLLABLES) ** 2 // 6


#: The most examples one split may ask for (Geiger et al. 2019 trained on 500,000), checked before any work.
MAX_PER_SPLIT = 1_000_000


@dataclass(frozen=True)
class MQNLIConfig:
    """Settings of one generated MQNLI file.

    ``split`` is ``fair``, ``random`` or ``iid`` (see the module doc).
    ``ratio`` is Algorithm 3's: 0 gives the minimal fair training pool (the
    hardest task), 1 the whole space. ``vocab_size`` words per open class.
    ``n_dev``: a development split drawn like the test split, from the same
    pool, as the 2019 paper's (§4.4: dev and test "each contain 10,000
    distinct examples randomly sampled from S̃_train"); no pair is in both.
    """

    n_train: int = 5000
    n_test: int = 1000
    n_dev: int = 0
    split: str = "fair"
    ratio: float = 0.0
    vocab_size: int = 100
    seed: int = 0

    def validate(self) -> "MQNLIConfig":
        """Raise :class:`ConfigError` naming the first invalid setting (sizes at most :data:`MAX_PER_SPLIT`, checked before any work)."""
        check_int(self.n_train, "n_train", least=1, most=MAX_PER_SPLIT)
        check_int(self.n_test, "n_test", least=0, most=MAX_PER_SPLIT)
        check_int(self.n_dev, "n_dev", least=0, most=MAX_PER_SPLIT)
        checks = [
            (self.split in SPLIT_KINDS, f"`split=` must be one of {', '.join(SPLIT_KINDS)}, got {self.split!r}"),
            (0.0 <= self.ratio <= 1.0, f"`ratio=` must be between 0 and 1, got {self.ratio}"),
            (2 <= self.vocab_size <= MAX_VOCAB, f"`vocab_size=` must be between 2 and {MAX_VOCAB}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ConfigError(message)
        return self


def vocabulary(size: int) -> dict[str, tuple[str, ...]]:
    """``size`` artificial two-syllable words for each open class, disjoint across classes (fixed)."""
    words = [a + b for a in _SYLLABLES for b in _SYLLABLES]
    random.Random(2019).shuffle(words)
    classes = (*MODIFIERS, *HEADS)
    return {c: tuple(words[i * size : (i + 1) * size]) for i, c in enumerate(classes)}


def sentence(words: dict[str, str]) -> str:
    """The surface string of one side, ε written as its own token."""
    return " ".join(words[k] for k in POSITIONS)


class _Space:
    """The abstract input space (in :meth:`CompositionTree.inputs` order) with phrase relations and labels.

    ``values[i]`` is (subj_np, vp, obj_np, label) of input i.
    """

    def __init__(self) -> None:
        self.tree = abstract_tree()
        self.leaves = self.tree.tree.leaves
        self.inputs = list(self.tree.inputs())
        self.domains, self.codes = evaluate_space(self.tree)
        labels = np.array([LABEL_OF[r] for r in self.domains["root"]], dtype=object)[self.codes["root"]]
        phrases = [np.array(self.domains[p], dtype=object)[self.codes[p]] for p in PHRASES]
        self.values = list(zip(*phrases, labels))


def _leaf_probabilities(leaf: str, domain: tuple, size: int) -> np.ndarray:
    """Probability of each abstract value of a leaf when words are drawn uniformly (before balancing)."""
    if leaf in ("q_s", "q_o", "neg"):
        return np.full(len(domain), 1 / len(domain))
    if leaf in HEADS:
        return np.array([1 / size if v is Relation.EQUIVALENCE else (size - 1) / size for v in domain])
    n = (size + 1) ** 2
    mass = {
        Relation.EQUIVALENCE: (size + 1) / n,
        Relation.FORWARD: size / n,
        Relation.REVERSE: size / n,
        Relation.INDEPENDENCE: size * (size - 1) / n,
    }
    return np.array([mass[v] for v in domain])


def label_shares(space: _Space, size: int, phrase_balanced: bool) -> dict[str, float]:
    """Exact label distribution over the fragment's pairs, drawn uniformly or after balancing step (i).

    Uniform: every aligned word pair equally likely (so nearly every phrase
    pair is #). Step (i): each phrase pair's relation uniform over ≡ ⊏ ⊐ #,
    the words within a relation as before.
    """
    p = np.ones(len(space.inputs))
    for leaf in space.leaves:
        p *= _leaf_probabilities(leaf, space.domains[leaf], size)[space.codes[leaf]]
    if phrase_balanced:
        for name in PHRASES:
            code = space.codes[name]
            mass = np.bincount(code, weights=p, minlength=len(space.domains[name]))
            share = np.bincount(code, minlength=len(space.domains[name])) > 0
            p = p / mass[code] / share.sum()
    p = p / p.sum()
    root = space.codes["root"]
    shares = Counter()
    for k, relation in enumerate(space.domains["root"]):
        shares[LABEL_OF[relation]] += math.fsum(p[root == k])
    return {label: shares[label] for label in MQNLI_LABELS}


def _cover(space: _Space, pool: list[int], rng: random.Random) -> list[int]:
    """Inputs of ``pool`` that together realize every local input the pool realizes (greedy)."""
    tree = space.tree
    nodes = tree.tree.non_leaves()
    seen: set[tuple] = set()
    chosen = []
    order = list(pool)
    rng.shuffle(order)
    for i in order:
        values = realize(tree, space.inputs[i])
        keys = {(n, tuple(values[k] for k in tree.tree.children[n])) for n in nodes}
        if not keys <= seen:
            seen |= keys
            chosen.append(i)
    return chosen


def _balanced(space: _Space, pool: list[int], quotas: dict[str, int], rng: random.Random) -> list[int]:
    """Draw pool inputs: phrase relations uniform (step i), then kept to fill each label's quota (step ii)."""
    groups: dict[tuple, list[int]] = {}
    for i in pool:
        groups.setdefault(space.values[i][:3], []).append(i)
    keys = list(groups)
    relations_of = [sorted({k[j] for k in keys}, key=list(Relation).index) for j in range(3)]
    want = dict(quotas)
    out: list[int] = []
    labels_in_pool = {space.values[i][-1] for i in pool}
    for label, n in want.items():
        if n > 0 and label not in labels_in_pool:
            raise ConfigError(f"the training pool has no {label} input; raise `ratio=` or use `split=random`")
    draws, limit = 0, 1000 * (sum(want.values()) + 1)
    while any(n > 0 for n in want.values()):
        draws += 1
        if draws > limit:
            raise ConfigError("MQNLI: cannot balance the labels from this pool; raise `ratio=`")
        key = tuple(rng.choice(r) for r in relations_of)
        if key not in groups:
            continue
        i = rng.choice(groups[key])
        label = space.values[i][-1]
        if want[label] > 0:
            want[label] -= 1
            out.append(i)
    return out


def _realize_words(space: _Space, x: tuple, vocab: dict, rng: random.Random) -> tuple[dict, dict]:
    """Words for both sides realizing abstract input ``x``."""
    value = dict(zip(space.leaves, x))
    p: dict[str, str] = {}
    h: dict[str, str] = {}
    for q in ("q_s", "q_o"):
        p[q], h[q] = value[q].split("/")
    p["neg"], h["neg"] = (NEGATION_WORD if s == "not" else EMPTY for s in value["neg"].split("/"))
    size = len(vocab["n_s"])
    for head in HEADS:
        a, b = rng.sample(vocab[head], 2)
        p[head], h[head] = (a, a) if value[head] is Relation.EQUIVALENCE else (a, b)
    for mod in MODIFIERS:
        a, b = rng.sample(vocab[mod], 2)
        rel = value[mod]
        if rel is Relation.EQUIVALENCE:
            p[mod] = h[mod] = EMPTY if rng.random() < 1 / (size + 1) else a
        elif rel is Relation.FORWARD:
            p[mod], h[mod] = a, EMPTY
        elif rel is Relation.REVERSE:
            p[mod], h[mod] = EMPTY, a
        else:
            p[mod], h[mod] = a, b
    return p, h


def _record(model, example_id: str, split: str, p: dict, h: dict) -> dict:
    values = run_forward(model, inputs_of(p, h))
    nodes = {n: getattr(values[n], "symbol", values[n]) for n in NODES}
    return {
        "id": example_id,
        "split": split,
        "premise": sentence(p),
        "hypothesis": sentence(h),
        "label": values["label"],
        **nodes,
        "premise_words": p,
        "hypothesis_words": h,
    }


def generate_mqnli(config: MQNLIConfig, out: str | Path, *, overwrite: bool = False) -> dict:
    """Generate train, test (and dev) pairs into one JSONL file (``split`` field) and ``<out>.stats.json``.

    Returns:
        The statistics written beside the file (sizes, label shares before
        and after balancing, vocabulary, fairness of the training file).

    Raises:
        ConfigError: an invalid setting, or a pool that cannot be balanced.
        OutputError: ``out`` exists and ``overwrite`` is false, or cannot be written.
    """
    config.validate()
    out = Path(out)
    stats_path = out.with_name(out.stem + ".stats.json")
    if out.exists() and not overwrite:
        raise OutputError(f"{named('out', out)} already exists; choose another path or pass `overwrite=True`")
    ensure_writable_dir(out.parent)
    rng = random.Random(config.seed)
    space = _Space()
    tree = space.tree
    fair = fair_training_set(tree, config.ratio, config.seed)
    position = {x: i for i, x in enumerate(space.inputs)}
    if config.split == "fair":
        train_pool = [position[x] for x in fair]
    elif config.split == "random":
        train_pool = sorted(rng.sample(range(len(space.inputs)), len(fair)))
    else:
        train_pool = list(range(len(space.inputs)))
    in_train = set(train_pool)
    test_pool = train_pool if config.split == "iid" else [i for i in range(len(space.inputs)) if i not in in_train]
    cover = _cover(space, train_pool, rng) if config.split == "fair" else []
    if len(cover) > config.n_train:
        raise ConfigError(f"{named('n_train', config.n_train)} is below the {len(cover)} examples a fair training file needs")
    have = Counter(space.values[i][-1] for i in cover)
    quotas = _quotas(config.n_train, have)
    train_ids = cover + _balanced(space, train_pool, quotas, rng)
    test_ids = _balanced(space, test_pool, _quotas(config.n_test, Counter()), rng) if config.n_test else []
    vocab = vocabulary(config.vocab_size)
    model = mqnli_causal_model()
    records, seen = [], set()
    # dev is drawn last, after the train and test words, so that adding it leaves those records as they were.
    dev = lambda: _balanced(space, test_pool, _quotas(config.n_dev, Counter()), rng) if config.n_dev else []  # noqa: E731
    for split, ids in (("train", lambda: train_ids), ("test", lambda: test_ids), ("dev", dev)):
        for i in ids():
            for _ in range(100):
                p, h = _realize_words(space, space.inputs[i], vocab, rng)
                key = (sentence(p), sentence(h))
                if key not in seen:
                    break
            seen.add(key)
            records.append(_record(model, f"mqnli:{len(records) + 1}", split, p, h))
    written = [s for s in MQNLI_SPLITS if s != "dev" or config.n_dev]  # a file without dev reads as before
    train_abstract = [space.inputs[i] for i in train_ids]
    gaps = unexposed(tree, train_abstract)
    stats = {
        "config": asdict(config),
        "abstract_inputs": len(space.inputs),
        "fragment_pairs": _fragment_size(config.vocab_size),
        "train_pool": len(train_pool),
        "test_pool": len(test_pool),
        "fair_pool_size": len(fair),
        "cover_examples": len(cover),
        "n": {s: sum(r["split"] == s for r in records) for s in written},
        "labels": {s: dict(Counter(r["label"] for r in records if r["split"] == s)) for s in written},
        "label_shares_uniform": label_shares(space, config.vocab_size, False),
        "label_shares_phrase_balanced": label_shares(space, config.vocab_size, True),
        "independent_phrase_share_uniform": _independent_phrase_share(config.vocab_size),
        "vocabulary": {k: len(v) for k, v in vocab.items()},
        "training_file_fair": all(not v for v in gaps.values()),
        "unexposed_local_inputs": {k: len(v) for k, v in gaps.items()},
        "distinct_train_inputs": len(set(train_abstract)),
    }
    write_jsonl_atomic(out, records)
    write_json_atomic(stats_path, stats)
    return stats


def format_stats(stats: dict) -> str:
    """A few lines summarizing :func:`generate_mqnli`'s statistics."""
    c = stats["config"]
    lines = [
        f"MQNLI, {c['split']} split (ratio {c['ratio']}), {c['vocab_size']} words per open class, seed {c['seed']}",
        f"  fragment: {stats['fragment_pairs']:.2e} pairs; {stats['abstract_inputs']:,} inputs above the words",
        f"  training pool {stats['train_pool']:,} inputs, test pool {stats['test_pool']:,}",
    ]
    uniform = stats["label_shares_uniform"]
    uniform = {**uniform, "neutral": 1 - uniform["entailment"] - uniform["contradiction"]}
    for split in stats["n"]:
        labels = stats["labels"][split]
        shares = ", ".join(f"{label} {labels.get(label, 0)}" for label in MQNLI_LABELS)
        lines.append(f"  {split}: {stats['n'][split]} examples ({shares})")
    lines.append(
        f"  neutral share: all but {1 - uniform['neutral']:.1e} drawn uniformly, "
        f"{100 * stats['label_shares_phrase_balanced']['neutral']:.1f}% after phrase balancing, "
        "33.3% after label balancing"
    )
    fair = "yes" if stats["training_file_fair"] else "no"
    lines.append(f"  training file fair (every node sees every local input): {fair}")
    return "\n".join(lines)


def _quotas(n: int, have: Counter) -> dict[str, int]:
    """Per-label counts still to draw so that ``have`` plus them is ``n`` examples, as balanced as possible."""
    base = {label: n // 3 + (1 if k < n % 3 else 0) for k, label in enumerate(MQNLI_LABELS)}
    quotas = {label: max(0, base[label] - have[label]) for label in MQNLI_LABELS}
    while sum(quotas.values()) > n - sum(have.values()):
        largest = max(quotas, key=quotas.get)
        quotas[largest] -= 1
    return quotas


def _fragment_size(size: int) -> float:
    """|S|: premise-hypothesis pairs of the fragment (every aligned word pair is allowed)."""
    return 16**2 * 4 * (size**2) ** 3 * ((size + 1) ** 2) ** 3


def _independent_phrase_share(size: int) -> float:
    """Chance that a uniformly drawn adjective-noun pair is in # (the papers: over 99%)."""
    not_independent = (1 / size) * (1 - size * (size - 1) / (size + 1) ** 2)
    return 1 - not_independent
