"""Interventions as modules, counterfactual pairs, the pair engine and DAS training, against naive references and a planted alignment."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModelForSequenceClassification

from interp.analysis import das as das_analysis
from interp.analysis.das import FitSettings, best_block, fit_intervention, predict_pairs, score_intervention
from interp.causal import CausalModel, Mechanism, run_forward, run_interchange
from interp.causal.pairs import counterfactual_pairs, split_examples
from interp.core.errors import ConfigError
from interp.engine import interchange_logits
from interp.engine.interventions import BoundlessSubspace, CoordinateBlock, Interchange, LowRankSubspace, RotatedSubspace
from interp.engine.pair_suffix import PairSuffix, chunk_cost, frozen_weights, length_chunks
from interp.hooks import hooked
from interp.hooks.locations import Location
from interp.tasks import resolve_task
from interp.hooks.encoding import collate, encode_examples


@pytest.fixture(scope="module")
def mqnli(mqnli_file, minilm_tokenizer, tiny_mqnli_classifier_dir):
    task = resolve_task("mqnli", data_file=str(mqnli_file))
    examples = task.load(("test",))[:40]
    model = AutoModelForSequenceClassification.from_pretrained(tiny_mqnli_classifier_dir).eval()
    return task, examples, model, encode_examples(examples, minilm_tokenizer, "first", task.labels)


def _naive_logits(model, encoded, base: int, vector: torch.Tensor, loc: Location) -> torch.Tensor:
    """One hooked full forward pass of the base with ``vector`` written at ``loc``."""
    batch = collate([encoded[base]], 0)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    with hooked(model, batch["positions"], write={loc: vector[None]}):
        return model(**inputs).logits[0]


@pytest.mark.parametrize("kind", ["rotated", "lowrank", "block", "boundless"])
def test_pair_engine_matches_a_hooked_forward_with_the_naive_formula(mqnli, kind):
    """A random rotation with k < width, through the pair engine (with and without gradients), equals one hooked
    forward pass of the base with Rᵀ(m·R·s + (1−m)·R·b) written in (column convention), computed in float64."""
    task, examples, model, encoded = mqnli
    loc = Location.parse("blocks.0.hook_resid_post@n_s.p+n_s.h")  # two tokens: width 64
    runner = PairSuffix(model, encoded, loc)
    runner.chunk_cost = 0  # with gradients, every run of one length its own pass: the split is checked too
    assert len(length_chunks(runner.lengths[:24].tolist(), 0)) > 1
    width = runner.width
    intervention = {
        "rotated": RotatedSubspace(width, 5, seed=3),
        "lowrank": LowRankSubspace(width, 5, seed=3),
        "block": CoordinateBlock(width, 30, 40),
        "boundless": BoundlessSubspace(width, start=0.2, seed=3),
    }[kind]
    bases, sources = torch.arange(0, 24), torch.arange(24, 0, -1)
    with torch.no_grad():
        fast = runner.logits(bases, sources, intervention)
    with frozen_weights(model):
        padded = runner.logits(bases, sources, intervention)
    b, s = runner.vectors[bases].double(), runner.vectors[sources].double()
    if kind == "block":
        mask = torch.zeros(width, dtype=torch.float64)
        mask[30:40] = 1
        expected = mask * s + (1 - mask) * b
    else:
        if kind == "lowrank":  # W's columns span the subspace: complete them to a rotation
            w = intervention.matrix.detach().double()
            q, _ = torch.linalg.qr(torch.cat([w, torch.randn(width, width - 5, dtype=torch.float64)], 1))
            r = torch.cat([w, q[:, 5:]], 1)
            mask = (torch.arange(width) < 5).double()
        else:
            r = (intervention.matrix if kind == "rotated" else intervention.rotation.matrix).detach().double()
            mask = (torch.arange(width) < 5).double() if kind == "rotated" else intervention.mask.detach().double()
        rt = r.T  # the row convention's R is the column convention's Rᵀ
        expected = (rt.T @ (mask[:, None] * (rt @ s.T) + (1 - mask[:, None]) * (rt @ b.T))).T
    naive = torch.stack([_naive_logits(model, encoded, int(i), expected[n].float(), loc) for n, i in enumerate(bases)])
    assert torch.allclose(fast, naive, atol=1e-5) and torch.allclose(padded.detach(), naive, atol=1e-5)
    assert (fast.argmax(-1) == naive.argmax(-1)).all()
    untouched = torch.stack([_naive_logits(model, encoded, int(i), runner.vectors[i], loc) for i in bases])
    assert (fast - untouched).abs().max() > 1e-3  # the null: the intervention moved the logits
    assert padded.requires_grad == intervention.trainable and all(p.requires_grad for p in model.parameters())  # flags restored


def test_pair_engine_with_interchange_equals_the_engine(mqnli):
    """The pair engine's vanilla interchange is the batched engine's, pair by pair (labels equal, logits within 1e-5)."""
    task, examples, model, encoded = mqnli
    loc = Location.parse("blocks.1.hook_resid_pre@cls")
    runner = PairSuffix(model, encoded, loc)
    full = interchange_logits(model, encoded, runner.vectors, loc)
    bases, sources = torch.meshgrid(torch.arange(len(encoded)), torch.arange(len(encoded)), indexing="ij")
    with torch.no_grad():
        pairs = runner.logits(bases.flatten(), sources.flatten(), Interchange(runner.width), batch_size=97)
    assert torch.allclose(pairs.view_as(full), full, atol=1e-5)
    assert len(torch.unique(full.argmax(-1))) > 1


def test_interventions_refuse_bad_sizes_and_k_width_is_interchange():
    with pytest.raises(ValueError, match="k = 0"):
        RotatedSubspace(8, 0)
    with pytest.raises(ValueError, match="k = 9"):
        LowRankSubspace(8, 9)
    with pytest.raises(ValueError, match="start, stop = 5, 5"):
        CoordinateBlock(8, 5, 5)
    b, s = torch.randn(3, 8), torch.randn(3, 8)
    assert torch.allclose(RotatedSubspace(8, 8, seed=1)(b, s), s, atol=1e-5)
    assert not torch.allclose(RotatedSubspace(8, 4, seed=1)(b, s), s, atol=1e-2)


def _toy_causal():
    return CausalModel(
        name="toy",
        inputs=("a", "b"),
        mechanisms={"c": Mechanism(("a", "b"), lambda a, b: a and b)},
        output="c",
    )


def test_counterfactual_pairs_are_balanced_split_by_example_and_right():
    causal = _toy_causal()
    inputs = [{"a": bool(i % 2), "b": bool(i % 3)} for i in range(60)]
    train, test = split_examples(len(inputs), 0.25, seed=4)
    assert len(test) == 15 and not set(train) & set(test) and sorted([*train, *test]) == list(range(60))
    pairs = counterfactual_pairs(causal, inputs, "a", train, n_pairs=200, seed=1)
    assert len(pairs) == 200 and pairs.changed.mean() == 0.5
    assert set(pairs.base) | set(pairs.source) <= set(train) and (pairs.base != pairs.source).all()
    for b, s, cf, changed in zip(pairs.base, pairs.source, pairs.counterfactual, pairs.changed):  # the naive reference
        expected = run_interchange(causal, inputs[b], {"a": inputs[s]})["c"]
        assert cf == expected and changed == (expected != run_forward(causal, inputs[b])["c"])
    again = counterfactual_pairs(causal, inputs, "a", train, n_pairs=200, seed=1)
    assert (again.base == pairs.base).all() and not (counterfactual_pairs(causal, inputs, "a", train, 200, seed=2).base == pairs.base).all()
    constant = [{"a": True, "b": True} for _ in range(10)]
    with pytest.raises(ConfigError, match="no pair of these 10 examples changes the output"):
        counterfactual_pairs(causal, constant, "a", range(10), 20, 0)


@pytest.fixture(scope="module")
def planted(monli_dir, minilm_tokenizer, tiny_classifier_dir):
    """A tiny BERT whose head reads only a rotated 2-dimensional subspace of the last [CLS] vector.

    The pooler is s·Qᵀ(h − mean) (Q a random orthogonal matrix, s standardizing
    the plane's projections) and the classifier adds tanh of the first two pooled coordinates: the label is decided by the
    projection on span(q₀, q₁), so the variable ``v`` (the model's own label)
    lives in that plane and in no coordinate block.
    """
    task = resolve_task("monli", data_dir=str(monli_dir))
    examples = task.load(("pmonli",))[:600]
    model = AutoModelForSequenceClassification.from_pretrained(tiny_classifier_dir).eval()
    encoded = encode_examples(examples, minilm_tokenizer, "first", task.labels)
    loc = Location.parse("blocks.1.hook_resid_post@cls")  # the last block's output: the head reads it
    q, _ = torch.linalg.qr(torch.randn(32, 32, generator=torch.Generator().manual_seed(11)))
    with torch.no_grad():
        vectors = PairSuffix(model, encoded, loc).vectors
        mean = vectors.mean(0)
        scale = 3 / float(((vectors - mean) @ q[:, :2]).std())  # the plane's projections, standardized: clear margins
        model.bert.pooler.dense.weight.copy_(scale * q.T)
        model.bert.pooler.dense.bias.copy_(-scale * q.T @ mean)
        model.classifier.weight.zero_()
        model.classifier.weight[1, :2] = 10.0
        model.classifier.bias.zero_()
        logits = PairSuffix(model, encoded, loc).logits(torch.arange(len(encoded)), torch.arange(len(encoded)), Interchange(32))
        margin = (logits[:, 1] - logits[:, 0]).abs()
        encoded = [e for e, m in zip(encoded, margin) if m > margin.quantile(0.4)]  # a clear margin: the plane decides
        runner = PairSuffix(model, encoded, loc)
        own = runner.logits(torch.arange(len(encoded)), torch.arange(len(encoded)), Interchange(32)).argmax(-1).numpy()
    causal = CausalModel(name="planted", inputs=("v",), mechanisms={"out": Mechanism(("v",), lambda v: v)}, output="out")
    inputs = [{"v": int(label)} for label in own]
    train, test = split_examples(len(inputs), 0.25, seed=0)
    sets = []
    for indices, n, seed in ((train, 2000, 0), (test, 400, 1)):
        p = counterfactual_pairs(causal, inputs, "v", indices, n, seed)
        sets.append((torch.from_numpy(p.base), torch.from_numpy(p.source), torch.tensor(p.counterfactual.astype(int))))
    return runner, own, sets


def test_das_recovers_a_planted_rotated_subspace_where_no_coordinate_block_does(planted):
    runner, own, ((tb, ts, tt), (hb, hs, ht)) = planted
    assert 0.3 < own.mean() < 0.7  # both labels occur
    rotated = RotatedSubspace(32, 2, seed=0)
    before = score_intervention(runner, rotated, hb, hs, ht, own)["iia"]
    losses = fit_intervention(runner, rotated, tb, ts, tt, FitSettings(epochs=10, lr=1e-2, batch_size=128, seed=0))
    after = score_intervention(runner, rotated, hb, hs, ht, own)
    assert after["iia"] >= 0.95 and losses[-1] < losses[0]
    assert before < 0.8  # the null: a random 2-d rotation does not already find it
    blocks = [score_intervention(runner, CoordinateBlock(32, j, j + 2), hb, hs, ht, own)["iia"] for j in range(0, 32, 2)]
    assert max(blocks) < 0.75 and after["chance"] < 0.6
    chosen = best_block(runner, 2, tb, ts, tt)
    assert isinstance(chosen, CoordinateBlock) and chosen.k == 2
    r = rotated.matrix.detach()
    assert torch.allclose(r @ r.T, torch.eye(32), atol=1e-5)  # orthogonal after training


def test_the_trained_score_is_the_last_epochs_and_equals_scoring_the_trained_intervention_again(planted, monkeypatch):
    """train_and_score reads the trained intervention's held-out score from the last epoch's history scoring (no step
    follows it) instead of running the held-out pairs once more: the same dict as scoring the returned intervention anew."""
    from interp.models.labels import read_labels

    runner, own, ((tb, ts, tt), (hb, hs, ht)) = planted
    train, test = (tb[:256], ts[:256], tt[:256]), (hb[:200], hs[:200], ht[:200])
    reading = read_labels(("a", "b"), ("a", "b"))  # the identity: the planted model's ids are the labels
    calls = []
    counted = das_analysis.score_intervention

    def counting(runner_, intervention, bases, *args, **kwargs):
        calls.append(len(bases))
        return counted(runner_, intervention, bases, *args, **kwargs)

    monkeypatch.setattr(das_analysis, "score_intervention", counting)
    rotated = RotatedSubspace(32, 2, seed=0)
    found = das_analysis.train_and_score(runner, rotated, train, test, own, reading, FitSettings(epochs=3, lr=1e-2, batch_size=64, seed=0))
    assert calls.count(200) == 1 + 3  # untrained, then after each epoch; not again after training
    again = counted(runner, rotated, *test, own, reading.read)
    assert found.trained.keys() == again.keys()
    for key, value in again.items():
        assert np.array_equal(found.trained[key], value) if key.endswith("hits") else found.trained[key] == value, key
    assert found.trained["iia"] == found.history[-1]["held_out_iia"] and found.trained["iia"] > found.untrained["iia"]  # it trained


def test_the_best_block_is_the_one_with_the_best_iia_scored_one_at_a_time(planted, monkeypatch):
    """best_block scores several blocks per call (written_logits); its choice is the argmax of each block's IIA scored
    on its own through logits, whatever the rows per call, and it reports its progress."""
    runner, own, ((tb, ts, tt), _) = planted
    tb, ts, tt = tb[:300], ts[:300], tt[:300]
    one_at_a_time = [float((predict_pairs(runner, CoordinateBlock(32, j, j + 4), tb, ts) == tt.numpy()).mean()) for j in range(0, 32, 4)]
    assert len(set(one_at_a_time)) > 1  # the null: the blocks differ, so the choice means something
    for rows in (8192, 700, 1):  # all 8 blocks in one call; 2 blocks a call (the last call shorter); 1
        monkeypatch.setattr(das_analysis, "BLOCK_ROWS", rows)
        told = []
        chosen = best_block(runner, 4, tb, ts, tt, on_blocks=lambda done, blocks: told.append((done, blocks)))
        assert (chosen.start, chosen.stop) == (4 * int(np.argmax(one_at_a_time)), 4 * int(np.argmax(one_at_a_time)) + 4)
        assert told[-1] == (8, 8) and len(told) == {8192: 1, 700: 4, 1: 8}[rows]
    assert isinstance(best_block(runner, 32, tb, ts, tt), Interchange)


def test_written_logits_are_the_logits_of_an_intervention_with_those_outputs(mqnli):
    task, examples, model, encoded = mqnli
    loc = Location.parse("blocks.0.hook_resid_post@n_s.p+n_s.h")
    runner = PairSuffix(model, encoded, loc)
    block = CoordinateBlock(runner.width, 10, 30)
    bases, sources = torch.arange(0, 24), torch.arange(24, 0, -1)
    with torch.no_grad():
        expected = runner.logits(bases, sources, block)
    written = runner.written_logits(bases, block(runner.vectors[bases], runner.vectors[sources]))
    assert torch.equal(written, expected)
    with pytest.raises(ConfigError, match=r"vectors must be \[rows, width\] = \[24, 64\]"):
        runner.written_logits(bases, runner.vectors[:23])


def test_boundless_learns_a_small_subspace(planted):
    runner, own, ((tb, ts, tt), (hb, hs, ht)) = planted
    boundless = BoundlessSubspace(32, start=0.5, seed=0)
    fit_intervention(runner, boundless, tb, ts, tt, FitSettings(epochs=10, lr=1e-2, batch_size=128, seed=0, penalty=0.5))
    assert score_intervention(runner, boundless, hb, hs, ht, own)["iia"] >= 0.9
    assert boundless.k < 16  # shrank from half the width


def test_training_leaves_the_model_as_it_was(planted):
    runner, own, ((tb, ts, tt), _) = planted
    before = {k: v.clone() for k, v in runner.model.state_dict().items()}
    fit_intervention(runner, LowRankSubspace(32, 2, seed=1), tb[:64], ts[:64], tt[:64], FitSettings(epochs=1))
    after = runner.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert all(p.grad is None for p in runner.model.parameters())
    with pytest.raises(ValueError, match="no parameters to train"):
        fit_intervention(runner, Interchange(32), tb, ts, tt)
    assert np.isfinite(own).all()


@pytest.mark.parametrize("kind", ["rotated", "lowrank", "boundless", "block"])
def test_a_saved_intervention_reloads_to_the_same_function(tmp_path, kind):
    from interp.core.errors import DataError
    from interp.files.subspaces import load_trained_intervention, save_intervention

    made = {"rotated": RotatedSubspace(16, 3, seed=1), "lowrank": LowRankSubspace(16, 3, seed=1),
            "boundless": BoundlessSubspace(16, start=0.3, seed=1), "block": CoordinateBlock(16, 2, 9)}[kind]  # fmt: skip
    if made.trainable:  # trained a little, so its state is not the seeded start
        torch.optim.SGD(made.parameters(), lr=0.1).zero_grad()
        made(torch.randn(4, 16), torch.randn(4, 16)).pow(2).sum().backward()
        torch.optim.SGD(made.parameters(), lr=0.1).step()
    path = save_intervention(made, tmp_path / "x.blocks.1.hook_resid_post@cls", {"variable": "v", "model_sha256": "ab" * 32})
    assert path.name == "x.blocks.1.hook_resid_post@cls.safetensors"
    loaded, meta = load_trained_intervention(path, model_sha256="ab" * 32)
    b, s = torch.randn(5, 16), torch.randn(5, 16)
    assert type(loaded) is type(made) and loaded.k == made.k and meta["variable"] == "v"
    assert torch.allclose(loaded(b, s), made(b, s), atol=1e-6)
    assert not torch.allclose(RotatedSubspace(16, 3, seed=5)(b, s), made(b, s), atol=1e-3)  # the null: a fresh one differs
    path.write_bytes(b"not safetensors")
    with pytest.raises(DataError, match="not the weights file its sidecar was saved with"):
        load_trained_intervention(path)


def test_a_sidecar_and_its_weights_file_are_bound(tmp_path):
    """An edited location in the sidecar, a weights file swapped for another's, a foreign file: each named in one short line."""
    import json
    import shutil

    from safetensors.torch import save_file

    from interp.core.errors import DataError
    from interp.files.subspaces import load_trained_intervention, save_intervention

    meta = {"variable": "lexrel", "location": "blocks.1.hook_resid_post@w_h"}
    first = save_intervention(RotatedSubspace(16, 3, seed=1), tmp_path / "a", meta)
    other = save_intervention(RotatedSubspace(16, 3, seed=2), tmp_path / "b", meta)
    assert load_trained_intervention(first)[1]["location"] == meta["location"]  # the null: untouched files load
    sidecar = json.loads((tmp_path / "a.json").read_text())
    (tmp_path / "a.json").write_text(json.dumps({**sidecar, "location": "blocks.1.hook_resid_post@w_p"}))
    with pytest.raises(DataError, match="the sidecar was edited: location is 'blocks.1.hook_resid_post@w_p', but the weights were saved for 'blocks.1.hook_resid_post@w_h'"):
        load_trained_intervention(first)
    (tmp_path / "a.json").write_text(json.dumps(sidecar))
    shutil.copy(other, first)  # another run's weights under this sidecar
    with pytest.raises(DataError, match="not the weights file its sidecar was saved with"):
        load_trained_intervention(first)
    # A foreign file (many tensors, no interp metadata) under a sidecar that does not bind it, as older interp files.
    save_file({f"encoder.layer.{i}.weight": torch.zeros(2) for i in range(200)}, first)
    (tmp_path / "a.json").write_text(json.dumps({k: v for k, v in sidecar.items() if k != "weights_sha256"}))
    with pytest.raises(DataError, match=r"holds 200 tensor\(s\) \(encoder.layer.0.weight, encoder.layer.1.weight, encoder.layer.10.weight and 197 more\), not rotation\)") as caught:
        load_trained_intervention(first)
    assert len(str(caught.value)) < 400


def _brute_force_cost(lengths: list[int], cost: int) -> int:
    """The least Σ rows × longest + cost per group over every split of the sorted lengths into runs (2^(n-1) of them)."""
    ordered = sorted(lengths)
    best = None
    for mask in range(1 << max(len(ordered) - 1, 0)):
        groups, start = [], 0
        for cut in range(1, len(ordered)):
            if mask >> (cut - 1) & 1:
                groups.append(ordered[start:cut])
                start = cut
        groups.append(ordered[start:])
        total = sum(len(g) * max(g) + cost for g in groups)
        best = total if best is None else min(best, total)
    return best


def test_length_chunks_are_the_least_padded_split_of_the_sorted_rows():
    """Against brute force over every split into runs: the same least cost; each position once; runs of similar
    length, shortest first; one group in the given order where splitting does not pay."""
    rng = np.random.default_rng(0)
    for _ in range(60):
        lengths = rng.integers(3, 40, size=int(rng.integers(1, 11))).tolist()
        cost = int(rng.choice([0, 8, 32, 200]))
        chunks = length_chunks(lengths, cost)
        assert sorted(i for c in chunks for i in c) == list(range(len(lengths)))
        assert sum(len(c) * max(lengths[i] for i in c) + cost for c in chunks) == _brute_force_cost(lengths, cost)
        if len(chunks) > 1:
            assert all(max(lengths[i] for i in a) <= min(lengths[i] for i in b) for a, b in zip(chunks, chunks[1:]))
    assert length_chunks([5, 9, 5, 9], 0) == [[0, 2], [1, 3]]  # no padding at all when a group costs nothing
    assert length_chunks([5, 9, 5, 9], 100) == [[0, 1, 2, 3]]  # one padded pass, in order
    assert length_chunks([7, 7], 0) == [[0, 1]] and length_chunks([], 5) == []


def test_a_batch_split_by_length_gives_one_padded_pass_logits_and_gradients(mqnli):
    """With gradients, the pairs in runs of similar length (on a CPU, where it pays) give the logits and the
    rotation's gradient of one padded pass over the whole batch, to float rounding; in pair order."""
    task, examples, model, encoded = mqnli
    runner = PairSuffix(model, encoded, Location.parse("blocks.0.hook_resid_post@n_s.p+n_s.h"))
    # on a CPU a batch is split where a block after the location runs over every token; not where only [CLS]'s does
    assert chunk_cost(model, Location.parse("blocks.0.hook_resid_pre@cls")) > 0
    assert chunk_cost(model, Location.parse("blocks.0.hook_resid_post@cls")) is None is runner.chunk_cost
    bases, sources = torch.arange(39, -1, -1), torch.arange(40)
    lengths = runner.lengths[bases].tolist()
    assert len(length_chunks(lengths, 0)) > 1  # the batch mixes lengths: the split is exercised
    found = {}
    for cost in (0, None):
        runner.chunk_cost = cost
        rotated = RotatedSubspace(runner.width, 5, seed=3)
        with frozen_weights(model):
            logits = runner.logits(bases, sources, rotated)
            torch.nn.functional.cross_entropy(logits, torch.arange(40) % logits.shape[1]).backward()
        found[cost] = logits.detach(), next(p.grad for p in rotated.parameters() if p.grad is not None)
    assert torch.allclose(found[0][0], found[None][0], atol=1e-5)
    assert torch.allclose(found[0][1], found[None][1], atol=1e-5, rtol=1e-4)
    assert found[0][1].abs().max() > 1e-4  # the gradient is not zero


def test_dbm_over_a_basis_that_holds_the_plane_finds_its_two_features_through_the_one_trainer(planted):
    """DBM (a learned mask over a fixed basis, MIB's featurizer) trains through fit_intervention: over the basis whose
    first two columns span the planted plane it keeps those two and reaches the rotation's IIA; untrained (every mask
    at 0, nothing taken) it stays the base; over the neurons it needs many more features for the same plane."""
    from interp.engine.featurizers import FeatureMask, Identity, LinearBasis

    runner, own, ((tb, ts, tt), (hb, hs, ht)) = planted
    q, _ = torch.linalg.qr(torch.randn(32, 32, generator=torch.Generator().manual_seed(11)))  # the fixture's plane: q[:, :2]
    settings = FitSettings(epochs=4, lr=5e-2, batch_size=128, seed=0)
    basis = FeatureMask(LinearBasis(q[:, torch.randperm(32, generator=torch.Generator().manual_seed(3))]), l1=1e-3)
    before = score_intervention(runner, basis, hb, hs, ht, own)
    assert basis.k == 0 and before["stays_base"] == 1.0  # the untrained mask takes nothing
    losses = fit_intervention(runner, basis, tb, ts, tt, settings)
    after = score_intervention(runner, basis, hb, hs, ht, own)
    kept = basis.featurizer.basis[:, basis.hard_mask()]
    plane = q[:, :2]
    assert after["iia"] >= 0.95 and losses[-1] < losses[0] and basis.k <= 4
    assert torch.linalg.matrix_rank(torch.cat([kept, plane], 1), tol=1e-4) == basis.k  # the plane lies in what it kept
    neurons = FeatureMask(Identity(32), l1=1e-3)
    fit_intervention(runner, neurons, tb, ts, tt, settings)
    assert neurons.k > 2 * basis.k  # the same plane over the neurons: spread over many of them
