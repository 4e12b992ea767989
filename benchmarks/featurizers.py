"""Featurizer interchanges through the engine against pyvene's equivalent interventions: the same model, pairs and features.

    .venv/bin/python benchmarks/featurizers.py --model minilm --location blocks.3.hook_resid_post@w_h --examples 48

Three featurizers of MIB's causal variable track, each interchanging the same features on every (base, source) pair
of ``--examples`` MoNLI examples (PMoNLI and NMoNLI test, seeded), at one location of a BERT classifier:

* DAS's features, the first ``--k`` columns of a seeded rotation: interp's
  :class:`~interp.engine.featurizers.ChosenFeatures` over :meth:`LinearBasis.from_rotation
  <interp.engine.featurizers.LinearBasis.from_rotation>` against pyvene's ``LowRankRotatedSpaceIntervention`` holding
  the same ``width × k`` basis;
* DBM over the neurons with a hard mask (a seeded half of them): interp's :class:`~interp.engine.featurizers.FeatureMask`
  in evaluation against pyvene's ``SigmoidMaskIntervention`` with the mask at ±20 and its temperature 0.01, where its
  sigmoid is exactly 0 or 1 in float32;
* PCA on standardized activations (interp's :func:`~interp.analysis.featurizers.fit_pca` on twice the width in
  examples, so every component is kept: pyvene's PCA drops what its components do not span), its first ``--k``
  components interchanged: interp's ``ChosenFeatures`` against pyvene's ``PCARotatedSpaceIntervention`` given
  the same components, mean and scale.

interp runs its batched engine (each example's prefix up to the location once, the suffix batched); pyvene runs each
batch of pairs through the whole model, base and source, padded with their attention masks, as its tutorials do
(:mod:`benchmarks.das`' harness). Reported: pairs/s of each arm, the ratio, the largest logit difference and whether the
labels agree on every pair. pyvene 0.1.8 is a benchmark extra (``pip install --no-deps pyvene``); without it the pyvene
arms are skipped and said so. The model is frozen; a model with no classification head gets a seeded random one.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from types import SimpleNamespace

import torch

import interp
from interp.analysis.featurizers import fit_pca
from interp.engine.featurizers import ChosenFeatures, FeatureMask, Identity, LinearBasis
from interp.engine.interventions import RotatedSubspace
from interp.hooks.encoding import collate


def pyvene_arm(module, layer: int, intervention):
    """pyvene's ``IntervenableModel`` around ``module`` with ``intervention`` at block ``layer``'s output, frozen."""
    import pyvene as pv
    from transformers import BertForSequenceClassification

    pv.type_to_module_mapping[BertForSequenceClassification] = {"block_output": ("bert.encoder.layer[%s]", pv.models.constants.CONST_OUTPUT_HOOK)}
    pv.type_to_dimension_mapping[BertForSequenceClassification] = {"block_output": ("hidden_size",)}
    wrapped = pv.IntervenableModel({"layer": layer, "component": "block_output", "unit": "pos", "intervention": intervention}, model=module)
    wrapped.disable_model_gradients()
    return wrapped


@torch.no_grad()
def pyvene_logits(wrapped, encoded, role: str, batch: int) -> torch.Tensor:
    """Every (base, source) pair's logits from pyvene, ``batch`` pairs a call: float ``[bases, sources, labels]``."""
    n = len(encoded)
    pairs = [(b, s) for b in range(n) for s in range(n)]
    keys = ("input_ids", "token_type_ids", "attention_mask")
    out = []
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        base = collate([encoded[b] for b, _ in chunk], 0)
        source = collate([encoded[s] for _, s in chunk], 0)
        positions = ([[[int(p)] for p in source["positions"][role]]], [[[int(p)] for p in base["positions"][role]]])
        _, result = wrapped({k: base[k] for k in keys}, [{k: source[k] for k in keys}], {"sources->base": positions})
        out.append(result.logits)
    return torch.cat(out).reshape(n, n, -1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--location", default="blocks.3.hook_resid_post@w_h")
    parser.add_argument("--examples", type=int, default=48, help="examples; every ordered pair of them is interchanged")
    parser.add_argument("--k", type=int, default=16)
    parser.add_argument("--batch", type=int, default=256, help="pairs per pyvene call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=interp.InterpWarning)  # a random head is at chance: timing, not a finding
    warnings.filterwarnings("ignore", category=UserWarning, module="pyvene")
    torch.manual_seed(args.seed)
    task = interp.load_task("monli")
    model = interp.load_model(args.model, labels=task.labels)
    lab = interp.IntervenableModel(model, task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=args.examples // 2, seed=args.seed)
    loc = lab.location(args.location)
    vectors = lab.source_vectors(examples, loc)
    width = vectors.shape[1]
    rotation = RotatedSubspace(width, args.k, seed=args.seed).matrix.detach()
    fitting = task.examples(("pmonli", "nmonli_test"), per_split=max(width, args.examples), seed=args.seed + 1)
    pca = fit_pca(lab.source_vectors(fitting, loc))  # on more examples than the width: every component, no residual
    half = torch.randperm(width, generator=torch.Generator().manual_seed(args.seed))[: width // 2]
    hard = torch.full((width,), -20.0).index_fill_(0, half, 20.0)
    dbm = FeatureMask(Identity(width)).eval()
    with torch.no_grad():
        dbm.mask.copy_(hard)
    first_k = torch.arange(width) < args.k
    arms = {
        "DAS features (k first of a rotation)": (ChosenFeatures(LinearBasis.from_rotation(rotation), first_k), "rotation"),
        "DBM over neurons (hard mask, half)": (dbm, "mask"),
        "PCA, first k components": (ChosenFeatures(pca, first_k), "pca"),
    }
    try:
        import pyvene as pv
    except ImportError:
        pv = None
        print("pyvene is not installed (pip install --no-deps pyvene): its arms are skipped")
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"model {args.model}, location {loc} (width {width}), {len(examples)} examples: {len(examples) ** 2} pairs, k {args.k}")
    encoded = lab.encode(examples)
    for name, (intervention, kind) in arms.items():
        lab.interchange_logits(examples[:2], examples[:2], loc)  # warm
        started = time.perf_counter()
        ours = lab.interchange(examples, examples, loc, intervention=intervention).logits
        seconds = time.perf_counter() - started
        line = f"{name}: interp {len(examples) ** 2 / seconds:,.1f} pairs/s"
        if pv is not None:
            if kind == "rotation":
                theirs = pv.LowRankRotatedSpaceIntervention(embed_dim=width, low_rank_dimension=args.k)
                with torch.no_grad():
                    theirs.rotate_layer.weight = rotation[:, : args.k].clone()
            elif kind == "mask":
                theirs = pv.SigmoidMaskIntervention(embed_dim=width)
                with torch.no_grad():
                    theirs.mask.copy_(hard)
            else:
                theirs = pv.PCARotatedSpaceIntervention(embed_dim=width, pca=SimpleNamespace(components_=pca.basis.T.numpy()),
                                                        pca_mean=pca.mean.numpy(), pca_std=pca.scale.numpy())  # fmt: skip
                theirs.set_interchange_dim(args.k)
            wrapped = pyvene_arm(model.module, loc.hidden_index - 1, theirs)
            started = time.perf_counter()
            reference = pyvene_logits(wrapped, encoded, loc.roles[0], args.batch)
            theirs_seconds = time.perf_counter() - started
            same = bool((reference.argmax(-1) == ours.argmax(-1)).all())
            line += (f", pyvene {len(examples) ** 2 / theirs_seconds:,.1f} pairs/s: {theirs_seconds / seconds:.1f}x pyvene; "
                     f"largest logit difference {(reference - ours).abs().max():.2e}, labels equal on every pair: {same}")  # fmt: skip
        print(line)


if __name__ == "__main__":
    main()
