"""WordNet 3.0 from Debian's ``wordnet-base`` database, read with NLTK's WordNet reader; nothing is downloaded.

Debian installs the database in ``/usr/share/wordnet`` (packages
``wordnet-base`` and ``wordnet-sense-index``; ``make wordnet`` installs them)
but not the ``lexnames`` file NLTK's reader opens first. :func:`open_wordnet`
builds, once, a reader root ``<cache>/nltk_data/corpora/wordnet`` holding
copies of the database files (28 MB; NLTK 3.10 refuses links out of its
data root) and a ``lexnames``
generated from the lexnames(5WN) man page the package ships (45 lines), and
puts ``<cache>/nltk_data`` on ``nltk.data.path`` (NLTK 3.10 reads corpora
only below it). The database comes from ``wordnet_dir``, else
``$INTERP_WORDNET_DIR``, else ``/usr/share/wordnet``; the cache is
``$XDG_CACHE_HOME/interp`` (``~/.cache/interp``).

Usage::

    wn = open_wordnet()
    noun_relation(wn, "poodle", "dog")        # ('forward', 1): poodle ⊏ dog, one hypernym step
    neighbours(wn, "dog", max_depth=1)        # {'canine': 1, 'domestic_animal': 1, 'puppy': -1, ...}
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

from interp.core.errors import DataError

ENV_VAR = "INTERP_WORDNET_DIR"
DEFAULT_DIR = "/usr/share/wordnet"
MAN_PAGE = "/usr/share/man/man5/lexnames.5WN.gz"
#: The database files the reader needs (``index.sense`` is ``wordnet-sense-index``'s).
REQUIRED = ("data.noun", "index.noun", "noun.exc", "data.verb", "index.verb", "data.adj", "index.adj", "data.adv", "index.adv", "index.sense")
_HOW_TO_GET = "install Debian's WordNet 3.0 database: apt-get install wordnet-base wordnet-sense-index (make wordnet does), or pass `wordnet_dir=` / set " + ENV_VAR
_CATEGORY = {"adj": 3, "adv": 4, "noun": 1, "verb": 2}


def wordnet_dir(path: str | os.PathLike | None = None) -> Path:
    """The WordNet database directory: ``path``, else ``$INTERP_WORDNET_DIR``, else ``/usr/share/wordnet``.

    Raises:
        DataError: it is not a directory, or lacks a file the reader needs (naming it).
    """
    root = Path(path or os.environ.get(ENV_VAR) or DEFAULT_DIR).expanduser()
    if not root.is_dir():
        raise DataError(f"WordNet directory {root} does not exist; {_HOW_TO_GET}")
    missing = [name for name in REQUIRED if not (root / name).is_file()]
    if missing:
        raise DataError(f"WordNet directory {root} lacks {', '.join(missing)}; {_HOW_TO_GET}")
    return root


def lexnames_from_man_page(text: str) -> str:
    """The ``lexnames`` file (``NN<TAB>name<TAB>category``, 45 lines) from the lexnames(5WN) man page's table.

    >>> lexnames_from_man_page("00\\tadj.all\\tall adjective clusters\\n01\\tnoun.Tops\\tunique beginner")
    '00\\tadj.all\\t3\\n01\\tnoun.Tops\\t1\\n'

    Raises:
        DataError: the table's numbers are not 00, 01, ... in order.
    """
    rows = re.findall(r"^(\d\d)\t(\w+\.\w+)", text, flags=re.MULTILINE)
    if [int(n) for n, _ in rows] != list(range(len(rows))) or not rows:
        raise DataError("the lexnames(5WN) man page does not hold the table of lexicographer files 00, 01, ...")
    return "".join(f"{n}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for n, name in rows)


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "interp" / "nltk_data"


def _prepare(source: Path, man_page: Path) -> Path:
    """``<cache>/nltk_data/corpora/wordnet`` for ``source``, built once (in a temporary folder, then renamed)."""
    root = _cache_root()
    target = root / "corpora" / "wordnet"
    stamp = f"{source.resolve()}\n"
    if (target / "lexnames").is_file() and (target / ".source").is_file() and (target / ".source").read_text() == stamp:
        return target
    if not man_page.is_file():
        raise DataError(f"{man_page}: the lexnames(5WN) man page is missing, so the lexnames file cannot be made; {_HOW_TO_GET}")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=".wordnet."))
    try:
        for item in source.iterdir():
            if item.is_file():  # copied: NLTK refuses symbolic and hard links out of its data root
                shutil.copyfile(item, work / item.name)
        (work / "lexnames").write_text(lexnames_from_man_page(gzip.decompress(man_page.read_bytes()).decode("utf-8", "replace")))
        (work / ".source").write_text(stamp)
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


@lru_cache(maxsize=4)
def _open(source: str, man_page: str):
    import warnings

    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    target = _prepare(Path(source), Path(man_page))
    if str(target.parent.parent) not in nltk.data.path:
        nltk.data.path.append(str(target.parent.parent))
    with warnings.catch_warnings():  # "multilingual functions are not available": no Open Multilingual Wordnet here, by design
        warnings.simplefilter("ignore", UserWarning)
        return WordNetCorpusReader(str(target), None)


def open_wordnet(path: str | os.PathLike | None = None, man_page: str | os.PathLike = MAN_PAGE):
    """NLTK's ``WordNetCorpusReader`` over the database in :func:`wordnet_dir` (cached per directory).

    Raises:
        DataError: no database there, or no man page to make ``lexnames`` from.
    """
    return _open(str(wordnet_dir(path)), str(man_page))


def _is_simple(name: str) -> bool:
    return name.isalpha() and name.islower()


@lru_cache(maxsize=None)
def _ancestors(synset) -> dict:
    """Every hypernym (and instance hypernym) of ``synset`` at its shortest distance."""
    out, frontier, depth = {}, [synset], 0
    while frontier:
        depth += 1
        nxt = []
        for s in frontier:
            for h in s.hypernyms() + s.instance_hypernyms():
                if h not in out:
                    out[h] = depth
                    nxt.append(h)
        frontier = nxt
    return out


def noun_relation(wn, w_p: str, w_h: str) -> tuple[str, int] | None:
    """How WordNet relates two nouns over all their senses: (``forward`` if a sense of w_h is a hypernym of one of w_p, else ``reverse``; the distance).

    ``None`` when neither is an ancestor of the other (or a word is not a
    WordNet noun). Over every sense pair, the shortest path wins; a tie goes
    to the more frequent senses (smaller sum of sense ranks), so "ball" /
    "baseball" is the ball's relation (baseball.n.02 ⊏ ball.n.01), not the
    pitch's (ball.n.11 ⊏ baseball.n.01).
    """
    best = None
    for relation, low, high in (("forward", w_p, w_h), ("reverse", w_h, w_p)):
        rank = {h: i for i, h in enumerate(wn.synsets(high, "n"))}
        for i, s in enumerate(wn.synsets(low, "n")):
            for ancestor, d in _ancestors(s).items():
                if ancestor in rank and (best is None or (d, i + rank[ancestor]) < best[0]):
                    best = ((d, i + rank[ancestor]), relation)
    return None if best is None else (best[1], best[0][0])


def neighbours(wn, word: str, max_depth: int = 2, min_count: int = 1) -> dict[str, int]:
    """Single-word nouns near ``word``'s first (most frequent) noun sense: name -> +d (a hypernym d steps up) or -d (a hyponym).

    Filters: no multiword or capitalized lemma; a lemma used fewer than
    ``min_count`` times in the sense-tagged corpus (WordNet's ``cntlist``) is rare and left out;
    no lemma of the word's own sense. MoNLI's depth has the same sign (positive: w_h the more general).
    """
    synsets = wn.synsets(word, "n")
    if not synsets:
        return {}
    first = synsets[0]
    own = {lemma.name() for lemma in first.lemmas()} | {word}
    found: dict[str, int] = {}

    def add(synset, signed: int) -> None:
        for lemma in synset.lemmas():
            name = lemma.name()
            if _is_simple(name) and name not in own and lemma.count() >= min_count and name not in found:
                found[name] = signed

    for ancestor, d in _ancestors(first).items():
        if d <= max_depth:
            add(ancestor, d)
    frontier = [first]
    for d in range(1, max_depth + 1):
        frontier = [h for s in frontier for h in s.hyponyms() + s.instance_hyponyms()]
        for s in frontier:
            add(s, -d)
    return found
