"""Path patching to the readout (``lab.path_patch``): the batched two passes equal the naive two passes per pair on an
encoder and on decoders, at a head, an attention output and an MLP output; with nothing downstream it is the plain
interchange; held components change the answer where there is something downstream; the sweep gives each sender's
direct effect beside its total effect with intervals. Through a later head's query, key or value input: the inputs
read are the projections computed by hand (a fused GPT-2 projection, a grouped-query Llama's key/value heads), the
batched passes equal the naive three, and a receiver off the sender's tokens gets the base's own input."""

from __future__ import annotations

import pytest
import torch

import interp

from decoders import decoder_model, tokenizer, tokenizer_kind

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

SENDERS = ("blocks.0.attn.hook_z.h1@w_h", "blocks.0.hook_attn_out@w_p", "blocks.0.hook_mlp_out@w_h", "blocks.1.attn.hook_z.h0@cls")


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=2, seed=5)


def _check(lab, examples):
    for sender in SENDERS:
        fast = lab.path_patch(examples, examples, sender)
        naive = lab.path_patch(examples, examples, sender, naive=True)
        assert fast.shape == (len(examples), len(examples), 2) and torch.allclose(fast, naive, atol=1e-5), sender
        total = lab.interchange_logits(examples, examples, lab.location(sender))
        assert (fast - total).abs().amax() > 1e-4, sender  # the null: holding the later components changes the answer
    last = f"blocks.{lab.model.n_layers - 1}.hook_mlp_out@w_h"  # nothing downstream: the plain interchange
    assert torch.allclose(lab.path_patch(examples, examples, last), lab.interchange_logits(examples, examples, lab.location(last)), atol=1e-5)


def _projections(lab, example, layer: int) -> dict[str, torch.Tensor]:
    """Block ``layer``'s query, key and value projections of one example, ``[seq, width]``, computed by hand from its
    input (``hidden_states[layer]``) and the block's own weights: BERT's query/key/value, GPT-2's fused c_attn after
    ln_1 (thirds), Llama's q/k/v_proj after input_layernorm."""
    from hand_hooks import blocks

    module = lab.model.module
    enc = lab.encode([example])[0]
    inputs = {"input_ids": torch.tensor([enc.input_ids])}
    if lab.model.template is None:
        inputs["token_type_ids"] = torch.tensor([enc.token_type_ids])
    with torch.no_grad():
        hidden = getattr(module, "inner", module).base_model(**inputs, output_hidden_states=True).hidden_states[layer][0]
        block = blocks(module)[layer]
        if hasattr(block, "attention"):
            own = block.attention.self
            return {"q": own.query(hidden), "k": own.key(hidden), "v": own.value(hidden)}
        if hasattr(block, "ln_1"):
            return dict(zip("qkv", block.attn.c_attn(block.ln_1(hidden)).split(hidden.shape[-1], dim=-1)))
        normed = block.input_layernorm(hidden)
        return {"q": block.self_attn.q_proj(normed), "k": block.self_attn.k_proj(normed), "v": block.self_attn.v_proj(normed)}


def _check_receivers(lab, examples):
    from interp.hooks import hooked
    from interp.hooks.locations import head_dim

    d = head_dim(lab.model.module.config)
    last = lab.model.n_layers - 1
    for kind, head in (("q", lab.model.n_heads - 1), ("k", 1), ("v", -1)):  # a grouped-query Llama's key head 1: its second key/value head
        site = f"blocks.{last}.attn.hook_{kind}{f'.h{head}' if head >= 0 else ''}@w_h"
        receiver = interp.api.paths.receiver_location(lab, site)
        enc = lab.encode(examples[:1])[0]
        inputs = {"input_ids": torch.tensor([enc.input_ids])} | ({"token_type_ids": torch.tensor([enc.token_type_ids])} if lab.model.template is None else {})
        with torch.no_grad(), hooked(lab.model.module, {"w_h": torch.tensor([enc.positions["w_h"]])}, read=[receiver]) as trace:
            lab.model.module(**inputs)
        by_hand = _projections(lab, examples[0], last)[kind][enc.positions["w_h"]]
        by_hand = by_hand if head < 0 else by_hand[head * d:(head + 1) * d]
        assert torch.allclose(trace[receiver][0], by_hand, atol=1e-5), site
        for sender in SENDERS[:2]:
            fast = lab.path_patch(examples, examples, sender, receiver=site)
            naive = lab.path_patch(examples, examples, sender, receiver=site, naive=True)
            assert torch.allclose(fast, naive, atol=1e-5), (sender, site)
            moved = (fast - lab.predict(examples)[:, None]).abs().amax()
            off = lab.path_patch(examples, examples, sender, receiver=site.replace("@w_h", "@w_p" if "w_h" in sender else "@w_h"))
            if sender.endswith("@w_h") and kind != "q":  # (a last block's query at w_h reaches no readout; its key and value do)
                assert moved > 1e-4, (sender, site)  # the path carries something, so agreement could have failed
            assert torch.allclose(off, lab.predict(examples)[:, None].expand_as(off), atol=1e-5), (sender, site)  # off its tokens: the base


