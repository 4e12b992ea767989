"""Fine-tuning on a tiny random BERT: learning, seeding, resume, and the checkpoint on disk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from interp.api.specs import DataSpec, RunSpec, SampleSpec
from interp.core.errors import ConfigError, OutputError
from interp.jobs.train import TrainConfig, train
from interp.models import (
    evaluate,
    finished_run,
    fit,
    load_classifier,
    predict_logits,
)
from interp.models.training import TRAINING_FILE, length_grouped_batches, save_checkpoint
from interp.models.training_state import read_training_state
from interp.tasks.monli import LABELS, encode_examples, load_monli


@pytest.fixture(scope="module")
def small_set(monli_dir, minilm_tokenizer):
    examples = load_monli(monli_dir, ("nmonli_test",))[:48]
    return examples, encode_examples(examples, minilm_tokenizer)


def _fresh(tiny_encoder_dir):
    return load_classifier(str(tiny_encoder_dir), labels=LABELS, seed=0)


CONFIG = TrainConfig(epochs=3, lr=2e-3, batch_size=8, warmup_ratio=0.0, seed=5)


def test_batches_cover_every_example_once_and_group_lengths(small_set):
    _, encoded = small_set
    batches = length_grouped_batches(encoded, 8, seed=1, group=2)
    flat = sorted(i for b in batches for i in b)
    assert flat == list(range(len(encoded)))
    assert batches == length_grouped_batches(encoded, 8, seed=1, group=2)
    assert batches != length_grouped_batches(encoded, 8, seed=2, group=2)


def test_fit_lowers_the_loss_and_is_reproducible(tiny_encoder_dir, small_set):
    _, encoded = small_set
    model_a, tok = _fresh(tiny_encoder_dir)
    log = fit(model_a, encoded, CONFIG, tok.pad_token_id, progress=False)
    assert [r["epoch"] for r in log] == [1, 2, 3]
    assert log[-1]["loss"] < log[0]["loss"]
    model_b, _ = _fresh(tiny_encoder_dir)
    fit(model_b, encoded, CONFIG, tok.pad_token_id, progress=False)
    for (name, a), (_, b) in zip(model_a.state_dict().items(), model_b.state_dict().items()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("reinit", [False, True], ids=["plain", "pooler-drawn-afresh"])
def test_interrupted_fit_resumes_to_the_same_weights(tiny_encoder_dir, small_set, tmp_path, reinit):
    """A fit interrupted in epoch 3 resumes from its state to the weights of an uninterrupted one (with the pooler
    drawn afresh too: the draw happens once, at the start, and the resumed run restores it rather than drawing again)."""
    _, encoded = small_set
    config = replace(CONFIG, reinit_pooler=reinit)
    reference, tok = _fresh(tiny_encoder_dir)
    fit(reference, encoded, config, tok.pad_token_id, progress=False)

    model, _ = _fresh(tiny_encoder_dir)
    state = tmp_path / "state.safetensors"
    steps_per_epoch = -(-len(encoded) // CONFIG.batch_size)
    calls = {"n": 0}
    original = model.forward

    def interrupting_forward(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2 * steps_per_epoch + 2:  # in the middle of epoch 3
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    model.forward = interrupting_forward
    with pytest.raises(KeyboardInterrupt):
        fit(model, encoded, config, tok.pad_token_id, state_path=state, fingerprint="f", progress=False)
    assert read_training_state(state).info["epoch"] == 2

    resumed, _ = _fresh(tiny_encoder_dir)
    log = fit(resumed, encoded, config, tok.pad_token_id, state_path=state, fingerprint="f", progress=False)
    assert [r["epoch"] for r in log] == [1, 2, 3]
    for (name, a), (_, b) in zip(reference.state_dict().items(), resumed.state_dict().items()):
        assert torch.equal(a, b), name  # the state round-trips exactly


def test_state_of_another_run_is_not_resumed(tiny_encoder_dir, small_set, tmp_path):
    _, encoded = small_set
    model, tok = _fresh(tiny_encoder_dir)
    config = TrainConfig(epochs=2, lr=2e-3, batch_size=8, seed=5)
    path = tmp_path / "s.safetensors"
    fit(model, encoded, config, tok.pad_token_id, state_path=path, fingerprint="a", progress=False)
    assert read_training_state(path).info == {"fingerprint": "a", "epoch": 1, "log": read_training_state(path).info["log"]}
    fresh, _ = _fresh(tiny_encoder_dir)
    log = fit(fresh, encoded, config, tok.pad_token_id, state_path=path, fingerprint="b", progress=False)
    assert [r["epoch"] for r in log] == [1, 2]


def test_train_writes_a_complete_checkpoint_and_reuses_it(tiny_encoder_dir, monli_dir, tmp_path):
    config = TrainConfig(
        model=str(tiny_encoder_dir),
        sample=SampleSpec(splits=("nmonli_train",), max_examples=64),
        epochs=1,
        batch_size=16,
        eval_splits=("nmonli_test",),
        data=DataSpec(data_dir=str(monli_dir)),
    )
    out = tmp_path / "run"
    result = train(replace(config, out=str(out)), progress=False)
    assert not result.reused and result.n_train == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no .partial left behind
    info = json.loads((out / "training.json").read_text())
    assert info["fingerprint"] == result.fingerprint and info["config"]["max_examples"] == 64
    assert (out / "model.safetensors").is_file() and finished_run(out) is not None

    # The checkpoint on disk is the model that was scored.
    model, tokenizer = load_classifier(str(out), require_head=True)
    test = load_monli(monli_dir, ("nmonli_test",))
    assert evaluate(model, tokenizer, test, labels=LABELS) == info["metrics"]

    with pytest.warns(DeprecationWarning, match="older form"):  # out as an argument still works
        again = train(config, out, progress=False)
    assert again.reused and again.metrics == result.metrics
    with pytest.raises(OutputError, match="already exists and holds another run"):
        train(replace(config, seed=9, out=str(out)), progress=False)


def test_fingerprints_are_what_they_were_before_the_settings_specs(monli_dir):
    """Pinned at da2500f (before TrainConfig held a DataSpec): a finished run made then is still reused, not trained again.
    The data's location is not part of it; the seed, splits, recipe and IIT settings are (a run of today's default recipe
    is another run)."""
    data = DataSpec(data_dir=str(monli_dir))
    recipe = {"lr": 1e-4, "batch_size": 32, "warmup_ratio": 0.1}  # the default recipe of the time, now given
    plain = TrainConfig(sample=SampleSpec(max_examples=100, seed=3), seed=3, epochs=2, data=data, **recipe)
    iit = TrainConfig(sample=SampleSpec(splits=("nmonli_train",)), iit="lexrel@blocks.2.hook_resid_post@w_h", iit_weight=0.5, epochs=3, data=data, **recipe)
    assert plain.fingerprint(["a", "b"]) == "f70215b92f4397cd" and iit.fingerprint(["c"]) == "933a53a68edbf180"
    assert replace(plain, data=DataSpec(data_dir="/elsewhere", verify_checksums=False)).fingerprint(["a", "b"]) == "f70215b92f4397cd"
    assert replace(plain, run=RunSpec(compile=False)).fingerprint(["a", "b"]) == "f70215b92f4397cd"  # how it runs, not what it learns
    assert replace(plain, seed=4).fingerprint(["a", "b"]) != "f70215b92f4397cd"
    assert replace(plain, sample=SampleSpec(max_examples=100, seed=4)).fingerprint(["a", "b"]) != "f70215b92f4397cd"  # a subset seed of its own
    assert TrainConfig(sample=SampleSpec(max_examples=100, seed=3), seed=3, epochs=2, data=data).fingerprint(["a", "b"]) != "f70215b92f4397cd"
    variants = {replace(plain, init="random").fingerprint(["a", "b"]), replace(plain, input="hypothesis").fingerprint(["a", "b"]),
                replace(plain, batching="shuffle").fingerprint(["a", "b"]), replace(plain, max_grad_norm=1.0).fingerprint(["a", "b"])}  # fmt: skip
    assert len(variants) == 4 and "f70215b92f4397cd" not in variants  # a baseline is never reused as the plain run


def test_shuffled_batching_mixes_lengths_and_trains_other_weights(tiny_encoder_dir, small_set):
    """``batching="shuffle"`` (group 1) draws each batch at random where the default sorts mega-batches by length."""
    _, encoded = small_set
    spread = lambda batches: sum(max(len(encoded[i].input_ids) for i in b) - min(len(encoded[i].input_ids) for i in b) for b in batches)
    grouped, shuffled = length_grouped_batches(encoded, 8, seed=1), length_grouped_batches(encoded, 8, seed=1, group=1)
    assert sorted(i for b in shuffled for i in b) == list(range(len(encoded)))
    assert spread(shuffled) > spread(grouped)
    weights = []
    for batching in ("length", "shuffle"):
        model, tok = _fresh(tiny_encoder_dir)
        fit(model, encoded, replace(CONFIG, epochs=1, batching=batching), tok.pad_token_id, progress=False)
        weights.append(model.classifier.weight.detach().clone())
    assert not torch.equal(*weights)


def test_random_init_keeps_the_architecture_and_tokenizer_and_draws_every_weight_from_the_seed(tiny_classifier_dir):
    """MoNLI Table 1's no-pretraining row: the checkpoint's config and tokenizer, none of its weights."""
    pretrained, tokenizer = load_classifier(str(tiny_classifier_dir), require_head=True)
    first, random_tokenizer = load_classifier(str(tiny_classifier_dir), require_head=True, seed=0, init="random")
    again, _ = load_classifier(str(tiny_classifier_dir), require_head=True, seed=0, init="random")
    other, _ = load_classifier(str(tiny_classifier_dir), require_head=True, seed=1, init="random")
    assert type(first) is type(pretrained) and first.config.to_diff_dict().keys() >= {"hidden_size", "num_hidden_layers"}
    assert first.config.hidden_size == pretrained.config.hidden_size and first.config.id2label == pretrained.config.id2label
    assert random_tokenizer.get_vocab() == tokenizer.get_vocab()
    kept, drawn, seeded = pretrained.state_dict(), first.state_dict(), other.state_dict()
    assert kept.keys() == drawn.keys()
    for name, value in drawn.items():
        assert torch.equal(value, again.state_dict()[name]), name  # the seed decides
        if value.is_floating_point() and value.numel() > 1 and "LayerNorm" not in name and "bias" not in name:
            assert not torch.equal(value, kept[name]), name  # no pretrained weight survives
            assert not torch.equal(value, seeded[name]), name  # another seed, other weights


def test_the_hypothesis_only_baseline_never_sees_the_premise(tiny_encoder_dir, monli_dir, minilm_tokenizer, tmp_path):
    """Trained and scored on the hypothesis alone: its predictions cannot depend on the premise (the null: the pair model's do)."""
    from interp.hooks.encoding import HypothesisOnly, encode_pair, input_view
    from interp.api.evaluation import score_checkpoint
    from interp.tasks import resolve_task

    task = resolve_task("monli", data_dir=str(monli_dir))

    examples = load_monli(monli_dir, ("nmonli_test",))[:24]
    seen = encode_pair(HypothesisOnly(examples[0]), minilm_tokenizer, LABELS)
    assert list(seen.input_ids) == minilm_tokenizer("", examples[0].hypothesis)["input_ids"]
    config = TrainConfig(model=str(tiny_encoder_dir), sample=SampleSpec(splits=("nmonli_train",), max_examples=48), epochs=1, batch_size=16, lr=5e-3,
                         eval_splits=("nmonli_test",), data=DataSpec(data_dir=str(monli_dir)))  # fmt: skip
    other = [replace(e, premise=examples[(i + 7) % len(examples)].premise) for i, e in enumerate(examples)]  # premises swapped
    for input, invariant in (("hypothesis", True), ("pair", False)):
        out = tmp_path / input
        train(replace(config, input=input, out=str(out)), progress=False)
        model, tokenizer = load_classifier(str(out), require_head=True)
        logits = [predict_logits(model, [encode_pair(e, tokenizer, LABELS) for e in input_view(batch, input)], tokenizer.pad_token_id)
                  for batch in (examples, other)]  # fmt: skip
        assert torch.allclose(*logits, atol=1e-5) is invariant, input
        record = json.loads((out / TRAINING_FILE).read_text())
        assert record["config"]["input"] == input
        assert score_checkpoint(str(out), task, ("nmonli_test",)) == record["metrics"]  # `interp evaluate` reads as it was trained


def test_unwritable_output_is_refused_before_training(tiny_encoder_dir, monli_dir, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    config = TrainConfig(model=str(tiny_encoder_dir), sample=SampleSpec(splits=("nmonli_test",)), epochs=1, data=DataSpec(data_dir=str(monli_dir)))
    with pytest.raises(OutputError, match="out=.*file/run.partial: cannot create directory"):
        train(replace(config, out=str(blocker / "run")), progress=False)


def test_a_checkpoint_replaces_a_stale_staging_folder(tiny_encoder_dir, tmp_path):
    """A run killed while saving leaves its staging folder; the next save clears it and lands whole."""
    model, tok = _fresh(tiny_encoder_dir)
    staging, out = tmp_path / "staging", tmp_path / "model"
    staging.mkdir()
    (staging / "stale.bin").write_bytes(b"left by a killed run")
    assert save_checkpoint(model, tok, {"run": 1}, out, staging) == out
    assert not staging.exists() and not (out / "stale.bin").exists()
    assert (out / "model.safetensors").is_file() and json.loads((out / TRAINING_FILE).read_text()) == {"run": 1}


def test_predict_logits_keeps_input_order(tiny_classifier_dir, small_set):
    _, encoded = small_set
    model, tok = load_classifier(str(tiny_classifier_dir), require_head=True)
    batched = predict_logits(model, encoded, tok.pad_token_id, batch_size=7)
    with torch.no_grad():
        for i in (0, 13, 47):
            ids = torch.tensor([encoded[i].input_ids])
            one = model(input_ids=ids, token_type_ids=torch.tensor([encoded[i].token_type_ids])).logits[0]
            assert torch.allclose(batched[i], one, atol=1e-5)


def test_train_seeds_writes_each_seeds_checkpoint_and_the_table_over_seeds(tiny_encoder_dir, monli_dir, tmp_path):
    """`interp train --seeds`: one resumable checkpoint per seed, every seed's accuracy, their mean and t interval; a second
    run with one more seed trains only that seed."""
    import csv

    from click.testing import CliRunner

    from interp.analysis.intervals import mean_interval
    from interp.cli import main

    out = tmp_path / "seeds"
    args = ["train", "--model", str(tiny_encoder_dir), "--splits", "nmonli_train", "--max-examples", "32", "--epochs", "1", "--lr", "5e-3",
            "--eval-splits", "nmonli_test", "--data-dir", str(monli_dir), "--quiet", "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--seeds", "0,1"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(out / "seeds.csv")))
    assert [(r["seed"], r["split"]) for r in rows] == [("0", "nmonli_test"), ("1", "nmonli_test")]
    assert all(float(r["wilson_low"]) <= float(r["accuracy"]) <= float(r["wilson_high"]) for r in rows)
    (summary,) = list(csv.DictReader(open(out / "seeds_summary.csv")))
    accuracies = [json.loads((out / f"seed{s}" / TRAINING_FILE).read_text())["metrics"]["nmonli_test"]["accuracy"] for s in (0, 1)]
    mean, low, high = mean_interval(accuracies)
    assert float(summary["seed_0"]) == pytest.approx(accuracies[0], abs=1e-4) and float(summary["mean"]) == pytest.approx(mean, abs=1e-4)
    assert float(summary["t_low"]) == pytest.approx(low, abs=1e-4) and float(summary["t_high"]) == pytest.approx(high, abs=1e-4)
    assert "seed 0" in result.output and "mean [95% t interval over seeds]" in result.output
    before = (out / "seed0" / "model.safetensors").stat().st_mtime_ns
    again = CliRunner().invoke(main, [*args, "--seeds", "0,1,2"])
    assert again.exit_code == 0, again.output
    assert (out / "seed0" / "model.safetensors").stat().st_mtime_ns == before and (out / "seed2" / TRAINING_FILE).is_file()
    assert len(list(csv.DictReader(open(out / "seeds.csv")))) == 3



@pytest.mark.slow(seconds=10)
def test_seeds_trained_at_once_give_what_each_gives_alone(tiny_encoder_dir, monli_dir, tmp_path):
    """`interp train --seeds 0,1 --workers 2`: two processes train the seeds at once; each checkpoint's weights and
    figures equal the one-at-a-time run's, and --workers without --seeds is refused."""
    from click.testing import CliRunner
    from safetensors.torch import load_file

    from interp.cli import main

    args = ["train", "--model", str(tiny_encoder_dir), "--splits", "nmonli_train", "--max-examples", "32", "--epochs", "1", "--lr", "5e-3",
            "--eval-splits", "nmonli_test", "--data-dir", str(monli_dir), "--device", "cpu", "--quiet"]  # fmt: skip
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a CPU's sums depend on its thread count: the workers take no more threads than this process
    try:
        alone = CliRunner().invoke(main, [*args, "--seeds", "0,1", "--out", str(tmp_path / "alone")])
        together = CliRunner().invoke(main, [*args, "--seeds", "0,1", "--workers", "2", "--out", str(tmp_path / "together")])
    finally:
        torch.set_num_threads(threads)
    assert alone.exit_code == 0 and together.exit_code == 0, alone.output + together.output
    for seed in (0, 1):
        a, b = (load_file(tmp_path / run / f"seed{seed}" / "model.safetensors") for run in ("alone", "together"))
        assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
        metrics = [json.loads((tmp_path / run / f"seed{seed}" / TRAINING_FILE).read_text())["metrics"] for run in ("alone", "together")]
        assert metrics[0] == metrics[1]
    assert (tmp_path / "alone" / "seeds_summary.csv").read_text() == (tmp_path / "together" / "seeds_summary.csv").read_text()
    refused = CliRunner().invoke(main, [*args, "--workers", "2", "--out", str(tmp_path / "one")])
    assert refused.exit_code == 2 and "--workers trains several --seeds at once" in refused.output and not (tmp_path / "one").exists()


def test_bf16_steps_keep_attention_off_cudnn(tiny_encoder_dir, small_set, monkeypatch):
    """Each bf16 step runs inside :func:`attention_without_cudnn` (cuDNN plans each new batch shape); fp32 steps do not."""
    from contextlib import contextmanager

    import interp.models.training as training

    entered = []

    @contextmanager
    def recorded():
        entered.append(torch.backends.cuda.cudnn_sdp_enabled())
        yield

    monkeypatch.setattr(training, "attention_without_cudnn", recorded)
    _, encoded = small_set
    steps = len(length_grouped_batches(encoded, CONFIG.batch_size, CONFIG.seed))
    for precision, expected in (("fp32", 0), ("bf16", steps)):
        entered.clear()
        model, tok = _fresh(tiny_encoder_dir)
        fit(model, encoded, replace(CONFIG, epochs=1, precision=precision), tok.pad_token_id, progress=False)
        assert len(entered) == expected, precision


def test_max_grad_norm_clips_every_step_and_none_leaves_the_gradient_alone(tiny_encoder_dir, small_set):
    """``max_grad_norm`` scales each step's gradient to that global L2 norm: a tiny bound leaves AdamW's steps far smaller
    (its epsilon then dominates), and an unreachable one trains exactly the unclipped weights."""
    _, encoded = small_set
    moved = {}
    for clip in (None, 1e-12, 1e12):
        model, tok = _fresh(tiny_encoder_dir)
        before = model.classifier.weight.detach().clone()
        fit(model, encoded, replace(CONFIG, epochs=1, max_grad_norm=clip), tok.pad_token_id, progress=False)
        moved[clip] = model.classifier.weight.detach() - before
    assert moved[1e-12].norm() < 0.1 * moved[None].norm()
    assert torch.equal(moved[1e12], moved[None])


def test_head_epochs_train_the_head_alone_first_and_give_the_encoder_back(tiny_encoder_dir, small_set):
    """LP-FT's first stage: with ``head_epochs`` the encoder's weights do not move during those epochs (checked with the
    fine-tuning's own epochs set to a rate of ~0), the head does, every parameter trains again after, and the head
    epochs' losses open the history."""
    _, encoded = small_set
    model, tok = _fresh(tiny_encoder_dir)
    encoder = {k: v.detach().clone() for k, v in model.base_model.state_dict().items()}
    head = model.classifier.weight.detach().clone()
    log = fit(model, encoded, replace(CONFIG, epochs=1, lr=1e-30, head_epochs=2, head_lr=1e-2), tok.pad_token_id, progress=False)
    assert len(log) == 1 and len(log[0]["head_losses"]) == 2
    assert all(torch.allclose(v, model.base_model.state_dict()[k]) for k, v in encoder.items())
    assert not torch.allclose(head, model.classifier.weight)
    assert all(p.requires_grad for p in model.parameters())
    plain, _ = _fresh(tiny_encoder_dir)
    assert "head_losses" not in fit(plain, encoded, replace(CONFIG, epochs=1), tok.pad_token_id, progress=False)[0]
    assert replace(CONFIG, head_epochs=2).fingerprint(["a"]) != CONFIG.fingerprint(["a"])
    assert replace(CONFIG, head_lr=0.5).fingerprint(["a"]) == CONFIG.fingerprint(["a"])  # no head epochs: their rate plays no part


def test_workers_refuse_settings_that_cannot_reach_another_process(tiny_encoder_dir, monli_dir, tmp_path):
    from interp.jobs.seeds import train_seeds

    config = TrainConfig(model=str(tiny_encoder_dir), epochs=1, data=DataSpec(data_dir=str(monli_dir)))
    with pytest.raises(ConfigError, match="workers"):
        train_seeds(replace(config, out=str(tmp_path / "s")), seeds=(0, 1), trainer=lambda *a, **k: None, workers=2)
    with pytest.raises(ConfigError, match="workers"):
        train_seeds(replace(config, out=str(tmp_path / "s")), seeds=(0, 1), workers=0)
    assert not (tmp_path / "s").exists()


def test_frozen_weights_freezes_all_but_the_kept_and_restores_every_flag_even_on_error():
    """Inside the block only the kept parameters (and those already trainable among them) get gradients; after it,
    every flag is what it was, a weight frozen before the block included, also when the block raises."""
    from interp.models.freezing import frozen_weights

    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 2))
    model[0].bias.requires_grad_(False)  # frozen before: stays frozen after
    before = [p.requires_grad for p in model.parameters()]
    with pytest.raises(RuntimeError, match="inside"), frozen_weights(model, keep=model[1].parameters()):
        assert [p.requires_grad for p in model.parameters()] == [False, False, True, True]
        model(torch.randn(4, 3)).sum().backward()
        assert model[0].weight.grad is None and model[1].weight.grad is not None
        raise RuntimeError("inside")
    assert [p.requires_grad for p in model.parameters()] == before == [True, False, True, True]


