"""Composition trees, the memorizing baseline learner, and fairness (Geiger et al. 2019, §3).

A composition tree C = (T, Dom, Func) composes leaf values up an ordered
tree: every non-leaf node a computes Func(a) of its children's values
(Definition 1, Algorithm 1). The baseline learner (Algorithm 2) builds Func
by memorizing, at every node, the output it saw for each input realized
there; a training set is *fair* for the function F that C realizes when
that learner then computes F on every input (§3.3). Definition 2's
sufficient property is that every non-leaf function sees every one of its
possible inputs in training.

Usage::

    C = CompositionTree(tree, domains, functions)
    compose(C, C.tree.root, x)                  # Algorithm 1: the root's value on input x
    learned = learn(C.tree, [(x, realize(C, x)) for x in train])   # Algorithm 2
    is_fair(C, train)                           # learned computes F on every input of C

Inputs ``x`` are tuples of leaf values in left-to-right leaf order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from interp.causal.base import CausalModel, Mechanism
from interp.core.errors import ConfigError


class Unseen:
    """What a learned function returns for an input it never memorized."""

    def __repr__(self) -> str:
        return "UNSEEN"


#: The value of a node whose learned function never saw its input (Algorithm 2 leaves it undefined).
UNSEEN = Unseen()


@dataclass(frozen=True)
class Tree:
    """An ordered tree: ``children[a]`` lists a non-leaf's children left to right.

    Raises:
        ConfigError: a node has two parents, or the structure has a cycle.
    """

    root: str
    children: Mapping[str, tuple[str, ...]]
    leaves: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        order: list[str] = []
        seen: set[str] = set()

        def visit(node: str) -> None:
            if node in seen:
                raise ConfigError(f"tree node {node!r} is reached twice; a composition tree is a tree")
            seen.add(node)
            kids = self.children.get(node, ())
            if not kids:
                order.append(node)
            for kid in kids:
                visit(kid)

        visit(self.root)
        object.__setattr__(self, "leaves", tuple(order))

    def is_leaf(self, node: str) -> bool:
        return not self.children.get(node)

    def non_leaves(self) -> list[str]:
        """Non-leaf nodes, children before parents (the order to compute them in)."""
        out: list[str] = []

        def visit(node: str) -> None:
            for kid in self.children.get(node, ()):
                visit(kid)
            if not self.is_leaf(node):
                out.append(node)

        visit(self.root)
        return out

    def index(self, leaf: str) -> int:
        """index(a, T): the position of a leaf in left-to-right order."""
        return self.leaves.index(leaf)

    def leaves_under(self, node: str) -> tuple[str, ...]:
        """The leaves below ``node`` (itself if a leaf), left to right."""
        if self.is_leaf(node):
            return (node,)
        return tuple(leaf for kid in self.children[node] for leaf in self.leaves_under(kid))


@dataclass(frozen=True)
class CompositionTree:
    """C = (T, Dom, Func): leaf domains and a function per non-leaf node (Definition 1).

    ``functions[a]`` is a callable of the children's values, or a dict from
    tuples of children's values (a learned, memorized function). Domains of
    non-leaf nodes are the functions' ranges (computed when not given).
    """

    tree: Tree
    domains: Mapping[str, tuple]
    functions: Mapping[str, Callable[..., Any] | Mapping[tuple, Any]]

    def __post_init__(self) -> None:
        missing = [leaf for leaf in self.tree.leaves if leaf not in self.domains]
        if missing:
            raise ConfigError(f"composition tree: leaves {', '.join(missing)} have no domain")
        undefined = [a for a in self.tree.non_leaves() if a not in self.functions]
        if undefined:
            raise ConfigError(f"composition tree: nodes {', '.join(undefined)} have no function")

    def apply(self, node: str, args: tuple) -> Any:
        """Func(node)(args); :data:`UNSEEN` for a memorized function that never saw ``args``."""
        function = self.functions[node]
        if isinstance(function, Mapping):
            return function.get(args, UNSEEN)
        if any(a is UNSEEN for a in args):
            return UNSEEN
        return function(*args)

    def inputs(self) -> Iterator[tuple]:
        """The input space I_C: every tuple of leaf values (its size is the product of leaf domains)."""
        return product(*(self.domains[leaf] for leaf in self.tree.leaves))

    def domain(self, node: str) -> tuple:
        """Dom(node): the leaf domain, or every value the node's function outputs on I_C's realizations."""
        if node in self.domains:
            return tuple(self.domains[node])
        kids = self.tree.children[node]
        values = []
        for args in product(*(self.domain(k) for k in kids)):
            v = self.apply(node, args)
            if v is not UNSEEN and v not in values:
                values.append(v)
        return tuple(values)


def compose(C: CompositionTree, node: str, x: Sequence) -> Any:
    """Algorithm 1: the value of ``node`` on input ``x`` (leaf values in left-to-right order)."""
    if C.tree.is_leaf(node):
        return x[C.tree.index(node)]
    return C.apply(node, tuple(compose(C, kid, x) for kid in C.tree.children[node]))


def realize(C: CompositionTree, x: Sequence) -> dict[str, Any]:
    """Y: the output realized at every node on input ``x`` (leaves included)."""
    values = {leaf: x[i] for i, leaf in enumerate(C.tree.leaves)}
    for node in C.tree.non_leaves():
        values[node] = C.apply(node, tuple(values[k] for k in C.tree.children[node]))
    return values


def learn(tree: Tree, data: Iterable[tuple[Sequence, Mapping[str, Any]]]) -> CompositionTree:
    """Algorithm 2, the baseline learner: memorize every node's realized input -> output.

    Args:
        tree: the ordered tree T.
        data: pairs (x, Y) of an input and the value at every non-leaf node.

    Returns:
        A composition tree whose domains are the values seen and whose
        functions are dicts; unseen inputs give :data:`UNSEEN`.
    """
    domains: dict[str, set] = {node: set() for node in tree.leaves}
    functions: dict[str, dict] = {node: {} for node in tree.non_leaves()}
    for x, Y in data:
        for i, leaf in enumerate(tree.leaves):
            domains[leaf].add(x[i])
        values = {**{leaf: x[i] for i, leaf in enumerate(tree.leaves)}, **Y}
        for node, table in functions.items():
            table[tuple(values[k] for k in tree.children[node])] = values[node]
    return CompositionTree(tree, {k: tuple(v) for k, v in domains.items()}, functions)


def local_inputs(C: CompositionTree, node: str) -> set[tuple]:
    """Every input Func(node) can receive: the product of its children's domains."""
    return set(product(*(C.domain(k) for k in C.tree.children[node])))


