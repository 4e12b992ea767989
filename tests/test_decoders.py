"""Decoder classifiers and causal LMs read through label words: every family loads, reads its last token, and
intervenes exactly (a naive loop of hooked passes against the engine, with each base's prefix reused and without)."""

from __future__ import annotations

import json
import re

import pytest
import torch

import interp
from interp.backends import DecoderRunner, NaiveRunner
from interp.hooks.templates import Template
from interp.models.decoders import DecoderClassifier

from decoders import DECODER_FAMILIES, decoder_model, save_decoder, tokenizer, tokenizer_kind

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

#: Residual-stream and component sites of a 3-block decoder, one and several tokens, and the readout token itself.
SITES = ("blocks.0.hook_resid_pre@w_h", "blocks.1.hook_resid_post@w_p", "blocks.1.hook_resid_post@w_p+w_h", "blocks.0.attn.hook_z.h1@w_h",
         "blocks.1.attn.hook_z@w_p", "blocks.1.hook_attn_out@w_h", "blocks.1.hook_resid_mid@w_h", "blocks.0.hook_mlp_out@w_p",
         "blocks.0.hook_resid_post@cls", "blocks.2.hook_resid_post@last")  # fmt: skip


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=5, seed=0)


def _tok(family, monli_dir):
    return tokenizer(tokenizer_kind(family), str(monli_dir))


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_each_family_loads_from_a_folder_and_reads_its_last_token(family, task, examples, monli_dir, tmp_path):
    """Saved and loaded as a checkpoint: a DecoderClassifier with the default template; its logits are the head's at
    the last token; every role lands on its word's first piece (byte-level ``Ġ`` or SentencePiece ``▁``)."""
    tok = _tok(family, monli_dir)
    model = interp.load_model(save_decoder(family, tmp_path / family, tok))
    assert isinstance(model.module, DecoderClassifier) and model.template == Template()
    lab = interp.IntervenableModel(model, task)
    encoded = lab.encode(examples)
    inner = model.module.inner
    for e, enc in zip(examples, encoded):
        ids = torch.tensor([enc.input_ids])
        with torch.no_grad():
            hidden = inner.base_model(input_ids=ids).last_hidden_state[0, -1]
            by_hand = inner.score(hidden)
        assert torch.allclose(lab.predict([e])[0], by_hand, atol=1e-5)
        assert enc.positions["cls"] == len(enc.input_ids) - 1
        for role in ("w_p", "w_h"):
            piece, word = model.tokenizer.convert_ids_to_tokens(enc.input_ids[enc.positions[role]]).lstrip("Ġ▁").lower(), e.words[role].lower()
            assert piece and (word.startswith(piece) or piece.startswith(word)), (role, piece, word)  # "building." is one piece
    # The token it reads is named `last`, however it is written and in every list the lab makes; `cls` reaches it too.
    assert enc.positions["last"] == enc.positions["cls"]
    assert {str(lab.location(f"blocks.1.hook_resid_post@{r}")) for r in ("last", "cls")} == {"blocks.1.hook_resid_post@last"}
    assert {loc.roles for loc in lab.locations("all")} == {("last",), ("w_p",), ("w_h",)}
    assert str(lab.locations("blocks.1.hook_resid_post", ["negated"])[0]) == "blocks.1.hook_resid_post@last"  # negated's aligned role
    last, cls = (lab.run_with_cache(examples, f"blocks.1.hook_resid_post@{r}") for r in ("last", "cls"))
    assert torch.equal(next(iter(last.values())), next(iter(cls.values())))
    again = interp.load_model(model.save(tmp_path / "saved"))  # the Path Classifier.save returns
    assert again.template == model.template and torch.allclose(interp.IntervenableModel(again, task).predict(examples), lab.predict(examples))


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_interchange_equals_the_naive_loop_with_and_without_prefix_reuse(family, task, examples, monli_dir):
    """At residual and component sites, one token and several, and the readout token: the engine's logits with each
    base's prefix reused, and without, equal one hooked batch-1 pass per pair within 1e-5 (fp32)."""
    tok = _tok(family, monli_dir)
    model = interp.load_model(decoder_model(family, tok), tok)
    lab = interp.IntervenableModel(model, task)
    encoded = lab.encode(examples)
    moved = 0
    for site in SITES:
        loc = lab.location(site)
        vectors = lab.source_vectors(examples, loc)
        pad = model.tokenizer.pad_token_id
        naive = NaiveRunner(model.module, pad).interchange_logits(encoded, vectors, loc)
        for reuse in (True, False):
            fast = DecoderRunner(model.module, pad, prefix_reuse=reuse).interchange_logits(encoded, vectors, loc, batch_size=7)
            assert torch.allclose(fast, naive, atol=1e-5, rtol=0), (site, reuse, (fast - naive).abs().max())
        moved += bool((naive - naive[:, :1]).abs().max() > 1e-3)
    assert moved >= len(SITES) // 2  # the sites do move the readout: agreement could have failed


