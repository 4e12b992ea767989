"""The write plan's one hooked pass (``interp.engine.plan``): every kind of write against one batch-1 hooked pass per
row and the independent references of joint runs and path patching, on an encoder and a decoder; a pass that starts at the earliest location's block equals the whole model's, and
runs the blocks before it once per base, not once per row; gradients reach an intervention in the rows' own order
across input lengths; a plan names what is wrong with it."""

from __future__ import annotations

import pytest
import torch

import interp
from interp.engine.interventions import RotatedSubspace
from interp.engine.joint import naive_joint_logits
from interp.engine.naive import naive_forward
from interp.engine.paths import naive_path_patch_logits, path_patch_logits
from interp.engine.plan import HELD, Intervened, Sources, WritePlan, plan_logits
from interp.hooks.architecture import architecture
from interp.hooks.locations import Location

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=3, seed=11)


@pytest.fixture(scope="module")
def lab(lab_of_each_kind):
    return lab_of_each_kind


def _setup(lab, examples, sites):
    model, pad = lab.model.module, lab.model.tokenizer.pad_token_id or 0
    encoded = lab.encode(examples)
    locations = [lab.location(s) for s in sites]
    vectors = {loc: lab.vectors(examples, loc).reshape(len(examples), -1).cpu() for loc in locations}
    generator = torch.Generator().manual_seed(0)
    rows = 2 * len(examples)
    base_rows = torch.randint(len(examples), (rows,), generator=generator)  # bases repeat: each is read once
    picks = {loc: torch.randint(len(examples), (rows,), generator=generator) for loc in locations}
    return model, pad, encoded, locations, vectors, base_rows, picks


def _naive(model, encoded, base_rows, writes, pad):
    """One batch-1 hooked pass per row: ``writes(r)`` gives the row's {location: vector or function}."""
    return torch.stack([naive_forward(model, encoded[int(b)], pad, write=writes(r))[0] for r, b in enumerate(base_rows.tolist())])


def test_sources_and_interventions_equal_one_hooked_pass_per_row(lab, examples):
    model, pad, encoded, locations, vectors, base_rows, picks = _setup(lab, examples, ("blocks.1.hook_attn_out@cls", "blocks.1.hook_mlp_out@cls"))
    plan = WritePlan({loc: Sources(vectors[loc], picks[loc]) for loc in locations})
    got, _ = plan_logits(model, encoded, base_rows, plan, pad, batch_size=4)
    naive = _naive(model, encoded, base_rows, lambda r: {loc: vectors[loc][picks[loc][r]][None] for loc in locations}, pad)
    assert torch.allclose(got, naive, atol=1e-5)
    assert (got - lab.predict([examples[int(b)] for b in base_rows])).abs().amax() > 1e-3  # the writes move the logits
    independent = naive_joint_logits(model, encoded, base_rows, {loc: vectors[loc][picks[loc]] for loc in locations}, pad)
    reference, _ = lab.runner.reference().plan_logits(encoded, base_rows, plan)
    assert torch.allclose(got, independent, atol=1e-5) and torch.allclose(got, reference, atol=1e-5)
    whole, _ = plan_logits(model, encoded, base_rows, plan, pad, batch_size=4, start=False)
    assert torch.allclose(got, whole, atol=1e-5)  # starting at block 1 from the base's input there: the whole model's logits
    rotations = {loc: RotatedSubspace(vectors[loc].shape[-1], k=3, seed=2).eval() for loc in locations}
    with torch.no_grad():
        turned, _ = plan_logits(model, encoded, base_rows, WritePlan({loc: Intervened(rotations[loc], Sources(vectors[loc], picks[loc])) for loc in locations}), pad)
    naive = _naive(model, encoded, base_rows, lambda r: {loc: (lambda old, loc=loc: rotations[loc](old, vectors[loc][picks[loc][r]][None].to(old.dtype)))
                                                        for loc in locations}, pad)  # fmt: skip
    assert torch.allclose(turned, naive, atol=1e-5) and (turned - got).abs().amax() > 1e-4  # a subspace is not the whole vector


