"""interp: mechanistic interpretability of NLI models, from one import.

Does a model get the right answers *the way a symbolic algorithm does*?
``interp`` caches activations, probes them with controlled selectivity, runs
interchange interventions and distributed alignment search (DAS) against a
causal model, and searches the intervention graph for cliques (Geiger,
Richardson & Potts 2020; Geiger et al. 2024).

Usage::

    import interp
    lab = interp.IntervenableModel("runs/demo/model", "monli")          # a model and a task, bound once
    examples = lab.task.examples(("pmonli", "nmonli_test"), per_split=50)
    X = lab.vectors(examples, "blocks.2.hook_resid_post@w_h")           # float32 [n, tokens, d_model]
    res = lab.interchange(examples, examples, "blocks.2.hook_resid_post@w_h")
    res.iia("lexrel"), res.summary("lexrel"), res.cliques("lexrel"), res.to_frame()
    res.save("iv.h5"); interp.load_interventions("iv.h5")
    das = lab.train_das(examples, "blocks.2.hook_resid_post@w_h", "lexrel", k=16)
    y = lab.task.values(lab.task.build_causal_model(examples), examples, "lexrel").codes
    interp.Probe(hidden_units=4).fit(X[:, 0].numpy(), y)                # scikit-learn's contract

The design. The public face is this module, and it has no logic of its own:
each name below is one object of a layer beneath (``interp.api`` binds them).
Strings (a model name, a task name, a location) are resolved into objects
once, by :func:`load_model`, :func:`load_task` and
:meth:`IntervenableModel.location`; every other call takes the objects (and
the string only as a convenience). Results are objects with named fields
(tensors, arrays) and a pandas view; writing a file is their ``save``
method. The command line (``interp --help``) runs the same calls unit by
unit, persisting and resuming; every job that reads a task and runs a
model holds the same three settings objects, :class:`DataSpec` (which
task), :class:`SampleSpec` (which examples) and :class:`RunSpec` (device,
batch size, WordPiece rule, backend), names its output ``out``, and takes a
task or a model held in memory as well as a name. Names are the field's: base and source,
location, interchange intervention, IIA, causal model, variable, probe,
control task, selectivity, subspace (pyvene's ``IntervenableModel`` is the
model of the bound object).

Importing this package loads no model, reads no file, and imports neither
torch nor transformers: each name is imported on first use.
"""

from __future__ import annotations

import importlib

from interp.core.errors import ConfigError, DataError, InterpError, InterpWarning, ModelError, OutputError

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported on first access, PEP 562).
_EXPORTS = {
    # loading and binding
    "load_model": "interp.api.loading",
    "load_task": "interp.api.loading",
    "Classifier": "interp.api.loading",
    "LabelReading": "interp.models.labels",
    "read_labels": "interp.models.labels",
    "IntervenableModel": "interp.api.intervenable",
    "ExampleSet": "interp.api.example_set",
    "get_runner": "interp.backends",
    "InterchangeResult": "interp.api.results",
    "InterchangeSet": "interp.api.results",
    "load_interventions": "interp.api.results",
    "DasResult": "interp.api.das_result",
    "JointResult": "interp.api.joint",
    "JointDasResult": "interp.api.joint_das",
    "EffectResult": "interp.api.effects",
    "ablation_effect": "interp.api.effects",
    "steering_effect": "interp.api.effects",
    # figures with their uncertainty
    "Estimate": "interp.core.estimates",
    "ExampleBootstrap": "interp.analysis.bootstrap",
    "split_accuracies": "interp.analysis.chance",
    "fine_tune": "interp.api.training",
    "FineTuneSettings": "interp.models.settings",
    # the settings every job shares: which data, which examples, how to run
    "DataSpec": "interp.api.specs",
    "SampleSpec": "interp.api.specs",
    "RunSpec": "interp.api.specs",
    # examples of one's own: any sentences, their roles by word, span or token index
    "Example": "interp.tasks.own",
    "examples": "interp.tasks.own",
    "read_examples": "interp.tasks.own",
    # tasks and causal models
    "Task": "interp.tasks.base",
    "Groups": "interp.tasks.base",
    "VariableValues": "interp.causal.values",
    "CausalModel": "interp.causal.base",
    "Mechanism": "interp.causal.base",
    "run_forward": "interp.causal.base",
    "run_interchange": "interp.causal.base",
    # where vectors live
    "Location": "interp.hooks.locations",
    "hooked": "interp.hooks.context",
    # intervention modules: forward(base, source)
    "Intervention": "interp.engine.interventions",
    "Interchange": "interp.engine.interventions",
    "CoordinateBlock": "interp.engine.interventions",
    "RotatedSubspace": "interp.engine.interventions",
    "LowRankSubspace": "interp.engine.interventions",
    "BoundlessSubspace": "interp.engine.interventions",
    # featurizers: invertible maps at a location, and DBM's mask over their features (MIB's causal variable track)
    "Featurizer": "interp.engine.featurizers",
    "Identity": "interp.engine.featurizers",
    "LinearBasis": "interp.engine.featurizers",
    "SparseAutoencoder": "interp.engine.featurizers",
    "FeatureMask": "interp.engine.featurizers",
    "ChosenFeatures": "interp.engine.featurizers",
    "fit_pca": "interp.analysis.featurizers",
    "train_sae": "interp.analysis.featurizers",
    "save_sae": "interp.files.saes",
    "load_sae": "interp.files.saes",
    # localizing a variable (interp.jobs.localize): MIB's submission layout, the re-initialised control
    "write_mib_unit": "interp.files.mib",
    "read_mib_unit": "interp.files.mib",
    "reinitialised": "interp.api.loading",
    # probes and their control tasks
    "Probe": "interp.analysis.probes.estimators",
    "TypeControl": "interp.analysis.probes.controls",
    "ShuffleControl": "interp.analysis.probes.controls",
    # the intervention graph and its cliques
    "InterventionGraph": "interp.analysis.cliques.graph",
    "build_graph": "interp.analysis.cliques.graph",
    "search_cliques": ("interp.analysis.cliques.search", "search"),
    # the report page of a run folder
    "write_report": "interp.analysis.report.page",
    "ReportConfig": "interp.analysis.report.page",
    # saving and loading trained interventions
    "save_intervention": "interp.files.subspaces",
    "load_trained_intervention": "interp.files.subspaces",
}

#: Names of earlier releases, still served (each warns when called) but not in ``__all__``.
_DEPRECATED = {"load_intervention": "interp.files.subspaces"}

__all__ = sorted([*_EXPORTS, "ConfigError", "DataError", "InterpError", "InterpWarning", "ModelError", "OutputError", "__version__"])


def __getattr__(name: str):
    target = _EXPORTS.get(name) or _DEPRECATED.get(name)
    if target is None:
        raise AttributeError(f"module 'interp' has no attribute {name!r}")
    module, attribute = target if isinstance(target, tuple) else (target, name)
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
