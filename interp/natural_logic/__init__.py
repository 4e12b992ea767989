"""Natural logic (MacCartney & Manning 2009; Geiger et al. 2018, 2019): relations, signatures, composition trees.

* :mod:`~interp.natural_logic.relations`: the seven relations, their set definitions, join, labels.
* :mod:`~interp.natural_logic.semantics`: projectivity signatures derived by enumerating finite models.
* :mod:`~interp.natural_logic.composition`: composition trees, Algorithms 1 and 2, fairness.
* :mod:`~interp.natural_logic.fair_generation`: Algorithm 3, fair training sets with a ratio.
* :mod:`~interp.natural_logic.propositional`: the 2019 paper's propositional toy task.
* :mod:`~interp.natural_logic.polarity`: polarity composition of the monotonicity calculus (the monotonicity tasks).

The MQNLI tree built from these is :mod:`interp.tasks.mqnli.causal_model`; its
generator is :mod:`interp.tasks.mqnli.generate`.
"""

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
from interp.natural_logic.relations import (
    LABEL_OF,
    RELATIONS,
    Relation,
    join,
    join_sets,
    relation_of,
)

__all__ = [
    "LABEL_OF",
    "RELATIONS",
    "UNSEEN",
    "CompositionTree",
    "Relation",
    "Tree",
    "as_causal_model",
    "compose",
    "evaluate_space",
    "fair_training_set",
    "generate_inputs",
    "is_fair",
    "join",
    "join_sets",
    "learn",
    "random_even_split",
    "realize",
    "relation_of",
    "unexposed",
]
