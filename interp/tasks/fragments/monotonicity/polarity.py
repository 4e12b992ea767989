"""Polarity marking: each slot of a sentence is ↑, ↓ or = by a monotonicity calculus over its own parse.

The calculus (van Benthem 1986; Icard & Moss 2014; as Hu & Moss 2018 run
it on CCG trees, here on the grammar's own trees, so no parser is
needed): the root is ↑; a determiner ``Q`` passes its restrictor the
composition of the current polarity with Q's first monotonicity and its
scope the composition with the second; intersective modifiers (adjective,
relative clause, PP "with") keep the polarity, "without" and "did not" /
"not" flip it; a transitive verb is in its object determiner's scope; a
determiner itself has the polarity of the clause it heads. Composition:
:func:`interp.natural_logic.polarity.compose`.

Usage::

    >>> from interp.tasks.fragments.monotonicity.grammar import NP, VP, Sentence
    >>> marks = polarities(Sentence(NP("every", None, "dog"), VP("intransitive", "ran", neg=True)))
    >>> marks[("subject", "noun")], marks[("vp", "verb")]
    ('down', 'down')
"""

from __future__ import annotations

from interp.natural_logic.polarity import compose, flip
from interp.tasks.fragments.monotonicity.grammar import NP, ORC, PP, SRC, VP, Path, Sentence
from interp.tasks.fragments.monotonicity.lexicon import DETERMINERS

POLARITIES: tuple[str, ...] = ("up", "down", "none")
ARROW = {"up": "↑", "down": "↓", "none": "="}


def _np(np: NP, path: Path, context: str, out: dict) -> None:
    """Mark an NP whose determiner heads a clause of polarity ``context``; its own scope is marked by the caller."""
    restrictor = compose(context, DETERMINERS[np.det].monotonicity[0])
    out[path + ("det",)] = context
    out[path + ("adj",)] = restrictor
    out[path + ("noun",)] = restrictor
    out[path + ("mod",)] = restrictor
    if isinstance(np.mod, SRC):
        _vp(np.mod.vp, path + ("mod", "vp"), restrictor, out)
    elif isinstance(np.mod, ORC):
        inner = np.mod.np
        _np(inner, path + ("mod", "np"), restrictor, out)
        out[path + ("mod", "verb")] = compose(restrictor, DETERMINERS[inner.det].monotonicity[1])
    elif isinstance(np.mod, PP):
        inside = restrictor if np.mod.prep == "with" else flip(restrictor)
        out[path + ("mod", "adj")] = inside
        out[path + ("mod", "noun")] = inside


def _vp(vp: VP, path: Path, context: str, out: dict) -> None:
    polarity = flip(context) if vp.neg else context
    if vp.kind == "transitive":
        out[path + ("verb",)] = compose(polarity, DETERMINERS[vp.obj.det].monotonicity[1])
        _np(vp.obj, path + ("obj",), polarity, out)
    else:
        out[path + ("verb",)] = polarity


def polarities(sentence: Sentence) -> dict[Path, str]:
    """Slot path -> ``up`` / ``down`` / ``none`` for every determiner, adjective (or its empty place), noun, modifier and verb."""
    out: dict[Path, str] = {}
    _np(sentence.subject, ("subject",), "up", out)
    _vp(sentence.vp, ("vp",), compose("up", DETERMINERS[sentence.subject.det].monotonicity[1]), out)
    return out


def marked(sentence: Sentence) -> str:
    """The sentence with each marked word followed by its arrow: ``every dog↓ ran↑``."""
    from interp.tasks.fragments.monotonicity.grammar import pieces

    marks = polarities(sentence)
    return " ".join(text + (ARROW[marks[path]] if path in marks and path[-1] != "mod" else "") for text, path in pieces(sentence))
