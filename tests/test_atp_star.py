"""AtP*'s refinements of the screen's estimate, each on a tiny decoder built to fail without it, and the estimate's
exactness where the model is linear in the site.

The built models are 1-block Llama classifiers whose RMSNorms are the identity (an epsilon of 1e12 against weights of
1e6), so every nonlinearity is one the case puts there: the attention's softmax (its queries and keys scaled to
saturate it) or a ReLU MLP.
"""

from __future__ import annotations

import pytest
import torch

import interp
from interp.analysis.attribution import estimated_logits, graddrop_robustness, site_estimate
from interp.backends import get_runner
from interp.hooks.encoding import Encoded
from interp.hooks.locations import Location

WIDTH, KEYS = 16, 8  # dims 0..7 carry what queries and keys read, 8..15 what values read
WORDS, OTHERS = range(1, 7), range(10, 40)  # the tokens at the intervened role, and every other token


def _llama(scale: float = 1.0, seed: int = 0):
    """A 1-block Llama classifier with identity norms, no MLP, its queries and keys × ``scale``."""
    from transformers import LlamaConfig, LlamaForSequenceClassification

    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=40, hidden_size=WIDTH, intermediate_size=WIDTH, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=2, num_labels=2, pad_token_id=0, rms_norm_eps=1e12, initializer_range=0.5,
                         hidden_act="relu", mlp_bias=True)  # fmt: skip
    model = LlamaForSequenceClassification(config).eval()
    block = model.model.layers[0]
    with torch.no_grad():
        for norm in (block.input_layernorm, block.post_attention_layernorm, model.model.norm):
            norm.weight.fill_(1e6)
        block.mlp.down_proj.weight.zero_()
        block.mlp.down_proj.bias.zero_()
        block.self_attn.q_proj.weight *= scale
        block.self_attn.k_proj.weight *= scale
    return model


def _encoded(n: int, length: int = 5, seed: int = 1) -> list[Encoded]:
    """``n`` sequences of ``length`` tokens: a word token at role ``w`` (index 2), other tokens elsewhere, ``last`` last."""
    g = torch.Generator().manual_seed(seed)
    out = []
    for i in range(n):
        ids = [OTHERS[int(k)] for k in torch.randint(len(OTHERS), (length,), generator=g)]
        ids[2] = WORDS[i % len(WORDS)]
        out.append(Encoded(str(i), tuple(ids), (0,) * length, {"w": 2, "last": length - 1}, {}, 0))
    return out


def _estimates(model, encoded, site: str, **switches):
    loc = Location.parse(site)
    found = get_runner("hf", model).gradients(encoded, [loc], **switches)[loc]
    own = get_runner("hf", model).predict(encoded)
    exact = get_runner("hf", model).interchange_logits(encoded, found.activations, loc)
    return found, own, exact


def test_the_estimate_is_exact_where_the_logits_are_linear_in_the_site_and_not_through_a_softmax():
    model = _llama(scale=5.0)
    encoded = _encoded(12)
    found, own, exact = _estimates(model, encoded, "blocks.0.hook_resid_post@last")  # norm, then the head: linear
    assert torch.allclose(estimated_logits(own, found.activations, found.gradients), exact, atol=1e-4)
    assert (exact - own[:, None]).abs().mean() > 0.5  # the site moves the logits: the check could have failed
    found, own, exact = _estimates(model, encoded, "blocks.0.hook_resid_pre@w")  # through the attention's softmax
    assert (estimated_logits(own, found.activations, found.gradients) - exact).abs().mean() > 0.05


def _keys_only(model):
    """Queries and keys read dims 0..7, values 8..15; every word token has the same dims 8..15. An interchange at ``w``
    then moves only the keys (and w's own query), so the exact effect runs only through the attention probabilities."""
    attention = model.model.layers[0].self_attn
    embed = model.model.embed_tokens.weight
    with torch.no_grad():
        attention.q_proj.weight[:, KEYS:] = 0
        attention.k_proj.weight[:, KEYS:] = 0
        attention.v_proj.weight[:, :KEYS] = 0
        embed[list(WORDS), KEYS:] = embed[WORDS[0], KEYS:]
    return model


@pytest.mark.parametrize("scale", [0.05, 5.0])
def test_the_qk_fix_recomputes_a_saturated_attention_exactly(scale):
    """Where the attention's softmax is the only nonlinearity a patch meets, the QK-fixed estimate equals the exact
    interchange; the plain first-order one is close only while the softmax is soft, and far where it saturates."""
    model = _keys_only(_llama(scale=scale))
    encoded = _encoded(12)
    found, own, exact = _estimates(model, encoded, "blocks.0.hook_resid_pre@w", qk_fix=True)
    assert found.qk_term is not None and found.qk_gradients is not None
    fixed, plain = site_estimate(own, found, qk_fix=True), site_estimate(own, found, qk_fix=False)
    assert torch.allclose(fixed, exact, atol=1e-4), (fixed - exact).abs().max()
    plain_error = float((plain - exact).abs().mean())
    if scale < 1:
        assert plain_error < 0.05
    else:
        moved = (exact - own[:, None]).abs().mean()
        assert plain_error > 0.3 * moved and moved > 0.5, (plain_error, moved)


