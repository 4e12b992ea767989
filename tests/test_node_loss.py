"""`train --node-loss` (Geiger et al. 2019, §5): the node terms against a naive recomputation, resume, the checkpoint, bad input."""

from __future__ import annotations

from dataclasses import replace

import json

import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner
from safetensors import safe_open

from interp.api.specs import DataSpec, SampleSpec
from interp.causal import run_forward
from interp.causal.values import value_name
from interp.cli import main
from interp.core.errors import ConfigError
from interp.hooks.encoding import collate
from interp.api.node_loss import NodeLoss, node_variables
from interp.jobs.train import TrainConfig, train
from interp.models import fit, load_classifier
from interp.models.training_state import read_training_state
from interp.tasks import resolve_task


@pytest.fixture(scope="module")
def mqnli(mqnli_file):
    task = resolve_task("mqnli", data_file=str(mqnli_file))
    return task, task.load(("train",))[:40]


@pytest.mark.parametrize("read", ["cls", "tokens"])
def test_the_node_loss_is_the_mean_cross_entropy_of_each_nodes_head(tiny_encoder_dir, mqnli, read):
    """A naive recomputation: the last block's output read by hand, each node's value from the causal model run per example."""
    task, examples = mqnli
    model, tokenizer = load_classifier(str(tiny_encoder_dir), labels=task.labels, seed=0)
    model.eval()
    variables = ("neg", "subj_np", "root")
    loss = NodeLoss(model, tokenizer, task, examples, variables, read=read, weight=0.5, seed=1)
    idx = [3, 0, 7, 12, 5]
    got = loss(idx)
    causal = task.build_causal_model(examples)
    batch = collate([loss.encoded[i] for i in idx], tokenizer.pad_token_id)
    with torch.no_grad():
        hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], token_type_ids=batch["token_type_ids"],
                       output_hidden_states=True).hidden_states[-1]  # fmt: skip
        terms = []
        for v in variables:
            roles = ("cls",) if read == "cls" else task.alignment[v]
            features = torch.cat([hidden[torch.arange(len(idx)), batch["positions"][r]] for r in roles], dim=1)
            names = [value_name(x) for x in causal.values[v]]
            target = torch.tensor([names.index(value_name(run_forward(causal, task.inputs(examples[i]))[v])) for i in idx])
            terms.append(F.cross_entropy(loss.heads[v](features), target))
    assert torch.allclose(got, 0.5 * torch.stack(terms).mean(), atol=1e-6)
    got.backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in loss.heads.parameters())
    assert model.bert.encoder.layer[0].attention.self.query.weight.grad.abs().sum() > 0  # the model learns from it too
    assert not any(name.startswith("heads") for name, _ in model.named_parameters())  # the heads are not the model's


def test_a_node_loss_run_resumes_to_the_same_weights_and_saves_the_classifier_alone(tiny_encoder_dir, mqnli_file, tmp_path, monkeypatch):
    config = TrainConfig(model=str(tiny_encoder_dir), data=DataSpec("mqnli", str(mqnli_file)), epochs=2, lr=2e-3, batch_size=16,
                         sample=SampleSpec(max_examples=48, seed=2), eval_splits=("test",), node_loss="all", node_read="tokens", seed=2)  # fmt: skip
    reference = train(replace(config, out=str(tmp_path / "reference")), progress=False)
    assert all("extra_loss" in e for e in reference.epochs) and reference.epochs[-1]["extra_loss"] < reference.epochs[0]["extra_loss"]
    plain = train(TrainConfig(**{**config.__dict__, "node_loss": None, "node_read": "cls", "out": str(tmp_path / "plain")}), progress=False)
    assert plain.fingerprint != reference.fingerprint
    with safe_open(tmp_path / "reference" / "model.safetensors", "pt") as a, safe_open(tmp_path / "plain" / "model.safetensors", "pt") as b:
        assert set(a.keys()) == set(b.keys())  # no head tensors in the checkpoint
        assert any(not torch.equal(a.get_tensor(k), b.get_tensor(k)) for k in a.keys())  # the node loss changed the weights
    assert json.loads((tmp_path / "reference" / "training.json").read_text())["config"]["node_loss"] == ["all"]
    # In memory, the same heads and loss: interp.fine_tune(node_loss=...) gives the checkpoint's weights, tensor for tensor.
    import interp

    task = interp.load_task("mqnli", data_file=str(mqnli_file))
    in_memory = interp.fine_tune(str(tiny_encoder_dir), task, task.examples(("train",), n=48, seed=2), epochs=2, lr=2e-3, batch_size=16, seed=2,
                                 node_loss=("all",), node_read="tokens")  # fmt: skip
    with safe_open(tmp_path / "reference" / "model.safetensors", "pt") as a:
        assert all(torch.equal(in_memory.module.state_dict()[k], a.get_tensor(k)) for k in a.keys())
    assert in_memory.history[-1]["extra_loss"] == pytest.approx(reference.epochs[-1]["extra_loss"])

    original = fit.__globals__["save_training_state"]
    state = {}

    def stop_after_epoch_one(path, **kwargs):
        original(path, **kwargs)
        state["keys"] = set(read_training_state(path).tensors)
        raise KeyboardInterrupt

    monkeypatch.setitem(fit.__globals__, "save_training_state", stop_after_epoch_one)
    with pytest.raises(KeyboardInterrupt):
        train(replace(config, out=str(tmp_path / "resumed")), progress=False)
    assert any(k.startswith("model.extra.heads.") for k in state["keys"])  # the heads are in the resumable state
    monkeypatch.setitem(fit.__globals__, "save_training_state", original)
    resumed = train(replace(config, out=str(tmp_path / "resumed")), progress=False)
    a, _ = load_classifier(str(tmp_path / "reference"))
    b, _ = load_classifier(str(tmp_path / "resumed"))
    assert [r["epoch"] for r in resumed.epochs] == [1, 2]
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name


def test_bad_node_loss_settings_name_their_flag(tiny_encoder_dir, mqnli_file, monli_dir, tmp_path):
    task = resolve_task("mqnli", data_file=str(mqnli_file))
    assert node_variables(("all",), task) == task.variables
    with pytest.raises(ConfigError, match=r"node_loss='subj_np,nope': name variables of task 'mqnli'"):
        node_variables(("subj_np", "nope"), task)
    base = ["train", "--model", str(tiny_encoder_dir), "--data-file", str(mqnli_file), "--max-examples", "16", "--epochs", "1"]
    for extra, said in [
        (["--node-loss", "nope"], "--node-loss 'nope': name variables of task 'mqnli'"),
        (["--node-loss", "all", "--node-read", "middle"], "--node-read must be cls or tokens, got 'middle'"),
        (["--node-weight", "2"], "--node-weight and --node-read shape the node loss: give --node-loss too"),
        (["--node-loss", "all", "--iit", "neg@blocks.0.hook_resid_post"], "--node-loss and --iit: train with one extra loss at a time"),
    ]:
        out = tmp_path / "x"
        result = CliRunner().invoke(main, [*base, *extra, "--out", str(out)])
        assert result.exit_code == 2 and said in result.stderr and not out.exists(), result.output
    toy = CliRunner().invoke(main, ["train", "--model", str(tiny_encoder_dir), "--task", "fragment:boolean", "--node-loss", "all",
                                    "--out", str(tmp_path / "y")])  # fmt: skip
    assert toy.exit_code == 2 and "has no causal model whose variables could be supervised" in toy.stderr