def unexposed(C: CompositionTree, train: Iterable[Sequence]) -> dict[str, set[tuple]]:
    """Definition 2: for each non-leaf node, the local inputs no training input realizes.

    An empty result for every node is sufficient for ``train`` to be fair.
    """
    seen: dict[str, set[tuple]] = {node: set() for node in C.tree.non_leaves()}
    for x in train:
        values = realize(C, x)
        for node in seen:
            seen[node].add(tuple(values[k] for k in C.tree.children[node]))
    return {node: local_inputs(C, node) - seen[node] for node in seen}


def is_fair(C: CompositionTree, train: Sequence[Sequence], test: Iterable[Sequence] | None = None) -> bool:
    """§3.3: ``train`` is fair when the baseline learner trained on it computes F on every input.

    The learner gets each training input with its values at every node
    (Algorithm 2), then must reproduce C's root on every input of ``test``
    (default: the whole input space I_C, so only for small trees).
    """
    learned = learn(C.tree, [(x, realize(C, x)) for x in train])
    root = C.tree.root
    return all(compose(learned, root, x) == compose(C, root, x) for x in (C.inputs() if test is None else test))


def evaluate_space(C: CompositionTree) -> tuple[dict[str, tuple], dict[str, np.ndarray]]:
    """Every node's value on every input of I_C at once, as indices into the node's domain.

    Each function is tabulated once over its children's domains and then
    looked up with numpy indexing, so a space of 10^6 inputs takes well
    under a second (:func:`realize` on each input takes minutes).

    Returns:
        ``(domains, codes)``: ``domains[node]`` is Dom(node) and
        ``codes[node]`` an int array ``[|I_C|]`` in :meth:`CompositionTree.inputs`
        order, with ``domains[node][codes[node][i]]`` the node's value on input i.
    """
    leaves = C.tree.leaves
    shape = [len(C.domains[leaf]) for leaf in leaves]
    grids = np.indices(shape).reshape(len(shape), -1)
    domains = {leaf: tuple(C.domains[leaf]) for leaf in leaves}
    codes = {leaf: grids[i] for i, leaf in enumerate(leaves)}
    for node in C.tree.non_leaves():
        kids = C.tree.children[node]
        values: list = []
        lookup = np.zeros([len(domains[k]) for k in kids], dtype=np.int64)
        for where in np.ndindex(*lookup.shape):
            v = C.apply(node, tuple(domains[k][j] for k, j in zip(kids, where)))
            if v not in values:
                values.append(v)
            lookup[where] = values.index(v)
        domains[node] = tuple(values)
        codes[node] = lookup[tuple(codes[k] for k in kids)]
    return domains, codes


def as_causal_model(C: CompositionTree, name: str, output: str | None = None) -> CausalModel:
    """The composition tree as a causal model: leaves are inputs, every other node a variable.

    Interchange interventions on the result (:func:`~interp.causal.run_interchange`)
    ask what the root would be if a node took its value on a source input.
    """
    mechanisms = {
        node: Mechanism(tuple(C.tree.children[node]), (lambda node: lambda *args: C.apply(node, args))(node))
        for node in C.tree.non_leaves()
    }
    return CausalModel(
        name=name,
        inputs=C.tree.leaves,
        mechanisms=mechanisms,
        output=output or C.tree.root,
        values={**{leaf: tuple(C.domains[leaf]) for leaf in C.tree.leaves}, **{n: C.domain(n) for n in mechanisms}},
    )
