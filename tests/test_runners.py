"""The runner redesign: activation gradients against finite differences, the example set's lifetime, results that save
themselves (hashing nothing before), and an intervention kind added as one class."""

from __future__ import annotations

import warnings
from unittest.mock import patch

import h5py
import numpy as np
import pytest
import torch

import interp
from interp.api.objects import intervention_kinds
from interp.backends import HFRunner, NaiveRunner, get_runner
from interp.engine.interventions import REGISTRY, Intervention
from interp.hooks.encoding import encode_examples
from interp.hooks.locations import Location

SITE = "blocks.0.hook_resid_post@w_h"

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=10, seed=4)


@pytest.fixture
def lab(tiny_classifier_dir, task):
    return interp.IntervenableModel(str(tiny_classifier_dir), task)


# -- activation gradients ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("site", ["blocks.0.hook_resid_post@w_h", "blocks.0.hook_resid_pre@w_p+w_h", "blocks.0.attn.hook_z.h0@w_h",
                                  "blocks.0.hook_mlp_out@cls", "blocks.1.hook_resid_mid@cls"])  # fmt: skip
def test_gradients_equal_finite_differences(site, tiny_mqnli_classifier_dir, examples):
    """∂ logit / ∂ activation from one backward pass per label equals the symmetric finite difference of the logits with
    the site's vectors moved along a random direction (the model in float64), at residual and component sites."""
    from interp.models.loading import load_classifier

    model, tokenizer = load_classifier(str(tiny_mqnli_classifier_dir))
    model = model.double()
    encoded = encode_examples(examples[:5], tokenizer)
    loc = Location.parse(site)
    found = get_runner("hf", model, tokenizer).gradients(encoded, [loc])[loc]
    n, labels, width = found.gradients.shape
    assert (n, labels) == (5, 3) and found.activations.shape == (5, width)
    direction = torch.randn(n, width, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    pairs = NaiveRunner(model, tokenizer.pad_token_id).pairs(encoded, loc) if not loc.is_residual else None
    eps = 1e-4

    def logits(shift: float) -> torch.Tensor:
        written = found.activations.double() + shift * direction
        if pairs is not None:  # a component site: the reference's hooked pass writes anywhere
            return pairs.written_logits(torch.arange(n), written)
        return get_runner("hf", model).pairs(encoded, loc).written_logits(torch.arange(n), written)

    numeric = (logits(eps) - logits(-eps)) / (2 * eps)  # [n, labels]
    analytic = torch.einsum("nlw,nw->nl", found.gradients.double(), direction)
    assert torch.allclose(numeric, analytic, atol=1e-6, rtol=1e-4), (numeric - analytic).abs().max()
    assert analytic.abs().max() > 1e-3  # the logits do move with the site: the check could have failed


def test_gradients_of_several_sites_at_once_equal_each_alone(tiny_mqnli_classifier_dir, examples):
    """Probes at many sites of one pass cut no path: each site's gradients equal those of a pass probing it alone, and the
    reference's batch-1 passes agree."""
    from interp.models.loading import load_classifier

    model, tokenizer = load_classifier(str(tiny_mqnli_classifier_dir))
    encoded = encode_examples(examples, tokenizer)
    locations = [Location.parse(s) for s in ("blocks.0.hook_resid_pre@w_h", "blocks.0.hook_resid_post@w_h", "blocks.1.attn.hook_z.h1@w_h")]
    together = get_runner("hf", model).gradients(encoded, locations)
    reference = get_runner("hf", model).reference().gradients(encoded, locations)
    for loc in locations:
        alone = get_runner("hf", model).gradients(encoded, [loc])[loc]
        assert torch.allclose(together[loc].gradients, alone.gradients, atol=1e-6)
        assert torch.allclose(reference[loc].gradients, alone.gradients, atol=1e-5)
    assert all(p.grad is None for p in model.parameters())  # the weights got no gradient


# -- the example set ------------------------------------------------------------------------------------------------


def test_an_example_set_lives_until_other_examples_or_other_weights(lab, examples):
    bound = lab.bind(examples)
    assert lab.bind(list(examples)) is bound and lab.bind(bound) is bound
    whole = patch.object(HFRunner, "vectors_and_logits", autospec=True, side_effect=HFRunner.vectors_and_logits)
    with patch.object(HFRunner, "vectors", autospec=True, side_effect=HFRunner.vectors) as reads, whole as passes:
        first = lab.vectors(examples, SITE)
        again = lab.vectors(bound, SITE)
        part = lab.source_vectors(examples[3:7], SITE)
    assert (reads.call_count, passes.call_count) == (1, 0)  # one read of the set's vectors, a probe's: the blocks up to the site
    assert torch.equal(first.flatten(1), again.flatten(1)) and torch.equal(part, bound.vectors(lab.location(SITE))[3:7])
    sub = lab.bind(examples[:4])
    assert sub is not bound and sub.encoded == bound.encoded[:4] and lab.bind(examples) is bound  # a subset: the set stays
    # four rows run alone against the same rows in the set's batch: equal to rounding, which differs by CPU kernel
    assert torch.allclose(lab.predict(examples[:4]), bound.logits()[:4], rtol=0, atol=1e-6)
    other = lab.task.examples(("nmonli_test",), per_split=3, seed=9)
    assert lab.bind(other) is not bound and lab.bind(examples) is not bound  # other examples: the set is dropped
    held = lab.bind(examples)
    runner = lab.runner
    before = held.logits().clone()
    with torch.no_grad():
        lab.model.module.classifier.bias.add_(5.0)  # the weights change in place
    after = lab.bind(examples)
    assert after is not held and lab.runner is not runner and not torch.allclose(after.logits(), before)


def test_the_face_holds_no_run_path_cache_or_writer(lab):
    """IntervenableModel asks its runner and its example set: none of the old private caches or writers is left."""
    for name in ("_encoded", "_shared", "_memo", "_backend", "write", "file_meta", "_result"):
        assert not hasattr(lab, name), name


# -- results that save themselves -------------------------------------------------------------------------------------


def test_a_result_saves_with_no_closure_and_hashes_only_when_it_saves(tiny_classifier_dir, task, examples, tmp_path):
    """interchange on a fresh model hashes nothing; save hashes the weights once; the file read back saves back equal."""
    import interp.api.loading as loading

    hashed = []
    real = loading.model_sha256
    with patch.object(loading, "model_sha256", side_effect=lambda spec: hashed.append(spec) or real(spec)):
        fresh = interp.IntervenableModel(str(tiny_classifier_dir), task)
        res = fresh.interchange(examples, examples, SITE, variables=("lexrel",))
        assert hashed == [] and "model_sha256" not in res.meta
        path = res.save(tmp_path / "iv.h5")
        assert hashed == [str(tiny_classifier_dir)]
    assert not any(callable(v) for v in vars(res).values())  # what it saves with is data, not a closure from the model
    back = interp.load_interventions(path)
    again = back.save(tmp_path / "again.h5")
    assert _contents(path) == _contents(again)
    assert torch.equal(back.logits, res.logits) and back.summary("lexrel") == res.summary("lexrel")


def test_a_result_whose_weights_changed_since_will_not_name_them(task, examples, tiny_classifier_dir, tmp_path):
    model = interp.load_model(str(tiny_classifier_dir))
    lab = interp.IntervenableModel(model.module, task, tokenizer=model.tokenizer)  # in memory: hashed from the tensors
    res = lab.interchange(examples, examples, SITE, variables=("lexrel",))
    with torch.no_grad():
        model.module.classifier.bias.add_(1.0)
    with pytest.raises(interp.ConfigError, match="changed after this result was computed"):
        res.save(tmp_path / "iv.h5")
    assert not (tmp_path / "iv.h5").exists()


def test_a_multi_location_file_read_back_saves_each_location(lab, examples, tmp_path):
    both = lab.interchange(examples, examples, [SITE, "blocks.1.hook_resid_post@w_p"], variables=("lexrel", "negated"))
    path = both.save(tmp_path / "two.h5")
    one = interp.load_interventions(path, "blocks.1.hook_resid_post@w_p").save(tmp_path / "one.h5")
    with h5py.File(one, "r") as f:
        assert list(f.attrs["locations"]) == ["blocks.1.hook_resid_post@w_p"]
        assert np.array_equal(f["negated/blocks.1.hook_resid_post@w_p/causal_pred"][:], both["blocks.1.hook_resid_post@w_p"].causal_pred["negated"])


def _contents(path) -> dict:
    """Every dataset and attribute of an HDF5 file, the environment it was written in aside."""
    found = {}
    with h5py.File(path, "r") as f:
        found["@"] = {k: str(v) for k, v in f.attrs.items() if k != "environment"}

        def visit(name, item):
            if isinstance(item, h5py.Dataset):
                data = np.asarray(item[()])
                found[name] = data.tolist() if data.dtype.kind == "O" else (str(data.dtype), data.shape, data.tobytes())
            found[name + "@"] = {k: str(v) for k, v in item.attrs.items()}

        f.visititems(visit)
    return found


# -- a new intervention kind is one class -----------------------------------------------------------------------------


class ScaledSource(Intervention):
    """A test kind: the base plus a learned share of (source − base) along each coordinate of the first ``k``."""

    kind = "test-scaled-source"
    trainable = True
    sized = True

    def __init__(self, width: int, k: int, seed: int | None = 0) -> None:
        super().__init__()
        self.width, self._k = width, k
        self.share = torch.nn.Parameter(torch.full((k,), 0.1))

    @property
    def k(self) -> int:
        return self._k

    def tensors(self) -> dict:
        return {"share": self.share.detach()}

    def _set(self, name, value) -> None:
        self.share.copy_(value)

    def forward(self, base, source):
        source = source.expand_as(base)
        head = base[..., : self._k] + self.share * (source[..., : self._k] - base[..., : self._k])
        return torch.cat([head, base[..., self._k :]], dim=-1)


def test_a_kind_defined_here_trains_scores_saves_and_loads(lab, task, tmp_path, monli_dir):
    assert REGISTRY["test-scaled-source"] is ScaledSource and "test-scaled-source" in intervention_kinds(trainable=True)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=20, seed=1)
    das = lab.train_das(examples, SITE, "lexrel", kind="test-scaled-source", k=8, n_pairs=64, epochs=2, batch_size=16, test_pairs=24, lr=0.05)
    assert isinstance(das.intervention, ScaledSource) and not torch.allclose(das.intervention.share, torch.full((8,), 0.1))
    scored = lab.score_das(examples, das, SITE, "lexrel", test_pairs=24)
    assert scored["intervention"]["iia"] == float(das.iia)
    path = interp.save_intervention(das.intervention, tmp_path / "scaled", {"variable": "lexrel", "location": SITE})
    back, meta = interp.load_trained_intervention(path)
    assert isinstance(back, ScaledSource) and meta["kind"] == "test-scaled-source" and torch.equal(back.share, das.intervention.share)
    res = lab.interchange(examples, examples, SITE, intervention=back, variables=("lexrel",))
    assert res.logits.shape == (40, 40, 2)
    with pytest.raises(interp.ConfigError, match=r"ScaledSource's already"):
        type("Clash", (Intervention,), {"kind": "test-scaled-source"})


def test_the_older_argument_order_of_source_vectors_warns_and_agrees(lab, examples):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        new = lab.source_vectors(examples, SITE)
    with pytest.warns(DeprecationWarning, match=r"source_vectors\(location, examples\) is the older argument order"):
        old = lab.source_vectors(SITE, examples)
    assert torch.equal(old, new)
