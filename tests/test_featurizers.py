"""Featurizers (the full vector, a DAS rotation, PCA, a sparse autoencoder) and DBM's feature mask: each keeps its three
invariants (no features interchanged is the base run, every feature the source's vector, the fast path the naive loop)
on an encoder and a decoder; the interchange equals forward hooks written by hand; SAELens's folder layout round-trips
and a bad SAE is refused naming its file."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

import interp
from interp.analysis.featurizers import fit_pca, reconstruction, train_sae
from interp.core.errors import ConfigError, DataError, OutputError
from interp.engine.featurizers import ChosenFeatures, FeatureMask, Identity, LinearBasis, SparseAutoencoder, featurizer_from
from interp.engine.interventions import Interchange, RotatedSubspace, make_intervention
from interp.files.saes import load_sae, save_sae

from hand_hooks import by_hand

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

SITE = "blocks.0.hook_resid_post@w_h"
KINDS = ("identity", "rotation", "pca", "sae")


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=40, seed=5)


@pytest.fixture(scope="module")
def lab(lab_of_each_kind):
    return lab_of_each_kind


def featurizer(kind: str, vectors: torch.Tensor):
    """One featurizer of ``kind`` for vectors like ``vectors`` (float [n, width]), fitted on them where it is fitted."""
    width = vectors.shape[1]
    if kind == "identity":
        return Identity(width)
    if kind == "rotation":
        return LinearBasis.from_rotation(RotatedSubspace(width, 4, seed=2).matrix.detach())
    if kind == "pca":
        return fit_pca(vectors)
    return train_sae(vectors, 4 * width, k=8, epochs=3, seed=0)


@pytest.fixture(scope="module")
def fitted(lab, examples):
    vectors = lab.source_vectors(examples, SITE)
    return vectors, {kind: featurizer(kind, vectors) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
def test_every_featurizer_keeps_its_invariants_on_the_models_vectors(fitted, kind):
    vectors, made = fitted
    f = made[kind]
    base, source = vectors[:20], vectors[20:40]
    features, error = f.featurize(base)
    assert features.shape == (20, f.n_features) and error.shape == base.shape
    assert torch.allclose(f.inverse(features, error), base, atol=1e-6, rtol=0)  # the round trip
    none = torch.zeros(f.n_features, dtype=torch.bool)
    assert torch.allclose(f.interchange(base, source, none), base, atol=1e-6, rtol=0)  # no features: the base
    assert torch.allclose(f.interchange(base, source, None), source, atol=1e-6, rtol=0)  # every feature: the source
    some = torch.arange(f.n_features) % 3 == 0
    mixed = f.interchange(base, source, some)
    assert (mixed - base).abs().max() > 1e-3 and (mixed - source).abs().max() > 1e-3  # the null: a part moves part-way


def test_the_lossy_featurizer_carries_what_it_cannot_rebuild(fitted):
    vectors, made = fitted
    sae = made["sae"]
    fit = reconstruction(sae, vectors)
    assert fit["l0"] <= 8 + 1e-6 and fit["fve"] < 0.999  # a TopK-8 SAE rebuilds only part of each vector
    _, error = sae.featurize(vectors)
    assert error.norm(dim=-1).mean() > 1e-2  # the error is real, and the invariants above held through it
    assert reconstruction(made["pca"], vectors)["fve"] > 1 - 1e-4  # every component kept: PCA spans the space


def _hand_logits(lab, examples, bases, sources, write):
    """Logits of each (base, source) with ``write(base vector, source vector)`` written at SITE by a hook by hand."""
    loc = lab.location(SITE)
    vectors = lab.source_vectors(examples, loc).double()
    encoded = lab.encode(examples)
    out = []
    for b in bases:
        row = []
        for s in sources:
            enc = encoded[b]
            types = list(enc.token_type_ids) if lab.model.template is None else None
            vector = write(vectors[b], vectors[s]).float()
            _, logits = by_hand(lab.model.module, enc.input_ids, types, writes=[(loc.hidden_index - 1, enc.positions[loc.roles[0]], vector)])
            row.append(logits)
        out.append(torch.stack(row))
    return torch.stack(out)


@pytest.mark.parametrize("kind", KINDS)
def test_a_feature_interchange_through_the_model_keeps_the_invariants_and_equals_hooks_by_hand(lab, examples, fitted, kind):
    _, made = fitted
    f = made[kind]
    bases, sources = examples[:4], examples[4:9]
    plain = lab.predict(bases)
    none = lab.interchange(bases, sources, SITE, intervention=ChosenFeatures(f, torch.zeros(f.n_features)))
    assert torch.allclose(none.logits, plain[:, None].expand_as(none.logits), atol=1e-5)  # the base run
    every = lab.interchange(bases, sources, SITE, intervention=ChosenFeatures(f))
    vanilla = lab.interchange(bases, sources, SITE, intervention=Interchange(f.width))
    assert torch.allclose(every.logits, vanilla.logits, atol=1e-5)  # the source's vector
    chosen = torch.arange(f.n_features) % 2 == 1
    some = ChosenFeatures(f, chosen)
    fast = lab.interchange(bases, sources, SITE, intervention=some)
    naive = lab.interchange(bases, sources, SITE, intervention=some, naive=True)
    assert torch.allclose(fast.logits, naive.logits, atol=1e-5)  # the fast path is the naive loop
    reference = copy.deepcopy(f).double()  # the formula in float64, on a copy
    by_hand_ = _hand_logits(lab, examples, range(4), range(4, 9), lambda b, s: reference.interchange(b, s, chosen))
    assert torch.allclose(fast.logits, by_hand_.to(fast.logits.dtype), atol=1e-5)
    assert (fast.logits - plain[:, None]).abs().max() > 1e-4  # the null: the written features move the logits


def test_a_dbm_mask_is_soft_in_training_hard_in_evaluation_and_penalized_by_its_l1(fitted):
    vectors, made = fitted
    dbm = FeatureMask(made["pca"], l1=1e-3)
    base, source = vectors[:6], vectors[6:12]
    dbm.eval()
    assert dbm.k == 0 and torch.allclose(dbm(base, source), base, atol=1e-6)  # σ(0) = 0.5 is not > 0.5: nothing taken
    with torch.no_grad():
        dbm.mask.fill_(4.0)
    assert dbm.k == dbm.featurizer.n_features and torch.allclose(dbm(base, source), made["pca"].interchange(base, source, torch.ones(dbm.k)), atol=1e-6)
    dbm.train()
    dbm.temperature.fill_(1.0)
    soft = dbm(base, source)
    assert not torch.allclose(soft, dbm.eval()(base, source), atol=1e-4)  # σ(4) < 1: the soft mask mixes
    assert dbm.penalty().item() == pytest.approx(1e-3 * dbm.featurizer.n_features * torch.sigmoid(torch.tensor(4.0)).item(), rel=1e-5)
    assert all(not p.requires_grad for p in dbm.featurizer.parameters()) and dbm.mask.requires_grad  # only the mask learns


@pytest.mark.parametrize("kind", KINDS)
def test_a_dbm_mask_saves_and_loads_with_its_featurizer(fitted, kind, tmp_path):
    from interp.files.subspaces import load_trained_intervention, save_intervention

    _, made = fitted
    dbm = FeatureMask(made[kind], l1=1e-4)
    with torch.no_grad():
        dbm.mask.copy_(torch.linspace(-2, 2, dbm.featurizer.n_features))
    dbm.eval()
    path = save_intervention(dbm, tmp_path / "mask", {"task": "monli", "variable": "lexrel", "location": SITE})
    back, meta = load_trained_intervention(path)
    assert isinstance(back, FeatureMask) and back.featurizer.kind == dbm.featurizer.kind and back.l1 == dbm.l1
    x, y = torch.randn(3, dbm.width), torch.randn(3, dbm.width)
    assert torch.allclose(back.eval()(x, y), dbm(x, y), atol=1e-6) and back.k == dbm.k


def test_a_dbm_mask_is_what_make_intervention_gives_over_the_neurons():
    dbm = make_intervention("dbm", 12)
    assert isinstance(dbm, FeatureMask) and isinstance(dbm.featurizer, Identity) and dbm.trainable and not dbm.sized


def test_an_sae_round_trips_through_saelens_folder_layout(fitted, tmp_path):
    vectors, made = fitted
    sae = made["sae"]
    folder = save_sae(sae, tmp_path / "sae", {"hook_name": SITE})
    config = json.loads((folder / "cfg.json").read_text())
    assert config["d_in"] == sae.width and config["d_sae"] == sae.n_features and config["architecture"] == "topk" and config["k"] == 8
    back = load_sae(folder, width=sae.width)
    assert torch.allclose(back.featurize(vectors)[0], sae.featurize(vectors)[0], atol=1e-6)
    with pytest.raises(OutputError, match="already exists"):
        save_sae(sae, folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sae"]  # nothing half-written beside it


def _spoiled(folder, tmp_path, name, *, config=None, tensors=None):
    target = tmp_path / name
    target.mkdir()
    cfg = json.loads((folder / "cfg.json").read_text())
    (target / "cfg.json").write_text(json.dumps({**cfg, **(config or {})}))
    from safetensors.torch import load_file

    weights = {**load_file(str(folder / "sae_weights.safetensors")), **(tensors or {})}
    save_file({k: v for k, v in weights.items() if v is not None}, str(target / "sae_weights.safetensors"))
    return target


@pytest.mark.parametrize("spoil, says", [
    (dict(config={"architecture": "jumprelu"}), "architecture 'jumprelu' is not read here"),
    (dict(config={"d_in": 7}), "W_enc has shape"),
    (dict(tensors={"b_dec": None}), "no tensor 'b_dec'"),
    (dict(tensors={"W_dec": torch.full((1, 1), float("nan"))}), "W_dec has shape"),
    (dict(config={"normalize_activations": "expected_average_only_in"}), "normalize_activations"),
    (dict(config={"k": "eight"}), "field 'k' must be an int"),
])  # fmt: skip
def test_a_bad_sae_folder_is_refused_naming_its_file(fitted, tmp_path, spoil, says):
    folder = save_sae(fitted[1]["sae"], tmp_path / "good")
    bad = _spoiled(folder, tmp_path, "bad", **spoil)
    with pytest.raises(DataError, match=says) as caught:
        load_sae(bad)
    assert str(bad) in str(caught.value) and "\n" not in str(caught.value)


def test_an_sae_of_the_wrong_width_or_with_non_finite_weights_is_refused(fitted, tmp_path):
    sae = fitted[1]["sae"]
    folder = save_sae(sae, tmp_path / "good")
    with pytest.raises(DataError, match=rf"reads {sae.width}-wide vectors \(d_in\); the location is {sae.width + 1} wide"):
        load_sae(folder, width=sae.width + 1)
    nan = sae.W_enc.detach().clone()
    nan[0, 0] = float("nan")
    with pytest.raises(DataError, match="W_enc holds a NaN or an infinity"):
        load_sae(_spoiled(folder, tmp_path, "nan", tensors={"W_enc": nan}))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="cfg.json: not found"):
        load_sae(tmp_path / "empty")


@pytest.mark.parametrize("make, says", [
    (lambda: LinearBasis(torch.ones(4, 2)), "does not have orthonormal columns"),
    (lambda: LinearBasis(torch.eye(4), scale=torch.zeros(4)), "scale must be positive"),
    (lambda: LinearBasis(torch.eye(4), mean=torch.zeros(3)), "mean has 3 entries"),
    (lambda: SparseAutoencoder(torch.zeros(4, 8), torch.zeros(8), torch.zeros(8, 5), torch.zeros(4)), r"W_dec has shape \(8, 5\)"),
    (lambda: SparseAutoencoder(torch.zeros(4, 8), torch.zeros(8), torch.zeros(8, 4), torch.zeros(4), "topk", 9), "k in 1..8"),
    (lambda: Identity(4).interchange(torch.zeros(2, 4), torch.zeros(2, 4), torch.ones(3)), "mask of the 4 features"),
    (lambda: ChosenFeatures.indices(Identity(4), [0, 4]), r"indices must lie in 0\.\.3"),
    (lambda: FeatureMask(Identity(4), l1=-1.0), "l1 = -1.0"),
    (lambda: fit_pca(torch.zeros(1, 4)), "n >= 2"),
    (lambda: fit_pca(torch.randn(10, 4), n_components=5), "at most min"),
    (lambda: train_sae(torch.randn(10, 4), 8, k=9), "at most n_features"),
    (lambda: featurizer_from({"kind": "nope"}, {}), "featurizer kind must be one of"),
])  # fmt: skip
def test_a_bad_featurizer_is_refused_naming_what_is_wrong(make, says):
    with pytest.raises(ConfigError, match=says):
        make()


def test_pca_is_fitted_on_standardized_activations():
    """The null a plain PCA fails: one dimension scaled 1,000 times dominates unstandardized components, not these."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(500, 6, generator=generator)
    x[:, 0] *= 1000.0
    pca = fit_pca(x)
    assert torch.allclose(pca.scale[0], x[:, 0].double().std(unbiased=False).float(), rtol=1e-3)
    assert pca.basis[0, 0].abs() < 0.99  # after standardizing, the big dimension is no longer the first component alone
    plain = np.linalg.svd((x - x.mean(0)).numpy(), full_matrices=False)[2][0]
    assert abs(plain[0]) > 0.999
