"""Interchange interventions of an example set, read against the task's causal model: the one implementation behind
:meth:`IntervenableModel.interchange <interp.api.intervenable.IntervenableModel.interchange>`.

Usage::

    every = lab.bind(examples)                        # an ExampleSet holding the bases and the sources
    result = interchange(every, bases, sources, loc, variables=("lexrel",))
    found = interchange_set(every, bases, sources, [loc_a, loc_b], variables=("lexrel",))

The interchange intervention (Geiger, Richardson & Potts 2020, §6.2), or with ``intervention`` any module of
:mod:`interp.engine.interventions` (a trained DAS subspace: Geiger et al. 2024, §3). The set's runner runs it
(:mod:`interp.backends`): a vanilla interchange writes each source's vector as the set reads it
(:meth:`~interp.api.example_set.ExampleSet.vectors`, whose passes also give the model's own predictions), a module
runs through the set's pair runner, and ``naive=True`` takes the runner's one-pass-per-pair reference instead.
"""

from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import torch

from interp.api.evaluation import split_accuracies
from interp.api.example_set import ExampleSet
from interp.api.interventions_file import counterfactuals, file_meta, variable_values
from interp.api.results import InterchangeResult, InterchangeSet
from interp.core.errors import ConfigError, InterpWarning
from interp.engine.interventions import Interchange, Intervention
from interp.hooks.encoding import location_tokens
from interp.hooks.locations import Location


def interchange(every: ExampleSet, bases: Sequence, sources: Sequence, location: Location, *, variables: Sequence[str],
                intervention: Intervention | None = None, naive: bool = False, batch_size: int | None = None) -> InterchangeResult:  # fmt: skip
    """Every base of ``every`` run with its vector at ``location`` replaced, for every source (both among ``every``'s
    examples, checked by the caller), read against the causal model's counterfactuals on ``variables``.

    Raises:
        ConfigError: a location an example lacks, token counts that differ, an intervention of another width, or a
            trained intervention at a component site.
    """
    runner = every.binding.runner
    config = every.binding.model.module.config
    base_rows, source_rows = every.rows(bases), every.rows(sources)
    base_enc, source_enc = [every.encoded[i] for i in base_rows], [every.encoded[i] for i in source_rows]
    tokens = location_tokens(base_enc + source_enc, location.roles, f"`bases=`, `sources=` at location {location}")
    width = len(tokens[0]) * location.token_width(config)
    vanilla = intervention is None or isinstance(intervention, Interchange)
    if not vanilla and intervention.width != width:
        raise ConfigError(f"`intervention=`: its width {intervention.width} is not location {location}'s {width}")
    rows = torch.tensor(base_rows).repeat_interleave(len(sources))
    cols = torch.tensor(source_rows).repeat(len(bases))
    own = None
    if naive:
        reference = runner.reference()
        if vanilla:
            logits = reference.interchange_logits(base_enc, reference.vectors(source_enc, location), location)
        else:
            logits = reference.pairs(every.encoded, location).logits(rows, cols, intervention.eval()).view(len(bases), len(sources), -1)
        own = reference.predict(every.encoded)
    elif vanilla:
        logits = runner.interchange_logits(base_enc, every.vectors(location)[source_rows], location, batch_size=batch_size)
    else:
        pairs = every.pairs(location)
        intervention.to(pairs.vectors.device).eval()
        with torch.no_grad():
            logits = pairs.logits(rows, cols, intervention, batch_size).view(len(bases), len(sources), -1)
    return result_of_logits(every, bases, sources, location, variables, logits.detach().float().cpu(), own)


def result_of_logits(every: ExampleSet, bases: Sequence, sources: Sequence, location: Location, variables: Sequence[str], logits: torch.Tensor,
            own_logits: torch.Tensor | None) -> InterchangeResult:  # fmt: skip
    """The result of ``logits`` ``[bases, sources, n_model_labels]``: the model's own predictions (``own_logits`` on
    ``every``, else the set's), the counterfactuals and every variable's values; a warning where a split is at chance."""
    binding = every.binding
    labels = tuple(binding.task.labels)
    own = every.own_labels() if own_logits is None else binding.reading.predict(own_logits)
    split_accuracies(binding, list(every.examples), own)
    base_rows, source_rows = every.rows(bases), every.rows(sources)
    causal_pred = counterfactuals(every, bases, sources, variables)  # first: it names an example of one's own without values
    return InterchangeResult(
        location=location, labels=labels, base_ids=tuple(e.id for e in bases), source_ids=tuple(e.id for e in sources), logits=logits,
        base_pred=own[base_rows], source_pred=own[source_rows], base_label=np.array([labels.index(e.label) for e in bases], dtype=np.int8),
        causal_pred=causal_pred, values=variable_values(every, bases),
        source_values=variable_values(every, sources), meta=file_meta(every, variables, [location], unit_size=len(bases)),
        read=binding.reading.read, examples=every.table().rows(base_rows), model=binding.model.identity(),
        source_groups=every.table().rows(source_rows).groups,
    )  # fmt: skip


def interchange_set(every: ExampleSet, bases: Sequence, sources: Sequence, locations: Sequence[Location], **options) -> InterchangeSet:
    """:func:`interchange` at each of ``locations``, gathered in one :class:`~interp.api.results.InterchangeSet` that
    saves into one file; a split at chance is warned of once, not once per location.

    Raises:
        ConfigError: as :func:`interchange`; a location named twice.
    """
    results: dict[str, InterchangeResult] = {}
    with warnings.catch_warnings():
        for i, location in enumerate(locations):
            if i == 1:
                warnings.simplefilter("ignore", InterpWarning)
            if str(location) in results:
                raise ConfigError(f"`location={location}` is named twice")
            results[str(location)] = interchange(every, bases, sources, location, **options)
    return InterchangeSet(results)
