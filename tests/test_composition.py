"""Composition trees (Algorithms 1 and 2), fairness, and fair generation (Algorithm 3) on the 2019 toy task."""

import random
from itertools import combinations

import pytest

from interp.causal import run_interchange
from interp.core.errors import ConfigError
from interp.natural_logic.composition import (
    UNSEEN,
    CompositionTree,
    Tree,
    as_causal_model,
    compose,
    evaluate_space,
    is_fair,
    learn,
    realize,
    unexposed,
)
from interp.natural_logic.fair_generation import (
    fair_training_set,
    generate_inputs,
    random_even_split,
)
from interp.natural_logic.propositional import (
    TABLE_1_TEST,
    TABLE_1_TRAIN,
    propositional_tree,
    sentence,
)


def truth(x):
    v1, _, u, v2 = x
    return (not v1) or ((not v2) if u == "¬" else v2)


def test_compose_is_the_truth_table_of_the_sentences():
    C = propositional_tree()
    inputs = list(C.inputs())
    assert len(inputs) == 8
    for x in inputs:
        assert compose(C, "C2", x) is truth(x)
        assert realize(C, x)["C1"] is ((not x[3]) if x[2] == "¬" else x[3])
    assert sentence("F ⇒ ¬T") == (False, "⇒", "¬", True)


def test_table_1_train_is_fair_and_no_smaller_set_is():
    C = propositional_tree()
    assert is_fair(C, TABLE_1_TRAIN)
    assert all(not v for v in unexposed(C, TABLE_1_TRAIN).values())
    for k in range(len(TABLE_1_TRAIN)):
        for subset in combinations(TABLE_1_TRAIN, k):
            assert not is_fair(C, subset), subset


def test_fairness_of_every_four_sentence_split():
    C = propositional_tree()
    inputs = list(C.inputs())
    fair = [s for s in combinations(inputs, 4) if is_fair(C, s)]
    # Definition 2's property and the learner's success agree on every split of this task.
    for s in combinations(inputs, 4):
        assert is_fair(C, s) == all(not v for v in unexposed(C, s).values())
    assert set(TABLE_1_TRAIN) in [set(s) for s in fair]
    # The complement of Table 1's training half is its test half, and it is fair as well: both halves
    # expose ⇒ to all four truth-value pairs and ¬, ε to both values. 66 of the 70 splits are unfair.
    assert is_fair(C, TABLE_1_TEST)
    assert len(fair) == 4
    unfair = (sentence("T ⇒ εF"), sentence("T ⇒ εT"), sentence("F ⇒ εF"), sentence("F ⇒ εT"))
    assert not is_fair(C, unfair) and unexposed(C, unfair)["C1"] == {("¬", True), ("¬", False)}


def test_learned_tree_reproduces_what_it_saw_and_marks_the_rest_unseen():
    C = propositional_tree()
    learned = learn(C.tree, [(x, realize(C, x)) for x in TABLE_1_TRAIN[:2]])
    for x in TABLE_1_TRAIN[:2]:
        assert compose(learned, "C2", x) == compose(C, "C2", x)
    assert compose(learned, "C2", sentence("F ⇒ ¬T")) is UNSEEN


def test_random_even_split_properties():
    rng = random.Random(0)
    items, contexts = list(range(10)), ["a", "b", "c"]
    for ratio in (0.0, 0.3, 1.0):
        split = random_even_split(items, contexts, ratio, rng)
        assert all(split[d] for d in contexts)
        assert set().union(*map(set, split.values())) == set(items)
        shared = set.intersection(*map(set, split.values()))
        assert len(shared) >= round(ratio * len(items))
    even = random_even_split(items, contexts, 0.0, rng)
    assert sorted(len(v) for v in even.values()) == [3, 3, 4]
    few = random_even_split([1], contexts, 0.0, rng)  # fewer items than contexts: items are dealt again
    assert all(v == [1] for v in few.values())


def test_fair_generation_is_fair_at_every_ratio_and_grows_to_the_whole_space():
    C = propositional_tree()
    sizes = []
    for ratio in (0.0, 0.5, 1.0):
        for seed in range(5):
            train = fair_training_set(C, ratio, seed)
            assert is_fair(C, train), (ratio, seed)
        sizes.append(len(fair_training_set(C, ratio, 0)))
    assert sizes[0] == 4 and sizes[0] <= sizes[1] <= sizes[2] == 8
    classes = generate_inputs(C, 0.0, 0)
    assert all(compose(C, "C2", x) is value for value, xs in classes.items() for x in xs)
    with pytest.raises(ConfigError, match="ratio="):
        generate_inputs(C, 1.5)


def test_evaluate_space_equals_realize_on_every_input():
    C = propositional_tree()
    domains, codes = evaluate_space(C)
    for i, x in enumerate(C.inputs()):
        values = realize(C, x)
        for node in ("C1", "C2", "U"):
            assert domains[node][codes[node][i]] == values[node]


def test_as_causal_model_interchanges_a_node():
    C = propositional_tree()
    model = as_causal_model(C, "propositional")
    base = dict(zip(C.tree.leaves, sentence("T ⇒ εF")))  # false
    source = dict(zip(C.tree.leaves, sentence("T ⇒ ¬F")))  # C1 true
    assert run_interchange(model, base, {"C1": source})["C2"] is True
    assert run_interchange(model, base, {"V1": {**source, "V1": False}})["C2"] is True


def test_trees_reject_bad_structure():
    with pytest.raises(ConfigError, match="reached twice"):
        Tree("a", {"a": ("b", "b")})
    with pytest.raises(ConfigError, match="no domain"):
        CompositionTree(Tree("a", {"a": ("b",)}), {}, {"a": lambda b: b})