def test_path_patching_equals_its_naive_two_passes_on_an_encoder(encoder_lab, examples):
    _check(encoder_lab, examples)
    _check_receivers(encoder_lab, examples)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_path_patching_equals_its_naive_two_passes_on_a_decoder(family, task, examples, monli_dir):
    tok = tokenizer(tokenizer_kind(family), str(monli_dir))
    lab = interp.IntervenableModel(interp.load_model(decoder_model(family, tok), tok), task)
    _check(lab, examples)
    _check_receivers(lab, examples)


def test_a_receiver_is_a_later_heads_input_and_no_interchange_site(encoder_lab, examples):
    """A receiver before (or in) its sender's block, a receiver that is not a head's input, a head's input given as an
    interchange location, a key head past the key/value heads: each one line naming the parameter."""
    sender = "blocks.1.attn.hook_z.h0@w_h"
    with pytest.raises(interp.ConfigError, match=r"receiver=blocks.1.attn.hook_q.h0@w_h.* comes before its sender"):
        encoder_lab.path_patch(examples, examples, sender, receiver="blocks.1.attn.hook_q.h0@w_h")
    with pytest.raises(interp.ConfigError, match="a receiver is a head's query, key or value input"):
        encoder_lab.path_patch(examples, examples, "blocks.0.attn.hook_z.h0@w_h", receiver="blocks.1.hook_mlp_out@w_h")
    with pytest.raises(interp.ConfigError, match="a receiver of path patching only"):
        encoder_lab.interchange_logits(examples, examples, encoder_lab.location("blocks.1.attn.hook_q@w_h"))
    with pytest.raises(interp.ConfigError, match="receiver=.*unknown token role 'w_x'"):
        encoder_lab.path_patch(examples, examples, "blocks.0.attn.hook_z.h0@w_h", receiver="blocks.1.attn.hook_k@w_x")
    with pytest.raises(interp.ConfigError, match="no sender in a block before the receiver"):
        encoder_lab.path_patch_sweep(examples, examples, "heads@w_h", receiver="blocks.0.attn.hook_v@w_h")


def test_a_self_patch_is_the_base_and_the_sweep_puts_direct_beside_total(encoder_lab, examples):
    same = encoder_lab.path_patch(examples, examples, SENDERS[0])
    own = encoder_lab.predict(examples)
    assert torch.allclose(same.diagonal(dim1=0, dim2=1).T, own, atol=1e-5)  # a base patched from itself is itself
    frame = encoder_lab.path_patch_sweep(examples, examples, "heads@w_h")
    assert len(frame) == encoder_lab.model.n_layers * 2 and list(frame.columns[:7]) == ["sender", "direct", "direct_low", "direct_high", "total",
                                                                                           "total_low", "total_high"]  # fmt: skip
    assert (frame.direct_low <= frame.direct).all() and (frame.direct <= frame.direct_high).all() and (frame.pairs == 16).all()
    assert frame.interval.str.contains("word pairs").all()
    # beside the flip shares, the continuous figure: the base's own answer's margin, its change read by hand from the logits
    sender = SENDERS[0]
    row = encoder_lab.path_patch_sweep(examples, examples, sender).iloc[0]
    z, z0 = same.double(), own.double()
    answer = z0.argmax(-1)

    def margin(logits, label):  # the label's logit minus the largest other
        top2 = logits.topk(2, dim=-1).values
        own_logit = logits.gather(-1, label.expand(logits.shape[:-1]).unsqueeze(-1)).squeeze(-1)
        return own_logit - torch.where(top2[..., 0] == own_logit, top2[..., 1], top2[..., 0])

    after = margin(z, answer[:, None].expand(z.shape[:2]))
    before = margin(z0, answer)
    assert row.direct_margin == pytest.approx((after - before[:, None]).mean().item(), abs=1e-4)
    assert row.direct_margin_low <= row.direct_margin <= row.direct_margin_high


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
            "--data-dir", str(monli_dir), "--out", str(tmp_path / "main")]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(tmp_path / "main" / "paths.csv")
    assert len(frame) == 4 and set(frame.sender) == {f"blocks.{b}.attn.hook_z.h{h}@w_h" for b in (0, 1) for h in (0, 1)}
    assert result.stdout.splitlines()[0].startswith("sender") and "[95%]: " in result.stdout
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "holds paths.csv; pass --overwrite" in again.stderr
    bad = CliRunner().invoke(main, [*args[:4], "blocks.0.hook_resid_post@w_h", *args[5:-2], "--out", str(tmp_path / "b")])
    assert bad.exit_code == 2 and "a residual-stream location" in bad.stderr and not (tmp_path / "b").exists()
    through = CliRunner().invoke(main, [*args[:-2], "--receiver", "blocks.1.attn.hook_k.h1@w_h", "--out", str(tmp_path / "k")])
    assert through.exit_code == 0 and "direct (through blocks.1.attn.hook_k.h1@w_h)" in through.stdout, through.output
    frame = pd.read_csv(tmp_path / "k" / "paths.csv")  # block 0's heads alone come before the receiver
    assert set(frame.sender) == {"blocks.0.attn.hook_z.h0@w_h", "blocks.0.attn.hook_z.h1@w_h"} and set(frame.receiver) == {"blocks.1.attn.hook_k.h1@w_h"}
    before = CliRunner().invoke(main, [*args[:4], "blocks.1.attn.hook_z.h0@w_h", *args[5:-2], "--receiver", "blocks.0.attn.hook_q@w_h", "--out", str(tmp_path / "c")])
    assert before.exit_code == 2 and "no sender in a block before the receiver" in before.stderr and len(before.stderr.splitlines()) == 1
    assert not (tmp_path / "c").exists()
    _the_report_draws_the_sweep(tmp_path / "main", tmp_path / "k")


