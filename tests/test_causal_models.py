"""Causal models: the interface, INFER on its whole truth table and all its counterfactuals, fit to MoNLI."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from interp.causal import (
    CausalModel,
    Mechanism,
    interchange_codes,
    interchange_table,
    run_forward,
    run_interchange,
)
from interp.core.errors import ConfigError, DataError
from interp.tasks.monli import (
    Lexrel,
    check_fit,
    infer,
    infer_for,
    load_monli,
    monli_inputs,
    monli_lexicon,
    reverse,
)

F, R = Lexrel.FORWARD, Lexrel.REVERSE
# One pair per relation: (dog, mammal) is ⊏, (mammal, dog) is ⊐.
LEXICON = {("dog", "mammal"): F, ("mammal", "dog"): R}
PAIR_OF = {F: ("dog", "mammal"), R: ("mammal", "dog")}
ALL_INPUTS = [
    {"w_p": PAIR_OF[rel][0], "w_h": PAIR_OF[rel][1], "negated": neg} for rel, neg in itertools.product((F, R), (False, True))
]


def test_infer_truth_table():
    model = infer(LEXICON)
    table = {(v["lexrel"], v["negated"]): (v["output"], v["label"]) for v in (run_forward(model, x) for x in ALL_INPUTS)}
    assert table == {
        (F, False): (F, "entailment"),
        (R, False): (R, "neutral"),
        (F, True): (R, "neutral"),
        (R, True): (F, "entailment"),
    }


def test_infer_counterfactuals_follow_the_paper_on_every_base_and_source():
    # INFER_{lexrel(i) -> lexrel(j)}(i) = INFER(i) if lexrel(i) = lexrel(j), else REVERSE(INFER(i))  (§6.2)
    model = infer(LEXICON)
    label_of = {F: "entailment", R: "neutral"}
    for base, source in itertools.product(ALL_INPUTS, ALL_INPUTS):
        b, s = run_forward(model, base), run_forward(model, source)
        expected = b["output"] if b["lexrel"] == s["lexrel"] else reverse(b["output"])
        got = run_interchange(model, base, {"lexrel": source})
        assert got["output"] == expected and got["label"] == label_of[expected]
        assert got["lexrel"] == s["lexrel"] and got["negated"] == base["negated"]


def test_interventions_on_inputs_and_on_several_variables():
    model = infer(LEXICON)
    base = ALL_INPUTS[0]  # ⊏, not negated: entailment
    assert run_forward(model, base, {"negated": True})["label"] == "neutral"
    both = run_interchange(model, base, {"lexrel": ALL_INPUTS[2], "negated": ALL_INPUTS[3]})
    assert (both["lexrel"], both["negated"], both["label"]) == (R, True, "entailment")


def test_interchange_table_equals_pairwise_run_interchange_on_real_monli(monli_dir):
    examples = load_monli(monli_dir, ("pmonli", "nmonli_test"))[::13]
    model = infer_for(examples)
    inputs = [monli_inputs(e) for e in examples]
    table = interchange_table(model, inputs, inputs, "lexrel")
    naive = np.array([[run_interchange(model, b, {"lexrel": s})["label"] for s in inputs] for b in inputs], dtype=object)
    assert table.shape == (len(examples), len(examples)) and (table == naive).all()
    assert len(set(table.ravel())) == 2
    labels = ["entailment", "neutral"]
    codes = interchange_codes(model, inputs, inputs[::-1], "lexrel", labels)  # sources in another order than bases
    expected = np.array([[labels.index(run_interchange(model, b, {"lexrel": s})["label"]) for s in inputs[::-1]] for b in inputs])
    assert codes.dtype == np.int8 and codes.shape == expected.shape and (codes == expected).all()
    assert interchange_codes(model, inputs[:3], [], "lexrel", labels).shape == (3, 0)
    assert interchange_codes(model, [], inputs, "lexrel", labels).shape == (0, len(inputs))
    assert interchange_table(model, inputs[:3], [], "lexrel").shape == (3, 0)
    with pytest.raises(ConfigError, match="not one of contradiction"):
        interchange_codes(model, inputs, inputs, "lexrel", ["contradiction"])


def test_infer_fits_all_of_monli(monli_dir):
    examples = load_monli(monli_dir)
    model = infer_for(examples)
    assert sum(run_forward(model, monli_inputs(e))["lexrel"] is e.lexrel for e in examples) == len(examples) == 2678


def test_a_causal_model_that_does_not_fit_the_dataset_is_refused(monli_dir):
    examples = load_monli(monli_dir, ("nmonli_test",))
    lexicon = monli_lexicon(examples)
    no_negation = CausalModel(
        name="lexrel-only",
        inputs=("w_p", "w_h", "negated"),
        mechanisms={
            "lexrel": Mechanism(("w_p", "w_h"), lambda p, h: lexicon[(p, h)]),
            "label": Mechanism(("lexrel",), {F: "entailment", R: "neutral"}.__getitem__),
        },
        output="label",
    )
    with pytest.raises(ConfigError, match=r"does not fit the dataset: it labels example nmonli_test:1 .*nmonli_test.jsonl"):
        check_fit(no_negation, examples)
    with pytest.raises(ConfigError, match=r"does not fit example nmonli_test:\d+ .*no relation for the pair"):
        check_fit(infer(LEXICON), examples)
    with pytest.raises(ConfigError, match="needs input variable"):
        check_fit(infer(lexicon), examples, inputs_of=lambda e: {"w_p": e.w_p})


def test_lexicon_with_two_relations_for_one_pair_is_a_data_error(monli_dir):
    examples = load_monli(monli_dir, ("nmonli_test",))
    first = examples[0]
    flipped = type(first)(**{**first.__dict__, "id": "nmonli_test:999", "lexrel": reverse(first.lexrel)})
    with pytest.raises(DataError, match="nmonli_test:999 gives"):
        monli_lexicon([first, flipped])


def test_malformed_models_and_calls_are_refused():
    with pytest.raises(ConfigError, match="reads 'z', not defined before it"):
        CausalModel("bad", ("a",), {"b": Mechanism(("z",), lambda z: z)}, output="b")
    with pytest.raises(ConfigError, match="output 'c' is not a variable"):
        CausalModel("bad", ("a",), {"b": Mechanism(("a",), lambda a: a)}, output="c")
    with pytest.raises(ConfigError, match="defined twice"):
        CausalModel("bad", ("a",), {"a": Mechanism(("a",), lambda a: a)}, output="a")
    model = infer(LEXICON)
    with pytest.raises(ConfigError, match="needs input variable"):
        run_forward(model, {"w_p": "dog"})
    with pytest.raises(ConfigError, match="has no variable 'colour'"):
        run_interchange(model, ALL_INPUTS[0], {"colour": ALL_INPUTS[1]})
    assert model.variables == ("w_p", "w_h", "negated", "lexrel", "output", "label")