def _cancelling(cancel: bool = True):
    """Attention off; the MLP gives ``−relu(x)`` (``cancel``) or nothing, so the block's output is ``min(x, 0)`` or
    ``x``. At a base whose vector is positive the MLP's path cancels the residual one exactly at first order."""
    model = _llama()
    block = model.model.layers[0]
    embed = model.model.embed_tokens.weight
    with torch.no_grad():
        block.self_attn.o_proj.weight.zero_()
        block.mlp.gate_proj.weight.copy_(torch.eye(WIDTH))
        block.mlp.gate_proj.bias.zero_()
        block.mlp.up_proj.weight.zero_()
        block.mlp.up_proj.bias.fill_(1.0)
        block.mlp.down_proj.weight.copy_(-torch.eye(WIDTH) if cancel else torch.zeros(WIDTH, WIDTH))
        g = torch.Generator().manual_seed(2)
        embed[list(OTHERS)] = 0.5 + torch.rand(len(OTHERS), WIDTH, generator=g)  # positive
        embed[list(WORDS)] = -0.5 - torch.rand(len(WORDS), WIDTH, generator=g)  # negative
    return model


def _last_words(n: int, negative: int) -> list[Encoded]:
    """``n`` sequences whose last token is a word token (negative vector) in ``negative`` of them, else another."""
    return [Encoded(str(i), (11, 12, WORDS[i % len(WORDS)] if i < negative else OTHERS[5 + i]), (0,) * 3, {"last": 2}, {}, 0) for i in range(n)]


def test_graddrop_flags_a_site_whose_paths_cancel_and_not_one_whose_paths_agree():
    """At a positive base the residual and MLP paths cancel: the estimate barely moves while the exact interchange
    from a negative source does. With the MLP's path dropped the estimate is large, so GradDrop flags the site; without
    the cancelling MLP the same site is not flagged (and the estimate is exact, the model linear)."""
    encoded = _last_words(16, negative=2)
    found, own, exact = _estimates(_cancelling(), encoded, "blocks.0.hook_resid_pre@last", graddrop=True)
    estimate = estimated_logits(own, found.activations, found.gradients)
    positive = slice(2, None)  # the bases where the paths cancel; sources 0 and 1 are negative
    assert (estimate - own[:, None]).abs()[positive].max() < 1e-5  # the plain screen sees nothing there ...
    assert (exact - own[:, None]).abs().sum(-1)[positive, :2].min() > 0.1  # ... where every negative source moves the logits
    score = graddrop_robustness(own, found)
    assert sorted(found.dropped) == [0] and score["cancels"] and score["robustness"] < 0.5, score
    assert not graddrop_robustness(own, _estimates(_cancelling(), encoded, "blocks.0.hook_resid_pre@last")[0])["cancels"]  # off: no flag
    found, own, exact = _estimates(_cancelling(cancel=False), encoded, "blocks.0.hook_resid_pre@last", graddrop=True)
    score = graddrop_robustness(own, found)
    assert not score["cancels"] and score["robustness"] == pytest.approx(1.0), score
    assert torch.allclose(estimated_logits(own, found.activations, found.gradients), exact, atol=1e-4)


FAMILIES = ("bert", "deberta-v2-conv", "modernbert", "gpt2", "llama", "gemma2")