def test_each_model_kind_reads_a_pair_through_its_own_input_format(task, examples, monli_dir, tiny_classifier_dir):
    """An encoder reads two segments at [CLS] (:data:`~interp.hooks.inputs.SEGMENTS`), a decoder its template at the last
    token (the :class:`Template` itself): the lab's encodings are what the format tokenizes, each read token where the
    format says, each kind's roles named as the format names them; the encoder's tokens start with [CLS], the decoder's
    need not, and asked of a tokenizer that puts no [CLS] first, the encoder's format says so."""
    from interp.hooks.encoding import encode_examples
    from interp.hooks.inputs import SEGMENTS

    tok = _tok("llama", monli_dir)
    decoder = interp.load_model(decoder_model("llama", tok), tok)
    encoder = interp.load_model(str(tiny_classifier_dir))
    assert (encoder.input_format, encoder.decoder, encoder.reading_record) == (SEGMENTS, False, {})
    assert decoder.input_format is decoder.template and decoder.decoder and decoder.reading_record["template"] == decoder.template.text
    for model, read, first in ((encoder, "cls", 0), (decoder, "last", -1)):
        form = model.input_format
        encoded = interp.IntervenableModel(model, task).encode(examples)
        pairs = form.tokenize(model.tokenizer, examples)
        assert [list(e.input_ids) for e in encoded] == pairs.input_ids and form.read_role == read
        assert all(e.positions[read] == e.positions["cls"] == (len(e.input_ids) - 1 if first else 0) for e in encoded)
        assert encoded == encode_examples(examples, model.tokenizer, "first", task.labels, None if model is encoder else model.template)
        assert form.roles(("cls", "w_h")) == (read, "w_h")
    assert all(e.input_ids[0] == encoder.tokenizer.cls_token_id for e in interp.IntervenableModel(encoder, task).encode(examples))
    with pytest.raises(interp.InterpError, match="does not start the input with a \\[CLS\\] token"):
        SEGMENTS.check_start(encoder.tokenizer, [encoder.tokenizer.sep_token_id])


