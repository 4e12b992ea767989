"""Path patching to the readout (``lab.path_patch``): the batched two passes equal the naive two passes per pair on an
encoder and on decoders, at a head, an attention output and an MLP output; with nothing downstream it is the plain
interchange; held components change the answer where there is something downstream; the sweep gives each sender's
direct effect beside its total effect with intervals."""

from __future__ import annotations

import pytest
import torch

import interp

from decoders import decoder_model, tokenizer, tokenizer_kind

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

SENDERS = ("blocks.0.attn.hook_z.h1@w_h", "blocks.0.hook_attn_out@w_p", "blocks.0.hook_mlp_out@w_h")


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=2, seed=5)


@pytest.fixture(scope="module")
def encoder_lab(wide_classifier_dir, task):
    return interp.IntervenableModel(str(wide_classifier_dir), task)


def _check(lab, examples):
    for sender in SENDERS:
        fast = lab.path_patch(examples, examples, sender)
        naive = lab.path_patch(examples, examples, sender, naive=True)
        assert fast.shape == (len(examples), len(examples), 2) and torch.allclose(fast, naive, atol=1e-5), sender
        total = lab.interchange_logits(examples, examples, lab.location(sender))
        assert (fast - total).abs().amax() > 1e-4, sender  # the null: holding the later components changes the answer
    last = f"blocks.{lab.model.n_layers - 1}.hook_mlp_out@w_h"  # nothing downstream: the plain interchange
    assert torch.allclose(lab.path_patch(examples, examples, last), lab.interchange_logits(examples, examples, lab.location(last)), atol=1e-5)


def test_path_patching_equals_its_naive_two_passes_on_an_encoder(encoder_lab, examples):
    _check(encoder_lab, examples)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_path_patching_equals_its_naive_two_passes_on_a_decoder(family, task, examples, monli_dir):
    tok = tokenizer(tokenizer_kind(family), str(monli_dir))
    _check(interp.IntervenableModel(interp.load_model(decoder_model(family, tok), tok), task), examples)


def test_a_self_patch_is_the_base_and_the_sweep_puts_direct_beside_total(encoder_lab, examples):
    same = encoder_lab.path_patch(examples, examples, SENDERS[0])
    own = encoder_lab.predict(examples)
    assert torch.allclose(same.diagonal(dim1=0, dim2=1).T, own, atol=1e-5)  # a base patched from itself is itself
    frame = encoder_lab.path_patch_sweep(examples, examples, "heads@w_h")
    assert len(frame) == encoder_lab.model.n_layers * 2 and list(frame.columns[:7]) == ["sender", "direct", "direct_low", "direct_high", "total",
                                                                                           "total_low", "total_high"]  # fmt: skip
    assert (frame.direct_low <= frame.direct).all() and (frame.direct <= frame.direct_high).all() and (frame.pairs == 16).all()
    assert frame.interval.str.contains("word pairs").all()


def test_a_residual_stream_sender_is_refused_by_name(encoder_lab, examples):
    with pytest.raises(interp.ConfigError, match="sender=blocks.0.hook_resid_post@w_h.*not the residual stream"):
        encoder_lab.path_patch(examples, examples, "blocks.0.hook_resid_post@w_h")
    with pytest.raises(interp.ConfigError, match="a residual-stream location"):
        encoder_lab.path_patch_sweep(examples, examples, "blocks.0.hook_resid_post@w_h")


def test_the_command_writes_each_senders_direct_and_total_effect(tiny_classifier_dir, monli_dir, tmp_path):
    import pandas as pd
    from click.testing import CliRunner

    from interp.cli import main

    args = ["path-sweep", "--model", str(tiny_classifier_dir), "--senders", "heads@w_h", "--splits", "pmonli,nmonli_test", "--max-per-split", "2",
            "--data-dir", str(monli_dir), "--out", str(tmp_path)]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(tmp_path / "paths.csv")
    assert len(frame) == 4 and set(frame.sender) == {f"blocks.{b}.attn.hook_z.h{h}@w_h" for b in (0, 1) for h in (0, 1)}
    assert result.stdout.splitlines()[0].startswith("sender") and "[95%]: " in result.stdout
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "holds paths.csv; pass --overwrite" in again.stderr
    bad = CliRunner().invoke(main, [*args[:4], "blocks.0.hook_resid_post@w_h", *args[5:-2], "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "a residual-stream location" in bad.stderr and not (tmp_path / "b").exists()


def test_the_printout_ranks_by_direct_effect_then_by_total():
    import pandas as pd

    from interp.jobs.paths import format_path_sweep

    rows = [("a", 0.0, 0.0), ("b", 0.0, 0.3), ("c", 0.2, 0.1), ("d", 0.0, 0.1)]
    frame = pd.DataFrame([{"sender": s, "direct": d, "direct_low": d, "direct_high": d, "total": t, "total_low": t, "total_high": t,
                           "pairs": 9, "interval": "over 3 word pairs"} for s, d, t in rows])  # fmt: skip
    shown = [line.split()[0] for line in format_path_sweep(frame, top=3).splitlines()[1:4]]
    assert shown == ["c", "b", "d"]