@pytest.mark.parametrize("family", FAMILIES)
def test_the_qk_fix_reruns_each_familys_attention_as_its_own_pass_and_restores_the_model(family, monli_dir):
    """Per family, the pair of a base with itself recomputes the attention its own pass had (its term is 0 within
    rounding) and the fixed estimate differs from the plain one elsewhere; the model keeps its attention
    implementation and weights, and its gradient and GradDrop parts come from the same passes."""
    from decoders import DECODER_FAMILIES, decoder_model, tokenizer, tokenizer_kind
    from families import family_model

    if family in DECODER_FAMILIES:
        tok = tokenizer(tokenizer_kind(family), str(monli_dir))
        model = interp.load_model(decoder_model(family, tok), tok)
    else:
        from transformers import AutoTokenizer

        from interp.models import embedded_model_dir

        model = interp.load_model(family_model(family), AutoTokenizer.from_pretrained(embedded_model_dir()))
    task = interp.load_task("monli", data_dir=str(monli_dir))
    lab = interp.IntervenableModel(model, task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=3, seed=0)
    inner = getattr(model.module, "inner", model.module)
    kept, weights = inner.config._attn_implementation, {k: v.clone() for k, v in model.module.state_dict().items()}
    locs = [lab.location("blocks.0.hook_resid_pre@w_h"), lab.location("blocks.1.hook_resid_post@w_p"), lab.location("blocks.2.hook_resid_post@cls")]
    bound = lab.bind(examples)
    found = bound.binding.runner.gradients(bound.encoded, locs, qk_fix=True, graddrop=True)
    plain = bound.binding.runner.gradients(bound.encoded, locs)
    n = len(examples)
    differ = []
    for loc in locs[:2]:
        site = found[loc]
        assert site.qk_term[range(n), range(n)].abs().max() < 1e-5
        differ.append(float((site_estimate(bound.logits(), site) - site_estimate(bound.logits(), site, qk_fix=False)).abs().max()))
        assert torch.allclose(site.gradients, plain[loc].gradients, atol=1e-5)  # eager against the model's own attention
    assert max(differ) > 1e-4, differ  # (a key outside a sliding window moves no probability: 0 there is right)
    assert found[locs[2]].qk_term is None and found[locs[2]].dropped == {}  # the last block's output feeds no attention
    assert sorted(found[locs[0]].dropped) == [0, 1, 2] and sorted(found[locs[1]].dropped) == [2]
    for layer in (0, 2):  # one forward pass and tensor hooks, against a pass of its own with the layer's outputs detached
        reference = _detached_margin_gradients(model.module, bound.encoded, locs[0], layer)
        assert torch.allclose(found[locs[0]].dropped[layer], reference, atol=1e-5), (family, layer)
    assert inner.config._attn_implementation == kept
    assert all(torch.equal(v, model.module.state_dict()[k]) for k, v in weights.items())


def _detached_margin_gradients(model, encoded, loc, layer):
    """The naive GradDrop: one example at a time, a forward pass whose block ``layer`` has its attention and MLP outputs
    detached, and the gradient of each label's logit minus the first's at ``loc``."""
    from interp.engine.gradients import Probes
    from interp.hooks import hooked, site_module
    from interp.hooks.architecture import model_inputs
    from interp.hooks.locations import ATTN_OUT, MLP_OUT

    rows = []
    for e in encoded:
        handles = [site_module(model, Location(layer + 1, ("x",), c))[0].register_forward_hook(lambda m, a, out: out.detach()) for c in (ATTN_OUT, MLP_OUT)]
        try:
            probes = Probes()
            with torch.enable_grad(), hooked(model, {r: torch.tensor([e.tokens(r)]) for r in loc.roles}, write={loc: probes.at(loc)}):
                logits = model(**model_inputs(model, torch.tensor([e.input_ids]), torch.tensor([e.token_type_ids]))).logits
            rows.append(probes.margin_gradients(logits, [loc])[loc][0])
        finally:
            for h in handles:
                h.remove()
    return torch.stack(rows)


def test_the_transformer_lens_runner_screens_without_the_fixes_and_names_them_when_asked(tiny_classifier_dir, monli_dir):
    pytest.importorskip("transformer_lens")
    lab = interp.IntervenableModel(str(tiny_classifier_dir), "monli", data_dir=str(monli_dir), backend="transformer-lens")
    examples = lab.task.examples(("pmonli",), per_split=4, seed=0)
    with pytest.warns(interp.InterpWarning):  # a random model at chance
        (row,) = lab.screen(examples, examples, "blocks.0.hook_resid_post@w_h", variable="lexrel").rows
    assert row["qk_fixed"] is False and row["robustness"] != row["robustness"] and row["cancels"] is False
    for switch in ("qk_fix", "graddrop"):
        other = "graddrop" if switch == "qk_fix" else "qk_fix"
        with pytest.raises(interp.ConfigError, match=f"{switch}=True.? runs on the hf backend only"):
            lab.screen(examples, examples, "blocks.0.hook_resid_post@w_h", variable="lexrel", **{switch: True, other: False})


def test_a_site_where_nothing_moves_is_not_flagged_for_rounding():
    """Every example with the same vector there (a decoder's template word): the estimate moves nothing with a layer
    dropped or not, whatever the gradients, and GradDrop says 1, not a cancellation found in rounding."""
    from interp.engine.gradients import SiteGradients

    g = torch.Generator().manual_seed(0)
    same = torch.ones(6, 4)
    site = SiteGradients(same + 1e-9 * torch.randn(6, 4, generator=g), torch.zeros(6, 2, 4), dropped={1: torch.randn(6, 2, 4, generator=g)})
    score = graddrop_robustness(torch.randn(6, 2, generator=g), site)
    assert score["robustness"] == 1.0 and not score["cancels"]