def test_the_readout_is_the_last_real_token_where_the_pad_token_ends_the_template(task, examples, monli_dir):
    """GPT-2 has no pad token: interp pads with its end-of-text token and says so. With a template that ends in that
    token, a padded batch is read at each input's end (from the attention mask), as each input alone; transformers'
    own pooling, which finds the end by the pad id, reads another token (the null)."""
    tok = _tok("gpt2", monli_dir)
    inner = decoder_model("gpt2", tok)
    model = interp.load_model(inner, tok, template="{premise} | {hypothesis} =>" + tok.eos_token)
    assert tok.pad_token is None  # the tokenizer given is left as it was: the classifier's own copy pads
    tok = model.tokenizer
    assert tok.pad_token_id == tok.eos_token_id and "end-of-text token" in model.module.config.interp_pad_token
    lab = interp.IntervenableModel(model, task)
    encoded = lab.encode(examples)
    assert all(e.input_ids[-1] == tok.eos_token_id for e in encoded)
    padded = DecoderRunner(model.module, tok.pad_token_id).predict(encoded)
    alone = NaiveRunner(model.module, tok.pad_token_id).predict(encoded)
    assert torch.allclose(padded, alone, atol=1e-5)
    from interp.hooks.encoding import collate

    batch = collate(encoded, tok.pad_token_id)
    with torch.no_grad():
        theirs = inner(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    assert not torch.allclose(theirs, alone, atol=1e-3)


@pytest.mark.parametrize("family", ["gpt2", "gemma2"])
def test_a_causal_lm_read_through_label_words_gives_those_tokens_logits(family, task, examples, monli_dir, tmp_path):
    """A *ForCausalLM with one word per label: its logits are the next-token logits of those words at the last token
    (Gemma 2's final softcapping applied), read by hand; through evaluate and interchange as any classifier."""
    tok = _tok(family, monli_dir)
    path = save_decoder(family, tmp_path / family, tok, causal_lm=True)
    words = {"entailment": " yes", "neutral": " no"}
    model = interp.load_model(path, label_words=words)
    assert model.labels == ("entailment", "neutral")
    ids = [tok(w, add_special_tokens=False)["input_ids"][0] for w in words.values()]
    lab = interp.IntervenableModel(model, task)
    lm = model.module.inner
    projected = []  # the whole vocabulary projected: the LM's own head runs; the classifier's reads the label words' rows
    handle = lm.get_output_embeddings().register_forward_hook(lambda module, args, out: projected.append(out.shape[-1]))
    try:
        for e, enc in zip(examples, lab.encode(examples)):
            ours = lab.predict([e])[0]
            assert projected == []
            with torch.no_grad():
                logits = lm(input_ids=torch.tensor([enc.input_ids])).logits[0, -1, ids]  # the LM's own head, its softcap included
            assert projected.pop() == lm.config.vocab_size and torch.allclose(ours, logits, atol=1e-5)
    finally:
        handle.remove()
    frame = lab.evaluate(examples)
    assert set(frame["split"]) == {"pmonli", "nmonli_test"}
    res = lab.interchange(examples, examples, "blocks.1.hook_resid_post@w_h", variables=("lexrel",))
    naive = lab.interchange(examples, examples, "blocks.1.hook_resid_post@w_h", variables=("lexrel",), naive=True)
    assert torch.allclose(res.logits, naive.logits, atol=1e-5)
    saved = interp.load_model(model.save(tmp_path / "saved"))  # the label words travel in the checkpoint's config
    assert saved.module.label_words == model.module.label_words and saved.labels == model.labels


@pytest.mark.parametrize("family", DECODER_FAMILIES)
def test_each_family_evaluates_caches_probes_trains_das_and_runs_iit(family, task, monli_dir):
    """On a tiny random config of each family with its own kind of tokenizer: accuracy beside chance, a one-pass read of
    several locations equal to each location's own, a probe fit on them, DAS trained and scored on the gradient path,
    one epoch of interchange intervention training; the activation gradients at a site too."""
    tok = _tok(family, monli_dir)
    model = interp.load_model(decoder_model(family, tok), tok)
    lab = interp.IntervenableModel(model, task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=16, seed=3)
    frame = lab.evaluate(examples)
    assert list(frame["split"]) == ["pmonli", "nmonli_test"] and frame["accuracy_low"].le(frame["accuracy"]).all()
    sites = [lab.location(s) for s in ("blocks.0.hook_resid_pre@w_h", "blocks.1.attn.hook_z.h1@w_p", "blocks.2.hook_mlp_out@cls")]
    read = lab.run_with_cache(examples, sites)
    for loc in sites:
        assert torch.allclose(read[loc], lab.vectors(examples, loc).flatten(1), atol=1e-5), loc
    values = task.values(task.build_causal_model(examples), examples, "lexrel").codes
    probe = interp.Probe(hidden_units=0, max_iter=20, random_state=0).fit(read[sites[0]].numpy(), values)
    assert 0 <= probe.score(read[sites[0]].numpy(), values) <= 1
    das = lab.train_das(examples, "blocks.1.hook_resid_post@w_h", "lexrel", k=4, n_pairs=24, epochs=1, batch_size=8, test_pairs=12)
    assert das.intervention.width == lab.width(examples, "blocks.1.hook_resid_post@w_h") and 0 <= float(das.iia) <= 1
    tuned = interp.fine_tune(model, task, examples, epochs=1, batch_size=8, seed=0, iit="lexrel@blocks.1.hook_resid_post@w_h")
    assert len(tuned.history) == 1 and any(not torch.equal(a, b) for a, b in zip(tuned.module.parameters(), model.module.parameters()))
    found = lab.gradients(examples[:4], ["blocks.1.hook_resid_post@w_h"])
    assert next(iter(found.values())).gradients.shape[:2] == (4, 2)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_das_trains_through_a_decoder_and_its_gradient_path_is_the_engine(family, task, monli_dir):
    """The padded gradient path (right padding, the readout from the mask) gives the unpadded engine's logits; DAS trains
    and scores on it; IIT fine-tunes a decoder through the same hooks."""
    tok = _tok(family, monli_dir)
    model = interp.load_model(decoder_model(family, tok), tok)
    lab = interp.IntervenableModel(model, task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=20, seed=2)
    loc = lab.location("blocks.1.hook_resid_post@w_h")
    pairs = lab.bind(examples).pairs(loc)
    bases, sources = torch.arange(12), torch.arange(12).flip(0)
    rotated = interp.RotatedSubspace(pairs.width, k=8, seed=0)
    with torch.enable_grad():
        padded = pairs.logits(bases, sources, rotated)
    with torch.no_grad():
        unpadded = pairs.logits(bases, sources, rotated)
    assert torch.allclose(padded, unpadded, atol=1e-5)
    head = lab.location("blocks.0.attn.hook_z.h1@w_h")  # a query head (of a grouped-query layer where the family has them)
    at_head = lab.bind(examples).pairs(head)
    naive = lab.interchange(examples[:12], examples[:12], head, naive=True).logits[bases, sources]
    for grad in (True, False):
        with torch.set_grad_enabled(grad), at_head.frozen():
            assert torch.allclose(at_head.logits(bases, sources, interp.Interchange(at_head.width)).detach(), naive, atol=1e-5)
    das = lab.train_das(examples, loc, "lexrel", k=8, n_pairs=48, epochs=1, batch_size=16, test_pairs=24)
    assert 0 <= float(das.iia) <= 1 and len(das.history) == 2
    tuned = interp.fine_tune(model, task, examples, epochs=1, batch_size=8, seed=0, iit="lexrel@blocks.1.hook_resid_post@w_h", progress=False)
    assert isinstance(tuned.module, DecoderClassifier) and len(tuned.history) == 1


# -- through the commands ---------------------------------------------------------------------------------------------


def _run(*args):
    from click.testing import CliRunner

    from interp.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def folders(tmp_path_factory, monli_dir):
    """The from-scratch example's Llama-style causal LM in its short version (what `interp demo` fine-tunes), GPT-2
    causal and head models, and a GPT-2 whose tokenizer has neither a pad nor an end-of-text token."""
    import copy
    import json

    from decoders import scratch_example

    root = tmp_path_factory.mktemp("decoders")
    llama, gpt2 = _tok("llama", monli_dir), _tok("gpt2", monli_dir)
    base = scratch_example().build("llama", root / "base", quick=True, data_dir=str(monli_dir))
    found = {"base": base, "lm": save_decoder("gpt2", root / "lm", gpt2, causal_lm=True), "clf": save_decoder("llama", root / "clf", llama)}
    bare = copy.deepcopy(gpt2)
    bare._tokenizer.add_special_tokens([])  # the same vocabulary; then no special token is named
    save_decoder("gpt2", root / "bare", bare)
    config = json.loads((root / "bare" / "tokenizer_config.json").read_text())
    for key in ("eos_token", "bos_token", "unk_token", "pad_token"):
        config.pop(key, None)
    (root / "bare" / "tokenizer_config.json").write_text(json.dumps(config))
    found["bare"] = root / "bare"
    return found


@pytest.mark.slow(seconds=46)
def test_the_commands_run_on_a_decoder(folders, monli_dir, tmp_path):
    """The from-scratch example's short version on real MoNLI: demo (fine-tuning the headless causal LM the example
    builds: Table 1, cache, probes, interventions, cliques, the report, every figure with its interval), then
    evaluate, das and train --iit on its checkpoint (which records its template), and a causal LM read through label
    words through evaluate and intervene: each exits 0 and writes what it writes for an encoder."""
    import json

    data = ["--data-dir", monli_dir]
    out = tmp_path / "demo"
    result = _run("demo", "--model", folders["base"], "--epochs", "2", "--lr", "1e-3", "--max-train", "400", "--batch-size", "32",
                  "--probe-seeds", "1", "--per-split", "40", "--train-blocks", "1", "--das-pairs", "32", "--screen-examples", "3", "--out", out, *data, "--quiet")  # fmt: skip
    assert result.exit_code == 0, result.output
    # DAS at the cliques' location and the screen of every site, on the decoder too
    assert re.search(r"^lexrel +blocks\.\d\.hook_resid_post@\w+ +\d+ +1  +\d\.\d{3} \[", result.stdout, re.M)
    assert (out / "das" / "das.csv").is_file() and json.loads((out / "screen" / "screen.json").read_text())["examples"] == 6
    assert "Table 1" in result.stdout and re.search(r"lexrel +blocks\.\d\.hook_resid_post@\w+ +all +6400 +\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]", result.stdout)
    for folder in ("model", "challenge_model"):  # both fine-tunings trained the top block and the head alone
        assert json.loads((out / folder / "training.json").read_text())["config"]["train_blocks"] == 1
    for name in ("metrics.json", "activations.h5", "probes.csv", "interventions.h5", "cliques.json", "report/index.html"):
        assert (out / name).is_file(), name
    saved = json.loads((out / "model" / "config.json").read_text())
    assert saved["interp_template"] == Template().text and saved["architectures"] == ["LlamaForSequenceClassification"]
    model = ["--model", out / "model"]
    result = _run("evaluate", *model, "--splits", "nmonli_test", *data, "--json")
    assert result.exit_code == 0 and "nmonli_test" in json.loads(result.stdout), result.output
    # The decoder says how it read each pair: its template, line by line, and what answered.
    printed = _run("evaluate", *model, "--splits", "nmonli_test", *data)
    lines = printed.stdout.splitlines()
    assert lines[0] == "template (the pair joined into one text; read by its classification head at the last token):", printed.output
    assert "\n".join(line[4:] for line in lines if line.startswith("  | ")) == Template().text and "nmonli_test    accuracy" in printed.stdout
    assert json.loads(result.stdout)["reading"] == "\n".join(lines[: 1 + Template().text.count("\n") + 1])
    result = _run("screen", *model, "--out", tmp_path / "screen", "--locations", "blocks.1.hook_resid_post@last,blocks.0.attn.hook_z.h1@w_h",
                  "--confirm", "1", "--max-per-split", "6", *data, "--quiet")  # every site estimated through the decoder's gradients  # fmt: skip
    assert result.exit_code == 0 and "miss rate" in result.stdout and "blocks.1.hook_resid_post@last" in result.stdout, result.output
    assert json.loads((tmp_path / "screen" / "screen.json").read_text())["template"] == Template().text  # every file says how it read
    result = _run("das", *model, "--out", tmp_path / "das", "--locations", "blocks.1.hook_resid_post@w_h", "--subspace", "8", "--splits",
                  "pmonli,nmonli_test", "--max-per-split", "20", "--train-pairs", "32", "--test-pairs", "16", "--epochs", "1", *data, "--quiet")  # fmt: skip
    assert result.exit_code == 0 and (tmp_path / "das" / "das.csv").is_file(), result.output
    result = _run("train", *model, "--iit", "lexrel@blocks.1.hook_resid_post@w_h", "--splits", "pmonli", "--max-examples", "32", "--epochs", "1",
                  "--out", tmp_path / "iit", *data, "--quiet")  # fmt: skip
    assert result.exit_code == 0 and (tmp_path / "iit" / "model.safetensors").is_file(), result.output
    result = _run("location-sweep", *model, "--out", tmp_path / "sweep", "--examples", "12", "--locations", "aligned", *data, "--quiet")
    assert result.exit_code == 0 and (tmp_path / "sweep" / "locations.csv").is_file(), result.output
    result = _run("head-sweep", *model, "--out", tmp_path / "heads", "--roles", "w_h", "--max-per-split", "6", *data, "--quiet")
    assert result.exit_code == 0 and (tmp_path / "heads" / "heads.csv").is_file(), result.output
    words = ["--model", folders["lm"], "--label-words", "entailment= yes,neutral= no", "--template", "{premise}\\nQuestion: {hypothesis}? Answer:"]
    result = _run("evaluate", *words, "--splits", "nmonli_test", "--max-examples", "20", *data, "--json")
    assert result.exit_code == 0 and set(json.loads(result.stdout)) == {"nmonli_test", "reading"}, result.output
    reading = json.loads(result.stdout)["reading"]
    assert "label words {'entailment': ' yes', 'neutral': ' no'}" in reading and reading.endswith("  | Question: {hypothesis}? Answer:"), reading
    result = _run("intervene", *words, "--splits", "nmonli_test", "--max-examples", "12", "--locations", "blocks.2.hook_resid_post@last",
                  "--out", tmp_path / "iv.h5", *data, "--quiet")  # fmt: skip
    assert result.exit_code == 0 and (tmp_path / "iv.h5").is_file(), result.output
    import h5py

    with h5py.File(tmp_path / "iv.h5", "r") as handle:
        assert handle.attrs["template"] == "{premise}\nQuestion: {hypothesis}? Answer:"
        assert json.loads(handle.attrs["label_words"]) == {"entailment": " yes", "neutral": " no"}


@pytest.mark.parametrize(
    "case, args, message",
    [
        ("a label word of two tokens", ["evaluate", "--model", "lm", "--label-words", "entailment= yesno,neutral= no"], "label word must be one token"),
        ("a template past the context", ["evaluate", "--model", "clf", "--template", "Premise: {premise} " + "Answer: yes no " * 80 + "Hypothesis: {hypothesis} Answer:"],
         "past the model's context of 256 (the template alone is"),
        ("label words for a model with a head", ["evaluate", "--model", "clf", "--label-words", "entailment= yes,neutral= no"],
         "has a classification head (LlamaForSequenceClassification)"),
        ("a template without a slot", ["evaluate", "--model", "clf", "--template", "Premise: {premise} Answer:"], "has {hypothesis} nowhere"),
        ("no pad and no end-of-text token", ["evaluate", "--model", "bare"], "no pad token and no end-of-text token to pad with"),
        ("a location past the last block", ["intervene", "--model", "clf", "--locations", "blocks.3.hook_resid_post@w_h"], "layer 3 is out of range"),
        ("a head past the head count", ["intervene", "--model", "clf", "--locations", "blocks.0.attn.hook_z.h4@w_h"], "head 4 is out of range for a model with 4 heads"),
        ("the bridge on a decoder", ["intervene", "--model", "clf", "--backend", "transformer-lens", "--locations", "blocks.0.hook_resid_post@w_h"],
         "TransformerLens's bridge has no adapter for LlamaForSequenceClassification"),
    ],
)  # fmt: skip
def test_bad_decoder_input_is_one_line_and_exit_2(case, args, message, folders, monli_dir, tmp_path):
    args = [folders.get(a, a) for a in args]
    extra = ["--out", tmp_path / "iv.h5", "--quiet", "--max-examples", "8"] if args[0] == "intervene" else ["--max-examples", "8"]
    result = _run(*args, *extra, "--splits", "nmonli_test", "--data-dir", monli_dir)
    assert result.exit_code == 2, (case, result.output)
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, (case, result.stderr)
    assert not (tmp_path / "iv.h5").exists()


def test_a_template_for_an_encoder_is_refused(tiny_classifier_dir, monli_dir):
    result = _run("evaluate", "--model", tiny_classifier_dir, "--template", "{premise} / {hypothesis}", "--splits", "nmonli_test", "--data-dir", monli_dir)
    assert result.exit_code == 2 and "templates and label words are for decoders" in result.stderr


def test_no_prefix_reuse_from_the_command_line_gives_the_same_logits(folders, monli_dir, tmp_path):
    """``--no-prefix-reuse`` runs every position of every pair: the file's logits equal the default's within 1e-5 at a
    residual site and a head."""
    import h5py
    import numpy as np

    files = {}
    for flag in ("--prefix-reuse", "--no-prefix-reuse"):
        files[flag] = tmp_path / f"{flag.strip('-')}.h5"
        result = _run("intervene", "--model", folders["clf"], "--splits", "nmonli_test,pmonli", "--max-examples", "10", flag,
                      "--locations", "blocks.1.hook_resid_post@w_h,blocks.0.attn.hook_z.h1@w_p", "--out", files[flag], "--data-dir", monli_dir, "--quiet")  # fmt: skip
        assert result.exit_code == 0, result.output
    with h5py.File(files["--prefix-reuse"], "r") as a, h5py.File(files["--no-prefix-reuse"], "r") as b:
        names = [n for n in a if n.startswith("interchange")] or list(a)
        compared = 0
        def visit(name, item):
            nonlocal compared
            if isinstance(item, h5py.Dataset) and name.endswith("logits"):
                assert np.abs(a[name][()] - b[name][()]).max() <= 1e-5, name
                compared += 1
        a.visititems(visit)
        assert compared == 2 and names


def test_each_kinds_flag_on_the_other_kind_is_one_line_and_exit_2(folders, tiny_classifier_dir, monli_dir, tmp_path):
    """``--compile`` is an encoder's (the decoder runner never compiles), ``--no-prefix-reuse`` a decoder's (an encoder
    has no prefix to reuse): each given to the other kind names its flag and the model's type, and writes nothing."""
    common = ["--splits", "nmonli_test", "--max-examples", "4", "--locations", "blocks.0.hook_resid_post@w_h", "--data-dir", monli_dir, "--quiet"]
    for model, flag, says in ((folders["clf"], "--compile", "--compile compiles an encoder's suffix; the model (llama) is a decoder"),
                              (tiny_classifier_dir, "--no-prefix-reuse", "--no-prefix-reuse runs every position of a decoder's pairs; "
                                                                         "the model (bert) is an encoder")):  # fmt: skip
        out = tmp_path / flag.strip("-")
        result = _run("intervene", "--model", model, flag, "--out", out / "iv.h5", *common)
        assert result.exit_code == 2 and says in result.output and len(result.output.strip().splitlines()) == 1, result.output
        assert not out.exists()


def test_few_shot_and_chat_prompts_are_seeded_recorded_and_leave_their_demonstrations_out(folders, monli_dir, tmp_path):
    """A few-shot prompt is the template after k solved training pairs, each followed by its label's word, drawn by the
    seed (the same seed the same pairs, another seed others); scoring leaves those pairs out; evaluate --shots scores
    what evaluate --template with that prompt's text scores; the chat form puts each pair in a user turn and each answer
    (its word without the leading space) in an assistant turn; and each is refused where it cannot be made."""
    import json
    import shutil

    import interp
    from interp.api.prompts import make_prompt
    from interp.core.errors import ConfigError

    task = interp.load_task("monli", data_dir=str(monli_dir))
    words = {"entailment": " yes", "neutral": " no"}
    zero = make_prompt(task, label_words=words)
    assert zero.template == Template().text and zero.demonstrations == ()
    three = make_prompt(task, label_words=words, shots=3, seed=1)
    train = {e.id: e for e in task.examples(task.training_splits)}
    assert len(three.demonstrations) == 3 and all(d in train for d in three.demonstrations)
    for d in three.demonstrations:
        e = train[d]
        assert Template().render(e.premise, e.hypothesis)[0] + words[e.label] + "\n\n" in three.template
    assert three.template.endswith(Template().text)
    assert make_prompt(task, label_words=words, shots=3, seed=1) == three
    assert make_prompt(task, label_words=words, shots=3, seed=2).demonstrations != three.demonstrations

    data = ["--data-dir", monli_dir]
    lm = ["--model", folders["lm"], "--label-words", "entailment= yes,neutral= no"]
    result = _run("evaluate", *lm, "--splits", "nmonli_train", "--shots", "4", "--shot-seed", "0", *data, "--json")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    prompt = make_prompt(task, label_words=words, shots=4, seed=0)
    assert found["prompt"]["demonstrations"] == list(prompt.demonstrations) and found["prompt"]["template"] == prompt.template
    shown_here = sum(d.startswith("nmonli_train") for d in prompt.demonstrations)
    assert found["nmonli_train"]["n"] == 1002 - shown_here
    same = _run("evaluate", *lm, "--template", prompt.template.replace("\n", "\\n"), "--splits", "nmonli_test", *data, "--json")
    again = _run("evaluate", *lm, "--splits", "nmonli_test", "--shots", "4", *data, "--json")
    assert json.loads(same.stdout)["nmonli_test"] == json.loads(again.stdout)["nmonli_test"], (same.output, again.output)
    assert "4 solved training pairs (seed 0" in _run("evaluate", *lm, "--splits", "nmonli_test", "--max-examples", "8", "--shots", "4", *data).stdout

    chatty = tmp_path / "chat"
    shutil.copytree(folders["lm"], chatty)
    config = json.loads((chatty / "tokenizer_config.json").read_text())
    config["chat_template"] = ("{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}<assistant>{% endif %}")  # fmt: skip
    (chatty / "tokenizer_config.json").write_text(json.dumps(config))
    from transformers import AutoTokenizer

    chat = make_prompt(task, label_words={"entailment": " Y", "neutral": " N"}, shots=2, tokenizer=AutoTokenizer.from_pretrained(chatty), chat=True)
    assert chat.label_words == {"entailment": "Y", "neutral": "N"} and chat.template.endswith("<user>" + Template().text + "\n<assistant>")
    assert chat.template.count("<assistant>") == 3 and chat.template.count("<user>") == 3
    result = _run("evaluate", "--model", chatty, "--label-words", "entailment= Y,neutral= N", "--chat", "--shots", "2", "--splits", "nmonli_test",
                  "--max-examples", "8", *data, "--json")  # fmt: skip
    assert result.exit_code == 0 and json.loads(result.stdout)["prompt"]["chat"] is True, result.output

    for args, says in [(["--model", folders["lm"], "--shots", "2"], "give label_words="),
                       ([*lm, "--chat"], "has no chat template"), ([*lm, "--shots", "-1"], "shots")]:  # fmt: skip
        result = _run("evaluate", *args, "--splits", "nmonli_test", *data)
        assert result.exit_code == 2 and says in result.output, result.output
    with pytest.raises(ConfigError, match="no word for the task's label 'neutral'"):
        make_prompt(task, label_words={"entailment": " yes", "contradiction": " no"})


def test_out_of_memory_in_a_decoder_pass_halves_it_and_drops_no_pair(task, monli_dir, monkeypatch):
    """A decoder's suffix pass (each base's prefix reused, and without) that runs out of memory is run again with half
    as many rows, the logits those of an uninterrupted run; one row that does not fit is raised, not dropped."""
    import interp.engine.decoder as decoder_engine
    from interp.backends import DecoderRunner

    tok = _tok("llama", monli_dir)
    lab = interp.IntervenableModel(interp.load_model(decoder_model("llama", tok), tok), task)
    examples = task.examples(("nmonli_test",), n=12, seed=0)
    loc = lab.location("blocks.0.hook_resid_post@w_h")
    encoded, sources = lab.encode(examples), lab.source_vectors(examples, loc)
    for reuse in (True, False):
        runner = DecoderRunner(lab.model.module, lab.model.tokenizer.pad_token_id, prefix_reuse=reuse)
        expected = runner.interchange_logits(encoded, sources, loc, batch_size=64)
        name = "run_suffix_cached" if reuse else "run_suffix"
        real, sizes = getattr(decoder_engine, name), []

        def small_memory(model, hidden, *args, real=real, sizes=sizes):
            sizes.append(len(hidden))
            if len(hidden) > 5:
                raise torch.OutOfMemoryError("CUDA out of memory (simulated)")
            return real(model, hidden, *args)

        monkeypatch.setattr(decoder_engine, name, small_memory)
        got = runner.interchange_logits(encoded, sources, loc, batch_size=64)
        monkeypatch.setattr(decoder_engine, name, real)
        assert torch.allclose(got, expected, atol=1e-6, rtol=0) and not got.isnan().any(), reuse
        assert max(sizes) > 5 and max(s for s in sizes if s <= 5) == 4, (reuse, sizes)  # halved until passes of 4 fit

    def no_memory(*args):
        raise torch.OutOfMemoryError("always")

    monkeypatch.setattr(decoder_engine, "run_suffix_cached", no_memory)
    with pytest.raises(torch.OutOfMemoryError):
        DecoderRunner(lab.model.module, lab.model.tokenizer.pad_token_id).interchange_logits(encoded[:1], sources[:1], loc, batch_size=4)


@pytest.mark.parametrize("family, causal_lm", [("llama", False), ("gemma3", True)])
def test_train_blocks_on_a_decoder_trains_the_top_blocks_the_norm_and_the_head_and_never_an_embedding(family, causal_lm, task, examples,
                                                                                                      monli_dir, tmp_path):  # fmt: skip
    """``train_blocks=1``: exactly the last block, the final norm and what lies outside the base model train (Llama's
    score head; Gemma 3's LM head is tied to its token embeddings, which stay frozen); every other weight is unchanged
    after the steps, the trained ones moved."""
    from interp.models.freezing import top_parameters

    tok = _tok(family, monli_dir)
    path = save_decoder(family, tmp_path / family, tok, causal_lm=causal_lm)
    model = interp.load_model(path, label_words={"entailment": " yes", "neutral": " no"} if causal_lm else None)
    inner = model.module.inner  # the Hugging Face model inside interp's decoder classifier
    base = inner.base_model
    expected = {n for n, _ in inner.named_parameters() if n.startswith((f"model.layers.{len(base.layers) - 1}.", "model.norm."))
                or not n.startswith("model.")}  # fmt: skip
    names = {id(p): n for n, p in inner.named_parameters()}
    assert {names[id(p)] for p in top_parameters(model.module, 1)} == expected
    head = inner.get_output_embeddings()  # Gemma 3's LM head is its token embeddings; Llama's classifier has a score head
    assert "model.embed_tokens.weight" not in expected and causal_lm == (head is not None and head.weight is base.embed_tokens.weight)
    tuned = interp.fine_tune(model, task, examples, epochs=1, batch_size=4, lr=1e-2, seed=0, train_blocks=1)
    after = dict(tuned.module.inner.named_parameters())
    for name, value in inner.named_parameters():
        moved = not torch.equal(value, after[name])
        assert moved == (name in expected) or (name in expected and value.numel() == 1), name


@pytest.mark.parametrize("template, says", [
    ("{% for a in range(99999) %}{% for b in range(99999) %}{% for c in range(99999) %}x{% endfor %}{% endfor %}{% endfor %}",
     "did not finish within 0.5 s"),
    ("{{ raise_exception('no system turn allowed') }}", "failed .*no system turn allowed"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "failed .*(SecurityError|UndefinedError)"),
    ("{{ range(10**7) | list | length }}", "failed .*(OverflowError|range too big)"),
])  # fmt: skip
def test_a_hostile_chat_template_is_one_line_within_the_time_limit(template, says, monkeypatch):
    """A chat template is data from the checkpoint: nested loops that would run for ever stop at the time limit, and
    raise_exception, a sandbox escape and a range past the sandbox's limit each give one line naming chat=."""
    from types import SimpleNamespace

    from interp.api import prompts
    from interp.core.errors import ConfigError

    monkeypatch.setattr(prompts, "CHAT_SECONDS", 0.5)
    tokenizer = SimpleNamespace(chat_template=template)

    def apply(messages, tokenize, add_generation_prompt):  # transformers' own sandboxed renderer, as the tokenizer calls it
        from transformers.utils.chat_template_utils import render_jinja_template

        rendered, _ = render_jinja_template(conversations=[messages], chat_template=template, add_generation_prompt=add_generation_prompt)
        return rendered[0]

    tokenizer.apply_chat_template = apply
    with pytest.raises(ConfigError, match=f"chat.*{says}") as caught:
        prompts.render_chat(tokenizer, [{"role": "user", "content": "hi"}])
    assert "\n" not in str(caught.value)  # one line; and the nested loops stopped (10^15 steps would never return)


def test_a_sentence_past_a_decoders_context_is_one_line_naming_the_part_to_shorten(task, monli_dir, tmp_path, capfd):
    """A 1 MB premise on a decoder: one ConfigError saying the example's sentences are what to shorten (the template is
    a few tokens), and nothing from transformers' tokenizer (its indexing warning) printed before it."""
    import interp
    from interp.core.errors import ConfigError

    tok = _tok("gpt2", monli_dir)
    lab = interp.IntervenableModel(interp.load_model(save_decoder("gpt2", tmp_path / "gpt2", tok), tok), task, complete=False)
    long = interp.examples([("a dog " * 170_000, "a mammal")])
    capfd.readouterr()
    with pytest.raises(ConfigError, match=r"past the model's context of 256 .*shorten the example's sentences") as caught:
        lab.predict(long)
    printed = capfd.readouterr()
    assert "\n" not in str(caught.value) and "Token indices sequence length" not in printed.err + printed.out
