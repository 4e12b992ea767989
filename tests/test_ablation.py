"""Steering and ablation (zero, mean over a reference set, additive) against forward hooks written by hand, on a tiny
random BERT: the fast path and the naive reference equal the hand-made hook, the source plays no part, bad input is
refused naming what is wrong, and the kinds save and load as any intervention."""

from __future__ import annotations

import pytest
import torch

import interp
from interp.core.errors import ConfigError
from interp.engine.interventions import Additive, MeanAblation, ZeroAblation, intervention_class
from interp.hooks.architecture import batch_inputs
from interp.hooks.context import site_modules
from interp.hooks.encoding import collate

SITE = "blocks.0.hook_resid_post@w_h"


@pytest.fixture(scope="module")
def lab(tiny_classifier_dir, monli_dir):
    return interp.IntervenableModel(str(tiny_classifier_dir), interp.load_task("monli", data_dir=str(monli_dir)))


@pytest.fixture(scope="module")
def examples(lab):
    return lab.task.examples(("pmonli", "nmonli_test"), per_split=5, seed=3)


def _by_hand(lab, examples, change) -> torch.Tensor:
    """Each example alone through the model, the block-0 output at its ``w_h`` token replaced by ``change(vector)``."""
    module = lab.model.module
    target = site_modules(module)[1]  # hidden_states[1]: the output of block 0
    out = []
    for e in lab.encode(examples):
        (token,) = e.tokens("w_h")

        def hook(_, __, output, token=token):
            hidden = output[0] if isinstance(output, tuple) else output
            hidden = hidden.clone()
            hidden[0, token] = change(hidden[0, token])
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

        handle = target.register_forward_hook(hook)
        try:
            with torch.no_grad():
                out.append(module(**batch_inputs(module, collate([e], lab.model.tokenizer.pad_token_id), "cpu")).logits[0])
        finally:
            handle.remove()
    return torch.stack(out)


def _vectors(lab, examples) -> torch.Tensor:
    return lab.source_vectors(examples, lab.location(SITE))


def test_zero_mean_and_additive_equal_a_hook_by_hand_on_both_paths(lab, examples):
    reference = lab.task.examples(("nmonli_train",), n=12, seed=0)
    mean = _vectors(lab, reference).mean(0)
    vector = torch.randn(lab.width(examples, SITE), generator=torch.Generator().manual_seed(0))
    cases = {
        "zero": (lambda naive: lab.ablate(examples, SITE, naive=naive), lambda v: torch.zeros_like(v)),
        "mean": (lambda naive: lab.ablate(examples, SITE, kind="mean", reference=reference, naive=naive), lambda v: mean),
        "additive": (lambda naive: lab.steer(examples, SITE, vector, scale=3.0, naive=naive), lambda v: v + 3.0 * vector),
    }
    plain = lab.predict(examples)
    for name, (run, change) in cases.items():
        expected = _by_hand(lab, examples, change)
        moved = (expected - plain).abs().max()  # the random model's logits are small: the error is held to a share of the effect
        assert moved > 0, f"{name} moves nothing: a vacuous comparison"
        for naive in (False, True):
            found = run(naive)
            assert found.shape == (len(examples), 2)
            assert (found - expected).abs().max() <= 1e-3 * moved, (name, naive, (found - expected).abs().max(), moved)
    assert torch.allclose(lab.steer(examples, SITE, vector, scale=0.0), plain, atol=1e-7)  # a zero step changes nothing


def test_the_kinds_ignore_the_source_and_save_as_any_intervention(lab, examples):
    width = lab.width(examples, SITE)
    base, source = torch.randn(4, width), torch.randn(4, width)
    steer = Additive(width, torch.ones(width), scale=2.0)
    mean = MeanAblation.of(torch.randn(6, width))
    for module in (steer, mean, ZeroAblation(width)):
        assert torch.equal(module(base, source), module(base, torch.randn(4, width)))
        again = intervention_class(module.kind).from_settings(module.settings())
        again.load_tensors(module.tensors())
        assert torch.equal(again(base, source), module(base, source)), module.kind
    assert steer.settings()["scale"] == 2.0 and torch.equal(steer(base, source), base + 2.0)
    result = lab.interchange(examples, examples, SITE, intervention=ZeroAblation(width))  # the interchange call takes them too
    assert torch.allclose(result.logits[:, 0], result.logits[:, -1], atol=1e-6)  # every source gives the same run


@pytest.mark.parametrize("call, says", [
    (lambda lab, ex: lab.ablate(ex, SITE, kind="max"), "kind='max'"),
    (lambda lab, ex: lab.ablate(ex, SITE, reference=ex), "takes no reference set"),
    (lambda lab, ex: lab.ablate(ex, SITE, kind="mean", reference=[]), "reference"),
    (lambda lab, ex: lab.steer(ex, SITE, torch.ones(7)), "the vector has 7 entries"),
    (lambda lab, ex: lab.steer(ex, SITE, torch.full((lab.width(ex, SITE),), float("nan"))), "NaN"),
    (lambda lab, ex: lab.steer(ex, SITE, torch.ones(lab.width(ex, SITE)), scale=float("inf")), "scale"),
    (lambda lab, ex: lab.ablate([], SITE), "examples"),
])  # fmt: skip
def test_bad_steering_and_ablation_input_is_refused_by_name(lab, examples, call, says):
    with pytest.raises(ConfigError, match=says):
        call(lab, examples)
