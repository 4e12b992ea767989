"""Examples of one's own: any premise and hypothesis (or any one string), their token roles named by word, by
character span or by token index, with a label and the causal model's input values where the user has them.

Usage::

    import interp
    mine = interp.examples([("the man does not own a dog", "the man does not own a mammal"),
                            ("a woman holds a flower", "a woman holds a rose")],
                           roles={"w_p": ["dog", "flower"], "w_h": ["mammal", (16, 20)]},   # a word, or its character span
                           values=[{"lexrel": "⊏", "negated": True}, {"lexrel": "⊐", "negated": False}])
    lab = interp.IntervenableModel("minilm", "monli", complete=False)
    lab.vectors(mine, "blocks.2.hook_resid_post@w_h")            # float32 [2, 1, 384]
    lab.run_with_cache(["any sentence at all"], "blocks.0.hook_resid_post@cls,blocks.5.hook_resid_post@cls")

Every call of :class:`~interp.api.intervenable.IntervenableModel` that takes a task's examples takes these too, and a
plain string or ``(premise, hypothesis)`` pair in their place (read with no role but ``cls``). An example's split is
``own``, which every task accepts. A role's sentence is its name's (``w_p``: the premise, ``w_h``: the hypothesis,
:func:`~interp.hooks.encoding.role_segment`); a token index is into the whole tokenized input (a decoder's: after its
template), negative from its end. Where a task reads its own examples' input values (:attr:`Task.own_values
<interp.tasks.base.Task.own_values>`: MoNLI's ``lexrel`` and ``negated``), ``values=`` gives them and the task's causal
model applies: the label is the causal model's (a given label must agree), and interchange interventions read
counterfactual labels as for the task's own examples. Without them, the vectors, predictions and intervened logits are
there; IIA is not, and asking for it names what is missing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from interp.core.errors import ConfigError, DataError, named
from interp.core.jsonlines import json_record, read_lines
from interp.hooks.encoding import role_segment, word_spans

#: The split of every example of one's own; every task accepts it.
OWN_SPLIT = "own"

#: The fields of an example given as a mapping (a line of a JSON-lines file of one's own).
FIELDS = ("premise", "hypothesis", "label", "id", "words", "spans", "tokens", "values")


@dataclass(frozen=True)
class Example:
    """One example of one's own (:func:`examples` builds them, checked).

    Attributes:
        premise, hypothesis: the two sentences (``hypothesis`` empty for a single string).
        words: role -> the word at it (for a span, the span's text; for a token index, ``"<token i>"``).
        spans: role -> ``(start, end)`` character span in the role's sentence, where the role was given so.
        tokens: role -> token index into the tokenized input, where the role was given so.
        label: the gold label, or ``None``.
        values: the causal model's input values the user gave (``{"lexrel": "⊏", "negated": True}``).
        id: ``own:N`` by default (1-based position).
        split: ``own``.
    """

    premise: str
    hypothesis: str = ""
    words: Mapping[str, str] = field(default_factory=dict, hash=False)
    spans: Mapping[str, tuple[int, int]] = field(default_factory=dict, hash=False)
    tokens: Mapping[str, int] = field(default_factory=dict, hash=False)
    label: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict, hash=False)
    id: str = "own:1"
    split: str = OWN_SPLIT


def examples(pairs: Sequence, roles: Mapping[str, Any] | None = None, *, labels: Sequence[str | None] | None = None,
             values: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None, ids: Sequence[str] | None = None) -> list[Example]:  # fmt: skip
    """Examples of one's own from plain text.

    Args:
        pairs: each a string (a premise alone), a ``(premise, hypothesis)`` pair, an :class:`Example`, or a mapping
            with the fields of :data:`FIELDS` (``words``, ``spans``, ``tokens``: role -> word, span or index).
        roles: role -> how each example names it: a list with one entry per example, or one entry for all; an entry
            is a word (``"dog"``, found as a whole word in the role's sentence, once), a character span ``(start,
            end)`` in that sentence, or a token index (``-1``: the last token).
        labels: one gold label per example (``None`` for none).
        values: the causal model's input values, one mapping per example or one for all.
        ids: one id per example; ``own:1``, ``own:2``, ... by default.

    Returns:
        ``len(pairs)`` :class:`Example`.

    Raises:
        ConfigError: naming the parameter and the example: not a string, pair or mapping; a list of another length
            than ``pairs``; a word that does not occur exactly once as a whole word in its sentence; a span outside
            its sentence; a role name that says no sentence (for a word or span); a repeated id.
    """
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
        raise ConfigError(f"{named('pairs')} must be a list of strings, (premise, hypothesis) pairs or mappings, got {type(pairs).__name__}")
    n = len(pairs)
    per = {"labels": _each(labels, n, "labels"), "values": _each(values, n, "values", one=isinstance(values, Mapping)),
           "ids": _each(ids, n, "ids")}  # fmt: skip
    specs = {role: _each(spec, n, f"roles[{role!r}]", one=not isinstance(spec, list)) for role, spec in (roles or {}).items()}
    out = []
    for i, item in enumerate(pairs):
        record = _record(item, i)
        for role, spec in specs.items():
            if spec[i] is not None:
                record.setdefault("roles", {})[role] = spec[i]
        for key, name in (("label", "labels"), ("values", "values"), ("id", "ids")):
            if per[name][i] is not None:
                record[key] = per[name][i]
        out.append(_example(record, i, f"{named('pairs')} item {i}"))
    seen: dict[str, int] = {}
    for i, e in enumerate(out):
        if e.id in seen:
            raise ConfigError(f"{named('ids')}: id {e.id!r} is given to examples {seen[e.id]} and {i}; ids must be unique")
        seen[e.id] = i
    return out


def read_examples(path: str | os.PathLike) -> list[Example]:
    """A JSON-lines file of one's own examples: one object a line with the fields of :data:`FIELDS` (``premise``
    required; ``words``/``spans``/``tokens`` map a role to a word, a ``[start, end]`` span or a token index).

    Raises:
        DataError: naming ``file:line``: the file missing or unreadable, a line that is not such an object, a role
            that cannot be found, a repeated id.
    """
    out, seen = [], {}
    for lineno, text in enumerate(read_lines(path, "a file of one JSON object a line: premise, hypothesis, words, label"), 1):
        where = f"{path}:{lineno}"
        record = json_record(text, where, required=("premise",), strings=("premise", "hypothesis", "label", "id"))
        unknown = sorted(set(record) - set(FIELDS))
        if unknown:
            raise DataError(f"{where}: unknown field {unknown[0]!r}; an example has {', '.join(FIELDS)}")
        try:
            e = _example(_record(record, lineno - 1), lineno - 1, where)
        except ConfigError as exc:
            raise DataError(str(exc)) from None
        if e.id in seen:
            raise DataError(f"{where}: id {e.id!r} was given on line {seen[e.id]} too; ids must be unique")
        seen[e.id] = lineno
        out.append(e)
    return out


def as_examples(items: Sequence) -> list:
    """``items`` with each plain string or ``(premise, hypothesis)`` pair made an :class:`Example` (ids by position);
    anything else as it is (what :meth:`Task.check_examples <interp.tasks.base.Task.check_examples>` then checks)."""
    return [examples([x], ids=[f"own:{i + 1}"])[0] if isinstance(x, str) or _is_pair(x) else x for i, x in enumerate(items)]


def _is_pair(x) -> bool:
    return isinstance(x, tuple) and len(x) == 2 and all(isinstance(s, str) for s in x)


def _each(given, n: int, name: str, one: bool = False) -> list:
    if given is None:
        return [None] * n
    if one:
        return [given] * n
    if isinstance(given, (str, bytes)) or not isinstance(given, Sequence) or len(given) != n:
        raise ConfigError(f"{named(name)} must be a list of {n} (one per example), got {given!r:.80}")
    return list(given)


def _record(item, i: int) -> dict:
    """``item`` as a dict of :data:`FIELDS` (``roles``: role -> word, span or index, whichever way each was given)."""
    if isinstance(item, Example):
        roles = {**item.words, **{r: tuple(s) for r, s in item.spans.items()}, **item.tokens}
        return {"premise": item.premise, "hypothesis": item.hypothesis, "label": item.label, "values": dict(item.values), "id": item.id, "roles": roles}
    if isinstance(item, str):
        return {"premise": item}
    if _is_pair(item) or (isinstance(item, list) and len(item) == 2):
        return {"premise": item[0], "hypothesis": item[1]}
    if isinstance(item, Mapping):
        record = {k: v for k, v in item.items() if k not in ("words", "spans", "tokens")}
        roles = {}
        for key, convert in (("words", str), ("spans", tuple), ("tokens", int)):
            given = item.get(key) or {}
            if not isinstance(given, Mapping):
                raise ConfigError(f"{named('pairs')} item {i}: {key!r} must map a role to a {'word' if key == 'words' else 'span' if key == 'spans' else 'token index'}")
            roles.update({role: spec if isinstance(spec, bool) else convert(spec) if isinstance(spec, (str, int, list, tuple)) else spec
                          for role, spec in given.items()})  # fmt: skip
        return {**record, "roles": roles}
    raise ConfigError(f"{named('pairs')} item {i} is a {type(item).__name__}; give a string, a (premise, hypothesis) pair or a mapping")


def _example(record: dict, i: int, where: str) -> Example:
    premise, hypothesis = record.get("premise"), record.get("hypothesis", "")
    if not isinstance(premise, str) or not isinstance(hypothesis, str):
        raise ConfigError(f"{where}: premise and hypothesis must be strings")
    label, values, ident = record.get("label"), record.get("values") or {}, record.get("id", f"own:{i + 1}")
    if label is not None and not isinstance(label, str):
        raise ConfigError(f"{where}: label must be a string, got {label!r}")
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where}: values must map the causal model's input variables to values, got {values!r:.60}")
    if not isinstance(ident, str) or not ident:
        raise ConfigError(f"{where}: id must be a non-empty string, got {ident!r}")
    words, spans, tokens = {}, {}, {}
    for role, spec in record.get("roles", {}).items():
        if role == "cls":
            raise ConfigError(f"{where}: role 'cls' is the token the classifier reads; it needs no word")
        if isinstance(spec, int) and not isinstance(spec, bool):
            tokens[role], words[role] = spec, f"<token {spec}>"
            continue
        try:
            sentence = (premise, hypothesis)[role_segment(role)]
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if isinstance(spec, str):
            found = word_spans(spec, sentence)
            if len(found) != 1:
                said = "does not occur" if not found else f"occurs {len(found)} times (give its span, (start, end))"
                raise ConfigError(f"{where}: role {role} {spec!r} {said} as a whole word in {sentence!r}")
            words[role] = spec
        elif isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in spec):
            start, end = spec
            if not 0 <= start < end <= len(sentence):
                raise ConfigError(f"{where}: role {role} span {spec} is not inside {sentence!r} (0..{len(sentence)})")
            spans[role], words[role] = (start, end), sentence[start:end]
        else:
            raise ConfigError(f"{where}: role {role} must be given by a word, a (start, end) span or a token index, got {spec!r}")
    return Example(premise, hypothesis, words, spans, tokens, label, dict(values), ident)


#: The field that says a data file's kind, in the order they are looked for: MoNLI's, MQNLI's (``interp mqnli``),
#: a generated fragment's, then ``premise`` alone, an example of one's own.
KINDS = (("sentence1", "monli"), ("premise_words", "mqnli"), ("premise", "own"))


def data_file_kind(path: str | os.PathLike) -> str:
    """What kind of data file ``path`` is, from the fields of its first non-blank line: ``monli`` (``sentence1``),
    ``mqnli`` (``premise_words``), or ``own`` (``premise``: examples of one's own, :func:`read_examples`); a UTF-8
    byte-order mark is read past. Anything else is named: a generated file of another kind is read by its own
    task (``--task``), which checks it.

    Raises:
        DataError: naming the file: missing, unreadable, not UTF-8, empty or blank, a first line that is not a JSON
            object, or an object with none of the fields that say a kind.
    """
    import json

    path = Path(path)
    try:
        with open(path, encoding="utf-8-sig") as handle:
            first, lineno = "", 0
            for lineno, line in enumerate(handle, 1):
                if line.strip():
                    first = line
                    break
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise DataError(f"{path}: a folder, not a data file") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not UTF-8 text; a data file is JSON lines in UTF-8") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or type(exc).__name__})") from None
    if not first:
        raise DataError(f"{path}: empty file, no examples")
    try:
        record = json.loads(first)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}:{lineno}: not JSON ({str(exc).split(':')[0][:80]}); a data file holds one JSON object a line") from None
    if not isinstance(record, dict):
        raise DataError(f"{path}:{lineno}: a JSON {'array' if isinstance(record, list) else type(record).__name__}, not one object a line")
    for field_name, kind in KINDS:
        if field_name in record:
            return kind
    return "other"


def is_own_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file of one's own examples (:func:`data_file_kind` is ``own``); ``False`` where it cannot
    be read (its reader names why)."""
    try:
        return data_file_kind(path) == "own"
    except DataError:
        return False


def own_task(task, path: str | os.PathLike):
    """``task`` reading a JSON-lines file of one's own (:func:`read_examples`) as its one split, ``own``: its labels,
    roles, variables and causal model kept (applied where an example gives :attr:`Task.own_values
    <interp.tasks.base.Task.own_values>`), its released splits, trainings and demo plan left out; intervals over
    the task's groups where every example has what they need, else over examples."""
    from dataclasses import replace

    def load(splits):
        return [task.adopt(e) for e in read_examples(path)] if OWN_SPLIT in splits else []

    groups = task.groups
    if groups is not None:
        safe = groups.key

        def key(e):
            try:
                return safe(e)
            except Exception:  # noqa: BLE001 - an example without the roles the task's groups read is its own group
                return e.id

        groups = type(groups)(groups.unit, key)  # the task's Groups, its key made total
    return replace(task, splits=(OWN_SPLIT,), load=load, default_splits=(OWN_SPLIT,), train_splits=(), extra_splits=(), behavioral=None,
                   demo=None, eval_splits=(), stable_ids=False, groups=groups)  # fmt: skip