def test_a_held_location_writes_the_bases_own_value_and_a_read_gives_the_pass(lab, examples):
    """Holding the last block's attention output at the read token cuts the only path from a write at ``w_h`` before
    that block to the readout (path patching's logic): the logits are the base's own, while without the hold they move."""
    last = lab.model.n_layers - 1
    model, pad, encoded, locations, vectors, base_rows, picks = _setup(lab, examples, (f"blocks.{last - 1}.hook_resid_post@w_h",))
    later, loc = lab.location(f"blocks.{last}.hook_attn_out@cls"), locations[0]
    own = lab.predict([examples[int(b)] for b in base_rows])
    alone, traced = plan_logits(model, encoded, base_rows, WritePlan({later: HELD}), pad, read=[later])
    assert torch.allclose(alone, own, atol=1e-5)  # holding a base's own value changes nothing
    moved, read = plan_logits(model, encoded, base_rows, WritePlan({loc: Sources(vectors[loc], picks[loc]), later: HELD}), pad, read=[later])
    free, read_free = plan_logits(model, encoded, base_rows, WritePlan({loc: Sources(vectors[loc], picks[loc])}), pad, read=[later])
    assert torch.allclose(read[later], traced[later], atol=1e-5) and torch.allclose(moved, own, atol=1e-5)  # held: the base's value
    assert (read_free[later] - traced[later]).abs().amax() > 1e-4 and (free - own).abs().amax() > 1e-4  # not held: recomputed, moved


def test_path_patching_through_any_runners_plan_equals_its_independent_naive_passes(lab, examples):
    """A head at the read token, every later component held: through the runner's plan, through its reference's, and
    by the independent per-pair passes of :func:`naive_path_patch_logits`; the held components change the answer."""
    model, pad, encoded = lab.model.module, lab.model.tokenizer.pad_token_id or 0, lab.encode(examples)
    sender = lab.location("blocks.0.attn.hook_z.h1@cls")
    vectors = lab.vectors(examples, sender).reshape(len(examples), -1).cpu()
    fast = path_patch_logits(lab.runner.plan_logits, encoded, vectors, sender, lab.model.n_layers, batch_size=5)
    reference = path_patch_logits(lab.runner.reference().plan_logits, encoded, vectors, sender, lab.model.n_layers)
    independent = naive_path_patch_logits(model, encoded, vectors, sender, lab.model.n_layers, pad)
    assert torch.allclose(fast, independent, atol=1e-5) and torch.allclose(reference, independent, atol=1e-5)
    assert (fast - lab.interchange_logits(examples, examples, sender)).abs().amax() > 1e-4  # held: not the total effect


def test_a_pass_from_a_later_block_runs_the_blocks_before_it_once_per_base(lab, examples):
    model, pad, encoded, locations, vectors, base_rows, picks = _setup(lab, examples, ("blocks.1.hook_mlp_out@cls",))
    loc = locations[0]
    first = architecture(model).block_list(model)[0]
    calls = []
    handle = first.register_forward_hook(lambda module, args, output: calls.append(args[0].shape[0]))
    try:
        plan_logits(model, encoded, base_rows, WritePlan({loc: Sources(vectors[loc], picks[loc])}), pad)
        started = sum(calls)
        calls.clear()
        plan_logits(model, encoded, base_rows, WritePlan({loc: Sources(vectors[loc], picks[loc])}), pad, start=False)
    finally:
        handle.remove()
    assert started == len(set(base_rows.tolist())) < len(base_rows) == sum(calls)  # block 0 ran once per distinct base, not per row


