"""INFER, the algorithm MoNLI is built to test (Geiger, Richardson & Potts 2020, Figure 1), as a causal model.

::

    INFER(x):
        lexrel <- GET-LEX-REL(x)        # the relation of w_p to w_h: ⊏ or ⊐
        if CONTAINS-NOT(x): return REVERSE(lexrel)
        return lexrel                   # ⊏ -> entailment, ⊐ -> neutral

Variables: inputs ``w_p``, ``w_h``, ``negated``; ``lexrel`` (a
:class:`~interp.tasks.monli.data.Lexrel`), ``output`` (the relation returned) and
``label`` (``entailment`` or ``neutral``, the model's output variable).
GET-LEX-REL is a lexicon lookup; for MoNLI the lexicon is the dataset's own
WordNet relation (the sign of ``depth``) for each (w_p, w_h) pair.

Usage::

    model = infer_for(examples)                      # lexicon from the examples, checked to fit them
    run_interchange(model, monli_inputs(base), {"lexrel": monli_inputs(source)})["label"]
"""

from __future__ import annotations

from typing import Mapping, Sequence

from interp.causal.base import CausalModel, Mechanism, run_forward
from interp.core.errors import ConfigError, DataError
from interp.tasks.monli.data import Example, Lexrel

#: How INFER's output relation becomes a MoNLI label (§4): ⊏ entailment, ⊐ neutral.
LABEL_OF: dict[Lexrel, str] = {Lexrel.FORWARD: "entailment", Lexrel.REVERSE: "neutral"}


def reverse(relation: Lexrel) -> Lexrel:
    """REVERSE: ⊏ <-> ⊐ (what a downward-monotone operator such as *not* does)."""
    return Lexrel.REVERSE if relation is Lexrel.FORWARD else Lexrel.FORWARD


def infer(lexicon: Mapping[tuple[str, str], Lexrel]) -> CausalModel:
    """INFER with GET-LEX-REL looking up ``lexicon[(w_p, w_h)]``.

    Raises (when run):
        ConfigError: a (w_p, w_h) pair that is not in the lexicon.
    """
    lexicon = dict(lexicon)

    def get_lex_rel(w_p: str, w_h: str) -> Lexrel:
        try:
            return lexicon[(w_p, w_h)]
        except KeyError:
            raise ConfigError(f"INFER: the lexicon has no relation for the pair ({w_p!r}, {w_h!r})") from None

    def output(lexrel: Lexrel, negated: bool) -> Lexrel:
        return reverse(lexrel) if negated else lexrel

    words = sorted({w for pair in lexicon for w in pair})
    return CausalModel(
        name="infer",
        inputs=("w_p", "w_h", "negated"),
        mechanisms={
            "lexrel": Mechanism(("w_p", "w_h"), get_lex_rel),
            "output": Mechanism(("lexrel", "negated"), output),
            "label": Mechanism(("output",), LABEL_OF.__getitem__),
        },
        output="label",
        values={
            "w_p": tuple(words),
            "w_h": tuple(words),
            "negated": (False, True),
            "lexrel": tuple(Lexrel),
            "output": tuple(Lexrel),
            "label": tuple(LABEL_OF.values()),
        },
    )


def monli_inputs(example: Example) -> dict:
    """The input variables of INFER read off a MoNLI example."""
    return {"w_p": example.w_p, "w_h": example.w_h, "negated": example.negated}


def monli_lexicon(examples: Sequence[Example]) -> dict[tuple[str, str], Lexrel]:
    """GET-LEX-REL's table from MoNLI: each (w_p, w_h) pair's relation, from the sign of its depth.

    Raises:
        DataError: one pair is given both relations (names both examples).
    """
    lexicon: dict[tuple[str, str], Lexrel] = {}
    first: dict[tuple[str, str], str] = {}
    for e in examples:
        pair = (e.w_p, e.w_h)
        if pair in lexicon and lexicon[pair] is not e.lexrel:
            raise DataError(f"{e.source}: example {e.id} gives ({e.w_p}, {e.w_h}) relation {e.lexrel.symbol}, example {first[pair]} the other")
        lexicon.setdefault(pair, e.lexrel)
        first.setdefault(pair, e.id)
    return lexicon


def check_fit(model: CausalModel, examples: Sequence[Example], inputs_of=monli_inputs) -> None:
    """Check that ``model`` reads every example and reproduces its gold label.

    Interchange interventions compare a network with the causal model's
    counterfactuals; on examples where the model does not even get the
    factual label right, that comparison means nothing.

    Raises:
        ConfigError: an example the model cannot read or labels otherwise
            than the dataset does (names the example and its file).
    """
    for e in examples:
        try:
            predicted = run_forward(model, inputs_of(e))[model.output]
        except ConfigError as exc:
            raise ConfigError(f"causal model {model.name} does not fit example {e.id} ({e.source}): {exc}") from None
        if predicted != e.label:
            raise ConfigError(
                f"causal model {model.name} does not fit the dataset: it labels example {e.id} "
                f"({e.source}) {predicted!r}, the gold label is {e.label!r}"
            )


def infer_for(examples: Sequence[Example]) -> CausalModel:
    """INFER with the lexicon of ``examples``, checked to fit them (see :func:`check_fit`)."""
    model = infer(monli_lexicon(examples))
    check_fit(model, examples)
    return model
