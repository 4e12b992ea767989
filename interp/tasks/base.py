"""The ``Task``: a dataset and its causal model, carried through every command.

A task says what the examples are, what the classifier's labels are, which
causal model the network is compared with, each example's input values for
it, and, for each variable, the token roles it is aligned to by default.
Nothing below this layer knows MoNLI; every command takes ``--task``.

Usage::

    from interp.tasks import resolve_task
    task = resolve_task("monli")                       # or "mqnli" with data_file=, "path/to/task.py:make_task", "package.module:make_task"
    examples = task.load(("nmonli_test",))
    causal = task.causal_model(examples)               # built for, and checked against, these examples
    values = task.values(causal, examples, "negated")  # VariableValues: int codes [n] and their names

An example is any object with ``id``, ``premise``, ``hypothesis``,
``label`` (one of ``task.labels``), ``split`` and ``words`` (role -> the word
at that role), and optionally ``spans`` (role -> the word's character span
in its sentence, where a sentence repeats a word, as MQNLI's do). A
variable may be aligned to several roles (an MQNLI node to every word below
it): a location at all of them at once is its default. The alignment is a default, not a restriction:
any location may be used for any variable (Geiger et al. 2023 align lexrel
at [CLS] as well as at w_h).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from interp.causal import CausalModel, run_forward
from interp.causal.values import VariableValues, value_name
from interp.core.checks import check_int
from interp.core.errors import ConfigError, DataError, InterpError, named
from interp.core.subsets import seeded_subset
from interp.models.labels import LabelReading, read_labels
from interp.tasks.own import OWN_SPLIT, Example, as_examples
from interp.tasks.stages import BehavioralStage, DemoPlan, fine_tuning


@dataclass(frozen=True)
class WordPairs:
    """How a task's examples pair a premise word with a hypothesis word, for the clique figure.

    Geiger, Richardson & Potts (2020), Figure 5: a clique's word pairs grouped
    by the more general word of each. ``general`` maps each value of
    ``variable`` to the role holding the more general word (MoNLI:
    ``⊏`` (w_p below w_h) -> ``w_h``, ``⊐`` -> ``w_p``).
    """

    premise: str
    hypothesis: str
    variable: str
    general: Mapping[str, str]

    def to_json(self) -> str:
        """The pairs as a file attribute (interventions files carry their task's, so the clique job needs no task)."""
        return json.dumps({"premise": self.premise, "hypothesis": self.hypothesis, "variable": self.variable, "general": dict(self.general)})

    @classmethod
    def from_json(cls, text: str) -> WordPairs:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Groups:
    """Which examples are not independent draws: a key per example, and what one group is called.

    MoNLI's examples share word pairs (several sentences substitute the same pair), and examples that share one share
    how the model treats it, so its intervals resample word pairs (:mod:`interp.analysis.bootstrap`): a claim about the
    model's lexical knowledge is about new pairs, not new sentences for the same pairs.

    Attributes:
        unit: a group's name, plural (``"word pairs"``), as intervals say what they are over.
        key: ``example -> str``, its group.
    """

    unit: str
    key: Callable[[Any], str]

    def __post_init__(self) -> None:
        if not isinstance(self.unit, str) or not self.unit.strip():
            raise ConfigError(f"a task's groups: Groups.unit must name a group in the plural (\"word pairs\"), got {self.unit!r}")
        if not callable(self.key):
            raise ConfigError(f"a task's groups: Groups.key must be a function of an example giving its group, got {self.key!r}")

    def of(self, examples: Sequence[Any]) -> tuple[str, ...]:
        """Each example's group key.

        Raises:
            DataError: naming the task's groups and the example: the key raised, or gave ``None`` (an example in no group
                would be pooled with every other such example into one group called "None").
        """
        found = []
        for e in examples:
            try:
                key = self.key(e)
            except Exception as exc:  # a task's key is user code: its failure is named, not a traceback
                said = next(iter(str(exc).splitlines()), "")
                raise DataError(f"the task's groups: Groups.key raised {type(exc).__name__}: {said} on example {getattr(e, 'id', e)!r}") from None
            if key is None:
                raise DataError(f"the task's groups: Groups.key gave None for example {getattr(e, 'id', e)!r}; give every example a "
                                "group (its own id where it shares none)")  # fmt: skip
            found.append(str(key))
        return tuple(found)


def _example_problem(e: Any, i: int, labels: Sequence[str], roles: Sequence[str], unlabelled: bool = False) -> str | None:
    """What is wrong with ``e``, the ``i``-th example, as an example of a task with ``labels`` whose examples need
    a word for each of ``roles``; ``None`` if nothing. ``unlabelled``: a label of ``None`` is no problem (one's own)."""
    lacking = [a for a in ("id", "premise", "hypothesis", "label") if not isinstance(getattr(e, a, None), str)
               and not (unlabelled and a == "label" and getattr(e, a, None) is None)]  # fmt: skip
    if lacking:
        return f"example {i} ({type(e).__name__}) has no {lacking[0]!r} string; an example has id, premise, hypothesis, label, split and words"
    if e.label not in labels and not (unlabelled and e.label is None):
        return f"example {e.id!r} has gold label {e.label!r}; the task's labels are {', '.join(labels)}"
    words = getattr(e, "words", None)
    missing = [r for r in roles if not isinstance(words, Mapping) or r not in words]
    if missing:
        return (f"example {e.id!r} has no word for role {missing[0]!r} (its words: "
                f"{', '.join(words) if isinstance(words, Mapping) and words else 'none'}); every example needs each of "
                f"{', '.join(roles)} (declare a role some examples lack in optional_roles)")  # fmt: skip
    return None


def _checked_load(
    load: Callable[[Sequence[str]], list], name: str, labels: tuple[str, ...], roles: Sequence[str] = (), groups: "Groups | None" = None
) -> Callable[[Sequence[str]], list]:
    """``load``, its examples checked once as they arrive: ids unique within each split, gold labels among ``labels``,
    a word for each of ``roles`` (the roles every example must have) in each example's ``words``.

    Every command that loads a task gets these checks before any heavy step (a user task repeating an id, a label the
    classifier has no output for, an example missing a role, which a cache silently left out for every example).
    ``checked.__wrapped__`` is ``load``, so a task copied with other labels re-wraps the original.
    """

    def checked(splits: Sequence[str]) -> list:
        try:
            examples = load(splits)
        except InterpError:
            raise
        except Exception as exc:  # a user's loader is user code: its failure is named, not a traceback
            said = next(iter(str(exc).splitlines()), "")  # its first line: the message stays one line
            raise DataError(f"task {name!r}: its load({list(splits)}) raised {type(exc).__name__}: {said}") from None
        if not isinstance(examples, (list, tuple)):
            raise DataError(f"task {name!r}: its load returned {type(examples).__name__}, not a list of examples")
        seen: set[tuple[str, str]] = set()
        for i, e in enumerate(examples):
            own = isinstance(e, Example)  # one's own: a label and every role optional (what needs them says so)
            problem = _example_problem(e, i, labels, () if own else roles, unlabelled=own)
            if problem:
                raise DataError(f"task {name!r}: {problem}")
            key = (getattr(e, "split", ""), e.id)  # splits may overlap (a lexical test inside a test): unique within one
            if key in seen:
                raise DataError(f"task {name!r}: example id {e.id!r} occurs twice in split {key[0]!r}; ids must be unique")
            seen.add(key)
        if groups is not None:  # each example's group, computed once here so a key that fails does so before any work
            groups.of(examples)
        return examples

    checked.__wrapped__ = load  # type: ignore[attr-defined]
    return checked


#: The fold of a two-label task (entailment, neutral): a classifier's contradiction or non-entailment is not entailed
#: (Geiger, Richardson & Potts 2020, §5.1), and so is a gold contradiction a two-label classifier is scored on.
NOT_ENTAILED: Mapping[str, str] = {"contradiction": "neutral", "non-entailment": "neutral"}

@dataclass(frozen=True)
class LinearReadout:
    """A continuous readout of a pair's intervened logits and the signals a linear model of it reads (MIB, Mueller et
    al. 2025, §4.1, IOI: ``readout = bias + Σ coefficient × signal``, its parameters fitted on full interchanges).

    Attributes:
        readout: ``(logits [pairs, labels], base examples, labels) -> float [pairs]`` (IOI: the base's indirect object's
            logit minus its subject's).
        signals: ``(base, source, variable) -> tuple of ±1`` (IOI: position, token), what the causal model says an
            interchange of ``variable`` alone does to the readout's terms, or ``None`` where the linear model has no
            term for the pair (IOI: a source of other names).
        both: ``(base, source) -> tuple of ±1``, the signals where every variable comes from the source (what a full
            interchange does: the fit's inputs), or ``None``.
        names: each signal's name.
    """

    readout: Callable[[Any, Sequence[Any], Sequence[str]], Any]
    signals: Callable[[Any, Any, str], tuple[int, ...] | None]
    both: Callable[[Any, Any], tuple[int, ...] | None]
    names: tuple[str, ...]


@dataclass(frozen=True)
class Task:
    """A dataset, its labels, its causal model and the default alignment of each variable to token roles.

    Attributes:
        name: how files record the task (``monli``, or the user's own name).
        labels: the classifier's labels in id order.
        splits: the names ``load`` accepts.
        default_splits: the example set ``interp intervene`` uses when none is named.
        load: ``splits -> examples`` (checked; raises :class:`~interp.core.errors.DataError` naming file and line).
        causal_model: ``examples -> CausalModel`` built for and checked against them (raises
            :class:`~interp.core.errors.ConfigError` naming an example it does not fit); ``None`` for a
            behavioral-only task.
        inputs: ``example -> {input variable: value}``.
        alignment: variable -> the token roles it is aligned to by default.
        roles: every token role an example of the task can have; ``cls`` ([CLS]) needs no word, every other
            role not in :attr:`optional_roles` needs one in each example's ``words`` (checked by :attr:`load`).
        label_mapping: a label one side lacks -> the task label it reads as: a gold label a classifier
            lacks is scored against it (the semantic fragments' ``{"contradiction": "neutral"}`` lets a
            two-label MoNLI model be scored on three-label data), a classifier's label the task lacks is
            read as it (MoNLI's ``{"contradiction": "neutral"}``: a three-label SNLI model on two-label
            data); see :meth:`read_labels`.
        train_splits: what ``interp train`` fine-tunes on by default (empty: ``train`` where the task has it, else every split).
        extra_splits: further names ``load`` accepts that are never a default (MoNLI's fixed PMoNLI halves).
        stable_ids: an example's id names its released line, so a training run is fingerprinted by ids
            alone (else by each example's text and label too).
        probe_targets: what a probe sweep probes by default (empty: every variable the cache
            keeps and the label); the cache records them.
        word_pairs: how the clique figure pairs and groups the examples' words (``None``: it lists
            each member's words); interventions files record it.
        behavioral: the fine-tunings ``interp demo`` starts with and how their accuracies read
            (MoNLI: Table 1); ``None``: one fine-tuning on :attr:`training_splits` (:attr:`behavioral_stage`).
        demo: how the demo studies the fine-tuned model (:class:`~interp.tasks.stages.DemoPlan`); ``None``: the default plan.
        eval_splits: what ``interp evaluate`` scores by default (empty: every split).
        optional_roles: roles some examples lack (the generated monotonicity fragment's substituted words,
            absent where a pair is not a one-word substitution); a cache keeps a role only where every example has it.
        breakdown: a name -> ``example -> value``: groups each split's accuracy is also given by, wherever a command
            scores the task per split (``evaluate``, ``train``): Yanaka et al. (2020)'s upward and downward
            inferences, the polarity of the replaced position.
        groups: examples that are not independent draws (:class:`Groups`; MoNLI: its word pairs); every interval of
            IIA and DAS then resamples groups by default, and files keep each example's group. ``None``: examples.
        own_values: the input values an example of one's own (:class:`interp.tasks.own.Example`) gives for the causal
            model to apply to it (MoNLI: ``lexrel``, ``negated``); empty: the task reads none.
        own: ``Example -> the task's example`` for one of one's own that gives :attr:`own_values` (its label the
            causal model's; raises :class:`~interp.core.errors.ConfigError` naming the example where a value is bad
            or a given label disagrees).
        reading: how a pretrained causal LM reads the task where the caller names neither a template nor label words:
            ``{"template": ..., "label_words": {label: word}}`` (IOI: the two clauses joined by a space, each name its
            own word); empty: the caller says (``--template``, ``--label-words``).
        for_tokenizer: ``tokenizer -> Task``, the task as a pretrained causal LM's tokenizer reads it, applied where such
            a model is loaded for it (:func:`interp.api.loading.fit_task`): IOI keeps the names that are one token,
            city attributes read each answer by its first token; ``None``: the task is read as it is.
        linear: MIB's linear model of a continuous readout (:class:`LinearReadout`; IOI's logit difference), which
            ``interp localize`` scores each unit by beside IIA; ``None``: the task has none.
    """

    name: str
    labels: tuple[str, ...]
    splits: tuple[str, ...]
    load: Callable[[Sequence[str]], list]
    roles: tuple[str, ...]
    default_splits: tuple[str, ...] = ()
    causal_model: Callable[[Sequence[Any]], CausalModel] | None = None
    inputs: Callable[[Any], dict] | None = None
    alignment: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    label_mapping: Mapping[str, str] = field(default_factory=dict)
    train_splits: tuple[str, ...] = ()
    extra_splits: tuple[str, ...] = ()
    stable_ids: bool = False
    probe_targets: tuple[str, ...] = ()
    word_pairs: WordPairs | None = None
    behavioral: BehavioralStage | None = None
    demo: DemoPlan | None = None
    eval_splits: tuple[str, ...] = ()
    optional_roles: tuple[str, ...] = ()
    breakdown: Mapping[str, Callable[[Any], str]] = field(default_factory=dict)
    groups: Groups | None = None
    own_values: tuple[str, ...] = ()
    own: Callable[[Any], Any] | None = None
    reading: Mapping[str, Any] = field(default_factory=dict)
    for_tokenizer: Callable[[Any], "Task"] | None = None
    linear: "LinearReadout | None" = None

    def __post_init__(self) -> None:
        if not self.labels:
            raise ConfigError(f"task {self.name!r} declares no labels")
        odd = [x for x in self.labels if not isinstance(x, str) or not x.strip() or not x.isprintable()]
        if odd or len(set(self.labels)) != len(self.labels):
            raise ConfigError(f"task {self.name!r}: labels {tuple(self.labels)!r} are not distinct printable names"
                              + (f" ({odd[0]!r})" if odd else ""))
        bad = [r for r in self.roles if not isinstance(r, str) or not re.fullmatch(r"[A-Za-z_][\w.]*", r)]
        if bad:
            raise ConfigError(f"task {self.name!r}: token role {bad[0]!r} is not a name (letters, digits, _ and .), as locations need")
        unknown_optional = [r for r in self.optional_roles if r not in self.roles]
        if unknown_optional:
            raise ConfigError(f"task {self.name!r}: optional role {unknown_optional[0]!r} is not one of its roles ({', '.join(self.roles)})")
        required = tuple(r for r in self.roles if r != "cls" and r not in self.optional_roles)
        odd_groups = [k for k, of in self.breakdown.items() if not isinstance(k, str) or not k.isidentifier() or not callable(of)]
        if odd_groups:
            raise ConfigError(f"task {self.name!r}: breakdown {odd_groups[0]!r} is not a name with a function of an example")
        if self.groups is not None and not isinstance(self.groups, Groups):
            raise ConfigError(f"task {self.name!r}: groups must be Groups(unit=..., key=...) or None, got {type(self.groups).__name__}")
        object.__setattr__(self, "load", _checked_load(getattr(self.load, "__wrapped__", self.load), self.name, self.labels, required, self.groups))
        bad_mapping = {k: v for k, v in self.label_mapping.items() if v not in self.labels or k == v}
        if bad_mapping:
            raise ConfigError(f"task {self.name!r}: label_mapping {bad_mapping} folds a label into one the task lacks ({', '.join(self.labels)})")
        if (self.causal_model is None) != (self.inputs is None):
            raise ConfigError(f"task {self.name!r}: causal_model and inputs come together (one is missing)")
        pairs = self.word_pairs
        if pairs is not None and (
            {pairs.premise, pairs.hypothesis, *pairs.general.values()} - set(self.roles) or pairs.variable not in self.alignment
        ):  # fmt: skip
            raise ConfigError(f"task {self.name!r}: word_pairs {pairs} names a role or variable the task lacks")
        known = {*self.splits, *self.extra_splits}
        plan = self.demo or DemoPlan()
        unknown = sorted(
            ((self.behavioral.splits() if self.behavioral else set()) | {*plan.cache_splits, *plan.splits, *self.eval_splits}) - known
        )
        if unknown:
            raise ConfigError(f"task {self.name!r}: its demo or evaluation names split {unknown[0]!r}, which it lacks")
        if {*plan.variables, *filter(None, [plan.clique_variable])} - set(self.alignment):
            raise ConfigError(f"task {self.name!r}: its demo plan names a variable the task lacks ({plan})")
        for variable, roles in self.alignment.items():
            unknown = [r for r in roles if r not in self.roles]
            if unknown or not roles:
                raise ConfigError(
                    f"task {self.name!r}: variable {variable!r} is aligned to unknown role(s) {', '.join(unknown) or '(none)'}; "
                    f"the task's roles are {', '.join(self.roles)}"
                )

    def read_labels(self, model_labels: Sequence[str], model: str = "the model") -> LabelReading:
        """How a classifier with ``model_labels`` (its ``id2label`` in id order) reads as this task's labels.

        By name in any order, with the usual NLI spellings; a model label the
        task lacks is read through :attr:`label_mapping` (a three-label model on
        MoNLI: contradiction as neutral, Geiger et al. 2020, §5.1), and a gold
        label the model lacks is scored as the label it maps to (a two-label
        MoNLI model on three-label data). See :func:`interp.models.labels.read_labels`.

        Raises:
            ModelError: labels that cannot be read as the task's (naming ``label_map=`` where it would help).
        """
        return read_labels(model_labels, self.labels, self.label_mapping, model=model, task=self.name)

    @property
    def training_splits(self) -> tuple[str, ...]:
        """The splits a classifier is fine-tuned on by default: :attr:`train_splits`, else ``train``, else every split."""
        return self.train_splits or (("train",) if "train" in self.splits else self.splits)

    @property
    def behavioral_stage(self) -> BehavioralStage:
        """:attr:`behavioral`, else one fine-tuning on :attr:`training_splits` into ``model/``."""
        return self.behavioral or fine_tuning(self)

    @property
    def demo_plan(self) -> DemoPlan:
        """:attr:`demo`, else the default :class:`~interp.tasks.stages.DemoPlan`."""
        return self.demo or DemoPlan()

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables one can intervene on: those with a default alignment."""
        return tuple(self.alignment)

    def check_variable(self, variable: str) -> str:
        """``variable`` if the task has it.

        Raises:
            ConfigError: naming ``variable=`` (a caller holding it under another name wraps the call in
                :func:`interp.core.errors.renamed`): the task has no causal model, or no such variable.
        """
        if self.causal_model is None:
            raise ConfigError(f"{named('variable', repr(variable))}: task {self.name!r} has no causal model (behavioral only)")
        if variable not in self.alignment:
            raise ConfigError(
                f"{named('variable', repr(variable))}: task {self.name!r} has no such variable; it has {', '.join(self.variables)}"
            )
        return variable

    def build_causal_model(self, examples: Sequence[Any]) -> CausalModel:
        """The task's causal model for ``examples``, checked to reproduce each gold label.

        Raises:
            ConfigError: the task has none, or it does not fit an example (named by id).
        """
        if self.causal_model is None:
            raise ConfigError(f"task {self.name!r} has no causal model (behavioral only)")
        plain = next((e for e in examples if isinstance(e, Example)), None)
        if plain is not None:
            how = (f"give values={{{', '.join(repr(v) + ': ...' for v in self.own_values)}}}" if self.own_values else
                   f"task {self.name!r} reads no values of one's own")
            raise ConfigError(f"example {plain.id!r} is one of your own without the input values the causal model of task {self.name!r} "
                              f"needs: its counterfactual labels (IIA, DAS) are undefined; {how} (interp.examples(..., values=...)), or read the "
                              "intervened logits alone (IntervenableModel.interchange_logits)")  # fmt: skip
        causal = self.causal_model(examples)
        if not isinstance(causal, CausalModel):
            raise ConfigError(f"task {self.name!r}: causal_model returned a {type(causal).__name__}, not a CausalModel")
        for e in examples:
            try:
                predicted = run_forward(causal, self.inputs(e))[causal.output]
            except (ConfigError, KeyError, TypeError, ValueError) as exc:
                raise ConfigError(f"causal model {causal.name} cannot read example {e.id} of task {self.name!r} ({exc})") from None
            if predicted != e.label:
                raise ConfigError(
                    f"causal model {causal.name} does not fit the dataset: it labels example {e.id} "
                    f"{predicted!r}, the gold label is {e.label!r}"
                )
        return causal

    def values(self, causal: CausalModel, examples: Sequence[Any], variable: str) -> VariableValues:
        """Each example's value of ``variable`` under ``causal``.

        Codes follow the order of ``causal.values[variable]`` where the
        model declares it (so lexrel ⊏ is 0 and ⊐ is 1), else the sorted
        names.
        """
        self.check_variable(variable)
        raw = [run_forward(causal, self.inputs(e))[variable] for e in examples]
        declared = [value_name(v) for v in causal.values.get(variable, ())]
        seen = sorted({value_name(v) for v in raw} - set(declared))
        names = tuple(declared + seen)
        if len(names) > 127:
            raise ConfigError(f"{named('variable', repr(variable))} takes {len(names)} values; interp stores at most 127")
        codes = np.array([names.index(value_name(v)) for v in raw], dtype=np.int8)
        return VariableValues(variable, codes, names)

    def examples(
        self, splits: Sequence[str] = (), *, n: int | None = None, per_split: int | None = None, seed: int = 0
    ) -> list:
        """An example set: the named ``splits`` (else :attr:`default_splits`, else all), or a seeded subset of them in file order.

        ``per_split`` first keeps at most that many of each split (so
        MoNLI's ``("pmonli", "nmonli_test")`` with 150 gives a set half
        negated), then ``n`` draws from what is left; both seeded by
        ``seed`` (:func:`interp.core.subsets.seeded_subset`).

        Raises:
            ConfigError: naming ``splits=`` (a split the task lacks, or one string), ``n=``, ``per_split=`` or ``seed=``.
            DataError: as :attr:`load`.
        """
        if isinstance(splits, str):
            raise ConfigError(f"{named('splits', repr(splits))} must be a tuple of split names, e.g. ({splits!r},)")
        check_int(n, "n", least=0, optional=True)
        check_int(per_split, "per_split", least=0, optional=True)
        check_int(seed, "seed", least=0)
        unknown = [s for s in splits if s not in (*self.splits, *self.extra_splits)]
        if unknown:
            raise ConfigError(f"{named('splits', repr(unknown[0]))}: task {self.name!r} has {', '.join((*self.splits, *self.extra_splits))}")
        examples = self.load(tuple(splits) or self.default_splits or self.splits)
        if per_split is not None:
            names = list(dict.fromkeys(e.split for e in examples))
            kept = {id(e) for name in names for e in seeded_subset([e for e in examples if e.split == name], per_split, seed)}
            examples = [e for e in examples if id(e) in kept]
        return seeded_subset(examples, n, seed)

    def check_examples(self, examples: Any, *, allow_empty: bool = False) -> list:
        """``examples`` as a list, checked to be this task's: each has the fields an example has, a split of the
        task, one of its labels and a word for each role it needs. What every public call that takes examples
        checks first, so that another task's examples or a list of strings is named, not met deep inside.

        Raises:
            ConfigError: naming ``examples=`` (a caller's ``bases=`` through :func:`interp.core.errors.renamed`): not a list or tuple, empty (unless ``allow_empty``), or an item that
                is not an example of this task.
        """
        if isinstance(examples, (str, bytes)) or not isinstance(examples, Sequence):
            raise ConfigError(f"{named('examples')} must be a list of task {self.name!r}'s examples (task.examples(...)), got {type(examples).__name__}")
        if not examples and not allow_empty:
            raise ConfigError(f"{named('examples')} is empty; give at least one example (task.examples(...))")
        examples = [self.adopt(e) for e in as_examples(examples)]
        known = {*self.splits, *self.extra_splits, OWN_SPLIT}
        for i, e in enumerate(examples):
            required = tuple(r for r in self.roles if r != "cls" and r not in self.optional_roles) if not isinstance(e, Example) else ()
            problem = _example_problem(e, i, self.labels, required, unlabelled=isinstance(e, Example))
            if problem is None and getattr(e, "split", None) not in known:
                problem = f"example {e.id!r} is of split {getattr(e, 'split', None)!r}, which task {self.name!r} lacks ({', '.join(sorted(known))})"
            if problem:
                raise ConfigError(f"{named('examples')}: {problem}; is it another task's?")
        return examples

    def adopt(self, e: Any) -> Any:
        """``e`` as the task reads it: an example of one's own (:class:`interp.tasks.own.Example`) that gives
        :attr:`own_values` becomes the task's own example (:attr:`own`); anything else is returned as it is.

        Raises:
            ConfigError: naming ``examples=`` and the example: some of :attr:`own_values` given, not all; or as :attr:`own`.
        """
        if not isinstance(e, Example) or self.own is None or not self.own_values:
            return e
        given = [v for v in self.own_values if v in e.values]
        if not given:
            return e
        if len(given) < len(self.own_values):
            raise ConfigError(f"{named('examples')}: example {e.id!r} gives {', '.join(given)} but not "
                              f"{', '.join(v for v in self.own_values if v not in e.values)}; the causal model of task {self.name!r} needs "
                              f"{', '.join(self.own_values)}")  # fmt: skip
        return self.own(e)

    def file_attrs(self, variables: Sequence[str]) -> dict:
        """What a file made for this task records of it: its name, the alignment of ``variables``, and its own
        :attr:`probe_targets` and :attr:`word_pairs` where it has them (the probe and clique jobs read these)."""
        attrs = {"task": self.name, "alignment": json.dumps({v: list(self.alignment[v]) for v in variables})}
        if self.probe_targets:
            attrs["probe_targets"] = list(self.probe_targets)
        if self.word_pairs is not None:
            attrs["word_pairs"] = self.word_pairs.to_json()
        return attrs

    def default_roles(self, variables: Sequence[str]) -> tuple[tuple[str, ...], ...]:
        """The role sets ``variables`` are aligned to, each once, in the task's role order: what a bare site stands for.

        A variable aligned to several roles (an MQNLI node over several words)
        gives one set: a bare site is then one location at all of them.
        """
        sets = dict.fromkeys(tuple(self.alignment[v]) for v in variables)
        return tuple(sorted(sets, key=lambda roles: self.roles.index(roles[0])))