def test_gradients_reach_the_intervention_with_the_rows_in_their_order(encoder_lab, examples):
    model, pad, encoded, locations, vectors, base_rows, picks = _setup(encoder_lab, examples, ("blocks.0.hook_resid_post@w_h",))
    assert len({len(encoded[int(b)].input_ids) for b in base_rows}) > 1  # several input lengths: rows come back reordered
    loc = locations[0]
    rotation = RotatedSubspace(vectors[loc].shape[-1], k=3, seed=2)
    plan = WritePlan({loc: Intervened(rotation, Sources(vectors[loc], picks[loc]))})
    logits, _ = plan_logits(model, encoded, base_rows, plan, pad, batch_size=3)
    with torch.no_grad():
        plain, _ = plan_logits(model, encoded, base_rows, plan, pad)
    assert logits.requires_grad and torch.allclose(logits.detach().float().cpu(), plain, atol=1e-5)
    logits.sum().backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in rotation.parameters())
    model.zero_grad(set_to_none=True)


def test_a_plan_is_checked_and_knows_where_it_starts():
    early, late = Location.parse("blocks.0.hook_resid_post@w_h"), Location.parse("blocks.2.hook_mlp_out@w_p")
    assert WritePlan({late: HELD, early: Sources(torch.zeros(1, 4))}).earliest == early
    assert WritePlan({late: HELD}).start_block == 2 and WritePlan({early: HELD}).start_block is None
    with pytest.raises(interp.ConfigError, match="at least one location"):
        WritePlan({})
    with pytest.raises(interp.ConfigError, match="Sources, Intervened or HELD"):
        WritePlan({early: torch.zeros(1, 4)})


def test_a_pass_out_of_memory_is_halved_in_gradients_reads_and_on_the_bridge(encoder_lab, wide_classifier_dir, task, monkeypatch):
    """The grouped row loop (``interp.engine.rows.grouped_passes``): a pass of more than 2 examples that runs out of
    memory is run again in halves, in a gradient pass, a read of vectors and the TransformerLens bridge's passes
    (predictions, gradients, vectors); no example is dropped and every number is the same."""
    import interp.engine.batched as batched
    import interp.engine.gradients as gradients
    from interp.backends.tl_bridge import BridgeRunner

    examples = task.examples(("pmonli",), per_split=40, seed=2)
    site = encoder_lab.location("blocks.0.hook_resid_post@w_h")
    hf, tl = encoder_lab.runner, interp.IntervenableModel(str(wide_classifier_dir), task, backend="transformer-lens").runner
    encoded = encoder_lab.encode(examples)
    assert max(len([e for e in encoded if len(e.input_ids) == n]) for n in {len(e.input_ids) for e in encoded}) > 2  # a group to halve

    def every():
        return [hf.gradients(encoded, [site])[site].gradients, hf.vectors(encoded, site), tl.predict(encoded),
                tl.gradients(encoded, [site])[site].gradients, tl.vectors(encoded, site)]  # fmt: skip

    expected, failed = every(), []

    def tight(real, rows_of):
        def call(*args, **kwargs):
            if rows_of(*args, **kwargs) > 2:
                failed.append(real.__name__)
                raise torch.OutOfMemoryError("injected")
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(gradients, "model_inputs", tight(gradients.model_inputs, lambda model, ids, *rest: len(ids)))
    monkeypatch.setattr(batched, "run_prefix", tight(batched.run_prefix, lambda model, ids, *rest: len(ids)))
    monkeypatch.setattr(BridgeRunner, "_forward", tight(BridgeRunner._forward, lambda self, ids, *rest, **k: len(ids)))
    monkeypatch.setattr(BridgeRunner, "_read", tight(BridgeRunner._read, lambda self, batch, *rest: len(batch["input_ids"])))
    again = every()
    assert {"model_inputs", "run_prefix", "_forward", "_read"} <= set(failed)
    for before, after in zip(expected, again):
        assert before.shape == after.shape and torch.allclose(before.float().cpu(), after.float().cpu(), atol=1e-5)
