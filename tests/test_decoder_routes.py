"""The routes of a decoder's fine-tuning (LoRA adapters, label words) and the learning curve a run records, on tiny
random decoders: adapters merged compute what they computed applied; a LoRA run trains the adapters and the head
alone; the label-word route's loss reads only its words' rows; a curve's points, and a run resumed from one of them."""

from __future__ import annotations

import csv

import pytest
import torch

import interp
from interp.core.errors import ConfigError
from interp.hooks.encoding import collate, encode_pair
from interp.models.lora import add_adapters, adapted_layers, has_adapters, merge_adapters

from decoders import save_decoder, tokenizer, tokenizer_kind

WORDS = {"entailment": " yes", "neutral": " no"}


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_train"), n=24, seed=0)


def _model(family, monli_dir, path, causal_lm=False):
    tok = tokenizer(tokenizer_kind(family), str(monli_dir))
    return interp.load_model(save_decoder(family, path, tok, causal_lm=causal_lm), label_words=WORDS if causal_lm else None)


def _logits(model, examples):
    encoded = [encode_pair(e, model.tokenizer, {"entailment": 0, "neutral": 1}, model.module.template) for e in examples]
    batch = collate(encoded, model.tokenizer.pad_token_id)
    model.module.eval()
    with torch.no_grad():
        return model.module(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits


@pytest.mark.parametrize("family", ["llama", "gpt2"])  # nn.Linear projections; GPT-2's Conv1D (weights stored transposed)
def test_adapters_merged_compute_what_they_computed_applied(family, examples, monli_dir, tmp_path):
    """Adapters with random A and B (B starts at zero, so a fresh adapter would change nothing): the logits with the
    adapters applied and after they are merged agree within 1e-5, and the merged model holds the plain model's weights'
    names and no adapter; before the adapters were changed they changed nothing."""
    model = _model(family, monli_dir, tmp_path / family)
    names = set(model.module.state_dict())
    plain = _logits(model, examples)
    layers = adapted_layers(model.module)
    adapters = add_adapters(model.module, 4, seed=0)
    assert len(adapters) == 2 * len(layers) and has_adapters(model.module)
    assert torch.allclose(_logits(model, examples), plain, atol=1e-6, rtol=0)  # B = 0: the pretrained model's logits
    with torch.no_grad():
        for p in adapters:
            p.normal_(0.0, 0.05)
    applied = _logits(model, examples)
    assert (applied - plain).abs().max() > 1e-2  # the adapters now matter
    assert merge_adapters(model.module) == len(adapters) // 2
    merged = _logits(model, examples)
    assert torch.allclose(merged, applied, atol=1e-5, rtol=0), (merged - applied).abs().max()
    assert set(model.module.state_dict()) == names and not has_adapters(model.module) and merge_adapters(model.module) == 0


def test_adapted_layers_are_every_linear_layer_of_the_blocks_and_nothing_else(monli_dir, tmp_path):
    """Llama's seven projections in each of its 3 blocks; no embedding, final norm or head."""
    layers = adapted_layers(_model("llama", monli_dir, tmp_path / "llama").module)
    assert len(layers) == 3 * 7 and all(".layers." in n for n in layers)
    assert {n.rsplit(".", 1)[1] for n in layers} == {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}


def test_a_lora_run_trains_the_adapters_and_what_lies_above_the_blocks_and_leaves_a_plain_model(task, examples, monli_dir, tmp_path):
    """fine_tune(lora_rank=4): the embeddings stay as they were, every adapted layer's weight moves (the adapters merged
    into it), the layers LoRA leaves alone inside the blocks (the norms) stay, and the head and final norm train; the
    result holds no adapter, and the argument model is untouched."""
    model = _model("llama", monli_dir, tmp_path / "llama")
    before = {n: p.detach().clone() for n, p in model.module.named_parameters()}
    tuned = interp.fine_tune(model, task, examples, epochs=1, batch_size=4, lr=1e-2, seed=0, lora_rank=4)
    assert not has_adapters(tuned.module) and not has_adapters(model.module)
    adapted = {f"{n}.weight" for n in adapted_layers(model.module)}
    for name, value in tuned.module.named_parameters():
        moved = not torch.allclose(value, before[name], atol=0, rtol=0)
        above = name.startswith(("inner.score.", "inner.model.norm."))
        assert moved == (name in adapted or above) or (value.numel() == 1), name
        assert torch.equal(model.module.state_dict()[name], before[name]), name


def test_lora_is_seeded_and_refused_beside_top_blocks_or_without_a_rank(task, examples, monli_dir, tmp_path):
    model = _model("llama", monli_dir, tmp_path / "llama")
    one, two = (interp.fine_tune(model, task, examples, epochs=1, batch_size=8, lr=1e-2, seed=3, lora_rank=2) for _ in range(2))
    assert all(torch.allclose(a, b, atol=1e-6, rtol=0) for a, b in zip(one.module.parameters(), two.module.parameters()))
    with pytest.raises(ConfigError, match="lora_rank.*train_blocks"):
        interp.fine_tune(model, task, examples, epochs=1, lora_rank=2, train_blocks=1)
    with pytest.raises(ConfigError, match="lora_alpha.*lora_rank"):
        interp.fine_tune(model, task, examples, epochs=1, lora_alpha=4.0)
    with pytest.raises(ConfigError, match="lora_rank"):
        interp.fine_tune(model, task, examples, epochs=1, lora_rank=0)


def test_the_label_word_routes_loss_reads_only_its_words_rows(examples, monli_dir, tmp_path):
    """A causal LM read through ' yes' and ' no' (Llama's LM head is its own matrix here): the loss's gradient on the
    LM head is non-zero on those two rows and zero on every other of the vocabulary's rows."""
    model = _model("llama", monli_dir, tmp_path / "lm", causal_lm=True)
    encoded = [encode_pair(e, model.tokenizer, {"entailment": 0, "neutral": 1}, model.module.template) for e in examples[:8]]
    batch = collate(encoded, model.tokenizer.pad_token_id)
    out = model.module(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=batch["labels"])
    out.loss.backward()
    grad = model.module.inner.get_output_embeddings().weight.grad
    rows = set(model.module.word_ids.tolist())
    touched = set(torch.nonzero(grad.abs().sum(dim=1)).flatten().tolist())
    assert touched == rows and len(rows) == 2 and grad.shape[0] > 100


def _config(monli_dir, path, out, **settings):
    from interp.api.specs import DataSpec, SampleSpec
    from interp.jobs.train import TrainConfig

    return TrainConfig(model=str(path), data=DataSpec(data_dir=str(monli_dir)), sample=SampleSpec(max_examples=40, seed=0),
                       eval_splits=("nmonli_test",), epochs=2, batch_size=8, lr=1e-3, seed=0, out=str(out), **settings)  # fmt: skip


def test_a_learning_curve_has_a_point_every_n_steps_and_an_interrupted_run_resumes_from_its_last(monli_dir, tmp_path, monkeypatch):
    """40 examples, batch 8, 2 epochs: 10 steps, a point every 3 (0, 3, 6, 9 and the last, 10), each split's accuracy
    with its Wilson interval in curve.csv, the training seconds rising. A run interrupted at its point at step 9 resumes
    from the state kept at step 6 (one batch into the second epoch of 5 batches) and ends with the weights and the
    curve of a run never interrupted."""
    from interp.core.estimates import wilson
    from interp.jobs import train as job
    from interp.models import training

    path = save_decoder("llama", tmp_path / "llama", tokenizer("sentencepiece", str(monli_dir)))
    whole = job.train(_config(monli_dir, path, tmp_path / "whole", curve_every=3, lora_rank=2), progress=False)
    rows = list(csv.DictReader((whole.out_dir / job.CURVE_FILE).open()))
    assert [int(r["step"]) for r in rows] == [0, 3, 6, 9, 10] and {r["split"] for r in rows} == {"nmonli_test"}
    for r in rows:
        interval = wilson(int(r["correct"]), int(r["n"]))
        assert int(r["n"]) > 0 and float(r["low"]) == pytest.approx(interval.low, abs=1e-4)
        assert float(r["low"]) <= float(r["accuracy"]) <= float(r["high"]) and float(r["accuracy"]) == pytest.approx(int(r["correct"]) / int(r["n"]), abs=1e-4)
    seconds = [float(r["seconds"]) for r in rows]
    assert seconds[0] == 0 and all(b >= a for a, b in zip(seconds, seconds[1:])) and seconds[-1] > 0
    final = interp.load_model(whole.out_dir).module.state_dict()
    gathered = _curves_script().gather([whole.out_dir])  # the results page's script reads the run as it was trained
    assert {r["route"] for r in gathered} == {"LoRA r2 a4, new head"} and [r["step"] for r in gathered] == [r["step"] for r in rows]

    calls = {"n": 0}
    real = training.Curve.point

    def stop_at_step_9(self, *args):
        calls["n"] += 1
        if calls["n"] == 4:  # the point at step 9, after the points at 0, 3 and 6
            raise KeyboardInterrupt
        return real(self, *args)

    monkeypatch.setattr(training.Curve, "point", stop_at_step_9)
    config = _config(monli_dir, path, tmp_path / "stopped", curve_every=3, lora_rank=2)
    with pytest.raises(KeyboardInterrupt):
        job.train(config, progress=False)
    monkeypatch.setattr(training.Curve, "point", real)
    state = training.read_training_state(tmp_path / "stopped.partial" / training.STATE_FILE)
    assert state is not None and state.info["epoch"] == 1 and state.info["partial"]["step"] == 1  # step 6: one batch into epoch 2
    resumed = job.train(config, progress=False)
    again = list(csv.DictReader((resumed.out_dir / job.CURVE_FILE).open()))
    assert [(r["step"], r["correct"]) for r in again] == [(r["step"], r["correct"]) for r in rows]
    for name, value in interp.load_model(resumed.out_dir).module.state_dict().items():
        assert torch.allclose(value, final[name], atol=1e-5, rtol=0), name


def _curves_script():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "decoders" / "learning_curves.py"
    spec = importlib.util.spec_from_file_location("learning_curves", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_curves_table_reads_each_runs_first_best_and_last_point(tmp_path):
    """Two routes' rows: the table gives each run's step 0, its best point (the earliest of the most correct) and its
    last, with Wilson intervals, and the figure is drawn."""
    script = _curves_script()
    rows = []
    for route, points in (("every weight, new head", [(0, 100), (10, 130), (20, 120)]), ("top 2 blocks, new head", [(0, 90), (10, 90)])):
        for step, correct in points:
            interval = __import__("interp.core.estimates", fromlist=["wilson"]).wilson(correct, 200)
            rows.append({"route": route, "lr": "5e-05", "epochs": "2", "step": str(step), "examples": str(16 * step), "seconds": str(2.0 * step),
                         "seconds_per_step": "2.000" if step else "nan", "split": "nmonli_test", "correct": str(correct), "n": "200",
                         "accuracy": str(correct / 200), "low": str(interval.low), "high": str(interval.high)})  # fmt: skip
    lines = script.table(rows).splitlines()
    assert len(lines) == 4 and lines[2].startswith("| every weight, new head | 5e-05 | 2 | 2.00 | NMoNLI test | 50.0 [43.1, 56.9] | 65.0 [")
    assert "(10) | 60.0 [" in lines[2] and lines[2].endswith("(20) |") and "45.0 [38.3, 51.9] (0) | 45.0 [38.3, 51.9] (10) |" in lines[3]
    slowed = [{"step": str(k), "seconds": str(t)} for k, t in ((0, 0), (10, 20), (20, 100), (30, 120))]  # one segment beside other work
    assert script.step_seconds(slowed) == 2.0
    script.write(rows, tmp_path / "c.csv")
    assert script.table(script.read(tmp_path / "c.csv")) == script.table(rows)
    script.figure(rows, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_bad_curve_and_lora_settings_are_refused_by_name(monli_dir, tmp_path):
    from interp.jobs.train import TrainConfig

    path = tmp_path / "none"
    for settings, message in (({"curve_every": 0}, "curve_every"), ({"lora_rank": 2, "train_blocks": 1}, "lora_rank")):
        with pytest.raises(ConfigError, match=message):
            _config(monli_dir, path, tmp_path / "out", **settings).validate()
    assert TrainConfig.__dataclass_fields__["curve_every"].default is None


def test_a_packaged_models_recipe_fills_only_what_the_command_line_left_at_its_defaults():
    """smollm2-135m's recipe (LoRA rank 8 at lr 3e-4 for 2 epochs, read through ' Yes' and ' No') is what `interp train`
    and `interp demo` take where no flag says otherwise, said on stderr; a flag given wins, --train-blocks keeps the
    adapters out and a head's --label-map the label words, --lora-rank 0 and --label-words none say no to each, and a model without a recipe keeps the defaults."""
    import json

    import click
    from click.testing import CliRunner

    from interp.cli import options as o
    from interp.models.gguf import PACKAGED

    @click.command()
    @o.model()
    @o.settings("fit", click.option("--epochs", type=int, default=5), click.option("--lr", type=float, default=5e-5), o.TRAIN_BLOCKS, o.LORA_RANK)
    def command(model, reading, fit):
        o.model_recipe(model, fit, reading)
        click.echo(json.dumps({**fit, "label_words": reading["label_words"]}))

    def run(*args):
        found = CliRunner().invoke(command, list(args))
        assert found.exit_code == 0, found.output
        return json.loads(found.stdout), found.stderr

    words = "entailment= Yes,neutral= No"
    assert dict(PACKAGED["smollm2-135m"].recipe) == dict(PACKAGED["gemma3-270m"].recipe) == {"lora_rank": 8, "lr": 3e-4, "epochs": 2, "label_words": words}
    fit, said = run("--model", "smollm2-135m")
    assert fit == {"epochs": 2, "lr": 3e-4, "train_blocks": None, "lora_rank": 8, "label_words": words}
    assert f"--lora-rank 8 --lr 0.0003 --epochs 2 --label-words '{words}'" in said
    assert run("--model", "smollm2-135m", "--lr", "1e-4", "--epochs", "5")[0] == {"epochs": 5, "lr": 1e-4, "train_blocks": None, "lora_rank": 8,
                                                                                  "label_words": words}  # fmt: skip
    assert run("--model", "smollm2-135m", "--train-blocks", "2")[0]["lora_rank"] is None
    assert run("--model", "smollm2-135m", "--label-map", "0=entailment,1=neutral")[0]["label_words"] is None
    assert run("--model", "smollm2-135m", "--template", "{premise} / {hypothesis} ->")[0]["label_words"] == words
    assert run("--model", "smollm2-135m", "--lora-rank", "0", "--label-words", "none")[0] == {
        "epochs": 2, "lr": 3e-4, "train_blocks": None, "lora_rank": None, "label_words": None}  # every weight, a new head
    assert run("--model", "minilm") == ({"epochs": 5, "lr": 5e-5, "train_blocks": None, "lora_rank": None, "label_words": None}, "")