def _the_report_draws_the_sweep(out, through):
    """`interp report` of a sweep's folder: a site × layer heatmap of the direct effects (total one menu away) and the
    senders ranked, each figure with its interval and what the interval resamples; a receiver's sweep names it."""
    from click.testing import CliRunner
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait
    from test_report import _chromium, page_data

    from interp.cli import main

    for folder in (out, through):
        assert CliRunner().invoke(main, ["report", str(folder)]).exit_code == 0
    (section,) = page_data(out / "report" / "index.html")["paths"]
    assert section["receiver"] == "readout" and section["pairs"] == 16 and "word pairs" in section["interval"]
    # each head at its own block (0 and 1 of the 2-block model), not at the layer after it
    assert {r["role"] for r in section["records"]} == {"attn.hook_z.h0@w_h", "attn.hook_z.h1@w_h"} and {r["layer"] for r in section["records"]} == {0, 1}
    assert {(r["sender"].split(".")[1], r["layer"]) for r in section["records"]} == {("0", 0), ("1", 1)}
    assert page_data(through / "report" / "index.html")["paths"][0]["receiver"] == "blocks.1.attn.hook_k.h1@w_h"
    driver = _chromium()
    try:
        driver.get((out / "report" / "index.html").as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#paths-plot-0 .heatmaplayer"))
        shown = driver.execute_script("return document.getElementById('paths-plot-0').data[0].z")
        assert sorted(v for row in shown for v in row if v is not None) == sorted(r["direct"] for r in section["records"])
        axis = driver.execute_script("const l = document.getElementById('paths-plot-0').layout.xaxis; return [l.range, l.title.text]")
        assert axis[0] == [-0.5, 1.5] and axis[1].startswith("block")  # the axis runs to the model's last block, named so
        assert driver.execute_script("return document.getElementById('paths-plot-0').layout.yaxis.automargin") is True  # labels whole
        Select(driver.find_element(By.CSS_SELECTOR, "#paths-0 select")).select_by_value("total")
        shown = driver.execute_script("return document.getElementById('paths-plot-0').data[0].z")
        assert sorted(v for row in shown for v in row if v is not None) == sorted(r["total"] for r in section["records"])
        text = driver.find_element(By.ID, "paths-0").text
        assert "to the readout alone" in text and "[95%]: " + section["interval"] in text and section["records"][0]["sender"] in text
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []
    finally:
        driver.quit()


def test_the_printout_ranks_by_direct_effect_then_by_total():
    import pandas as pd

    from interp.jobs.paths import format_path_sweep

    rows = [("a", 0.0, 0.0), ("b", 0.0, 0.3), ("c", 0.2, 0.1), ("d", 0.0, 0.1)]
    frame = pd.DataFrame([{"sender": s, "direct": d, "direct_low": d, "direct_high": d, "total": t, "total_low": t, "total_high": t,
                           "pairs": 9, "interval": "over 3 word pairs"} for s, d, t in rows])  # fmt: skip
    shown = [line.split()[0] for line in format_path_sweep(frame, top=3).splitlines()[1:4]]
    assert shown == ["c", "b", "d"]