def test_reinit_pooler_draws_the_pooler_afresh_seeded_and_leaves_the_rest_of_the_run_as_it_was(tiny_encoder_dir, small_set):
    """``reinit_pooler`` replaces the pretrained pooler before the first epoch with weights drawn from the model's
    ``initializer_range`` by the seed alone (a naive draw matches), leaves every other weight's start and the global
    random stream untouched, and is part of the fingerprint only when set."""
    from interp.models.training import reinit_pooler

    _, encoded = small_set
    model, tok = _fresh(tiny_encoder_dir)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    state = torch.random.get_rng_state()
    assert reinit_pooler(model, seed=7) == ["bert.pooler.dense"]
    assert torch.equal(state, torch.random.get_rng_state())
    torch.manual_seed(7)
    expected = torch.empty_like(before["bert.pooler.dense.weight"]).normal_(0.0, model.config.initializer_range)
    assert torch.equal(model.bert.pooler.dense.weight, expected)
    assert not model.bert.pooler.dense.bias.any()
    changed = {k for k, v in model.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == {"bert.pooler.dense.weight"}  # (a new model's biases are 0 already)

    # Through fit: the same as drawing it first and fitting without the setting; a different run from the default.
    config = replace(CONFIG, epochs=1)
    drawn, _ = _fresh(tiny_encoder_dir)
    fit(drawn, encoded, replace(config, reinit_pooler=True), tok.pad_token_id, progress=False)
    by_hand, _ = _fresh(tiny_encoder_dir)
    reinit_pooler(by_hand, config.seed)
    fit(by_hand, encoded, config, tok.pad_token_id, progress=False)
    plain, _ = _fresh(tiny_encoder_dir)
    fit(plain, encoded, config, tok.pad_token_id, progress=False)
    assert all(torch.equal(v, by_hand.state_dict()[k]) for k, v in drawn.state_dict().items())
    assert not torch.equal(drawn.classifier.weight, plain.classifier.weight)
    assert replace(CONFIG, reinit_pooler=True).fingerprint(["a"]) != CONFIG.fingerprint(["a"])
    with pytest.raises(ConfigError, match="reinit_pooler"):
        replace(CONFIG, reinit_pooler="yes").validate()


@pytest.mark.parametrize("family", ["bert", "roberta", "electra", "distilbert", "deberta-v2", "modernbert"])
def test_reinit_pooler_finds_a_pooler_where_the_family_has_one_and_refuses_otherwise(family):
    from families import family_model
    from interp.core.errors import ModelError
    from interp.models.training import reinit_pooler

    model = family_model(family)
    if family in ("bert", "deberta-v2"):
        names = reinit_pooler(model, 0)
        assert names and all("pooler" in n.split(".") for n in names)
    else:
        with pytest.raises(ModelError, match="reinit_pooler"):
            reinit_pooler(model, 0)


def test_seeds_into_a_folder_of_other_seeds_are_refused_then_replace_them(tmp_path, monkeypatch):
    """An --out holding an earlier --seeds run of other seeds: refused (its tables would not list them), and with
    overwrite its other seeds' checkpoints are removed so that the folders and the tables agree."""
    from interp.api.training import TRAINING_FILE
    from interp.core.errors import OutputError
    from interp.jobs.seeds import train_seeds
    from interp.jobs.train import TrainConfig, TrainResult

    out = tmp_path / "s"
    for seed in (1, 2):
        (out / f"seed{seed}").mkdir(parents=True)
        (out / f"seed{seed}" / TRAINING_FILE).write_text("{}")

    def fake(config, progress=False):
        return TrainResult(out_dir=Path(config.out), config={}, fingerprint="", n_train=1, epochs=[], metrics={}, seconds=0.0, labels={},
                           environment={})  # fmt: skip

    config = TrainConfig(out=str(out))
    with pytest.raises(OutputError, match=r"holds the checkpoints of other seeds \(seed2\)"):
        train_seeds(config, seeds=(0, 1), trainer=fake)
    assert (out / "seed2").is_dir()
    train_seeds(replace(config, overwrite=True), seeds=(0, 1), trainer=fake)
    assert not (out / "seed2").exists() and (out / "seed1").is_dir()


def test_train_blocks_trains_the_top_blocks_and_the_head_alone_and_gives_every_flag_back(tiny_encoder_dir, small_set):
    """``train_blocks=1``: the embeddings and every block but the last keep their weights exactly, the last block and the
    head move, every weight is trainable again after; 0 trains what lies above the blocks alone; too many is refused
    naming the setting; the setting is part of the fingerprint only when given."""
    from interp.hooks.context import site_modules
    from interp.models.freezing import top_parameters

    _, encoded = small_set
    model, tok = _fresh(tiny_encoder_dir)
    modules = site_modules(model)
    before = [{k: v.detach().clone() for k, v in m.state_dict().items()} for m in modules]
    head = model.classifier.weight.detach().clone()
    fit(model, encoded, replace(CONFIG, epochs=1, train_blocks=1), tok.pad_token_id, progress=False)
    for m, old in zip(modules[:-1], before[:-1]):
        assert all(torch.equal(v, m.state_dict()[k]) for k, v in old.items())
    assert any(not torch.equal(v, modules[-1].state_dict()[k]) for k, v in before[-1].items())
    assert not torch.equal(head, model.classifier.weight)
    assert all(p.requires_grad for p in model.parameters())
    above = {id(p) for p in top_parameters(model, 0)}
    assert id(model.classifier.weight) in above and not above & {id(p) for m in modules for p in m.parameters()}
    with pytest.raises(ConfigError, match="train_blocks"):
        top_parameters(model, len(modules))
    with pytest.raises(ConfigError, match="train_blocks"):
        replace(CONFIG, train_blocks=-1).validate()
    assert replace(CONFIG, train_blocks=2).fingerprint(["a"]) != CONFIG.fingerprint(["a"])
    assert replace(CONFIG, train_blocks=None).fingerprint(["a"]) == CONFIG.fingerprint(["a"])


def test_the_fused_adamw_takes_the_loops_steps_within_float_rounding():
    """Fine-tuning's AdamW runs torch's fused kernel on the CPU: after a few steps the weights equal the per-tensor
    loop's within float rounding, and a parameter that is not a float tensor on a CPU or CUDA device gets the loop."""
    import copy

    from interp.models.training import adamw

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(50, 16), torch.nn.Flatten(), torch.nn.Linear(64, 3))
    other, start = copy.deepcopy(model), copy.deepcopy(model)
    fused, loop = adamw(model.parameters(), lr=1e-2, weight_decay=0.01), torch.optim.AdamW(other.parameters(), lr=1e-2, weight_decay=0.01)
    assert fused.defaults["fused"] and not loop.defaults.get("fused")
    ids = torch.randint(0, 50, (8, 4))
    for net, optimizer in ((model, fused), (other, loop)):
        for _ in range(5):
            torch.nn.functional.cross_entropy(net(ids), torch.arange(8) % 3).backward()
            optimizer.step()
            optimizer.zero_grad()
    moved = [(a - b).abs().max().item() for a, b in zip(model.parameters(), other.parameters())]
    assert max(moved) < 1e-5, moved
    assert min((p - q).abs().max().item() for p, q in zip(model.parameters(), start.parameters())) > 1e-3  # the steps moved every weight
    assert not adamw([torch.nn.Parameter(torch.zeros(2, device="meta"))], lr=1e-3).defaults.get("fused")
