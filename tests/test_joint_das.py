"""DAS over a joint alignment (``lab.train_das_jointly``): the subspace interventions written in one run equal the
joint interchange of the vectors they make, on an encoder and a decoder; a subspace as wide as the location is the
whole-vector joint interchange whatever its rotation (and a narrower one is not); training moves the rotations and is
seeded; held-out runs draw bases and sources among held-out examples only; bad settings are refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import interp
from interp.engine.interventions import Interchange, RotatedSubspace
from interp.engine.joint import intervened_logits, joint_logits

from decoders import decoder_model, tokenizer, tokenizer_kind

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

ALIGNMENT = {"lexrel": "blocks.0.hook_resid_post@w_h", "negated": "blocks.1.hook_resid_post@cls"}


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=8, seed=3)


def _by_hand(module, enc, writes, types: bool = True):
    """One plain pass of one input with a forward hook on each written block's output, written by hand: ``writes`` is
    ``[(block, position, function of the vector there)]``, applied in the run (a later block sees the earlier write);
    ``types``: an encoder's token types are given."""
    from hand_hooks import blocks

    def hook_for(position, change):
        def hook(_module, _inputs, output):
            hidden = (output[0] if isinstance(output, tuple) else output).clone()
            hidden[0, position] = change(hidden[0, position])
            return (hidden, *output[1:]) if isinstance(output, tuple) else hidden

        return hook

    handles = [blocks(module)[b].register_forward_hook(hook_for(p, f)) for b, p, f in writes]
    try:
        inputs = {"input_ids": torch.tensor([list(enc.input_ids)])}
        if types:
            inputs["token_type_ids"] = torch.tensor([list(enc.token_type_ids)])
        with torch.no_grad():
            return module(**inputs).logits[0]
    finally:
        for handle in handles:
            handle.remove()


def _check_intervened(lab, examples):
    """Rotated subspaces (and whole-vector interchanges) at both sites, each fed its own source, in one batched pass,
    equal forward hooks by hand that apply each intervention to the vector there in the run (block 1 sees block 0's
    write), within 1e-5; the whole vectors equal the joint interchange engine."""
    every = lab.bind(examples)
    locations = [lab.location(loc) for loc in ALIGNMENT.values()]
    vectors = [every.vectors(loc).cpu() for loc in locations]
    rng = np.random.default_rng(0)
    bases = torch.arange(len(examples))
    sources = [torch.from_numpy(rng.integers(0, len(examples), len(examples))) for _ in locations]
    model, pad = lab.model.module, lab.model.tokenizer.pad_token_id or 0
    for make in (lambda w: RotatedSubspace(w, k=3, seed=2), Interchange):
        chosen = {loc: make(v.shape[-1]).eval() for loc, v in zip(locations, vectors)}
        got = torch.empty(len(examples), model.config.num_labels)
        with torch.no_grad():
            for length in {len(e.input_ids) for e in every.encoded}:  # one pass per input length
                rows = torch.tensor([i for i, e in enumerate(every.encoded) if len(e.input_ids) == length])
                got[rows] = intervened_logits(model, every.encoded, bases[rows], {loc: v[s[rows]] for loc, v, s in zip(locations, vectors, sources)},
                                              chosen, pad).float()  # fmt: skip
            for r, enc in enumerate(every.encoded):
                writes = [(loc.hidden_index - 1, enc.positions[loc.roles[0]], lambda old, loc=loc, v=v, s=s: chosen[loc](old[None], v[s[r]][None])[0])
                          for loc, v, s in zip(locations, vectors, sources)]  # fmt: skip
                hand = _by_hand(model, enc, writes, types=lab.model.template is None)
                assert torch.allclose(got[r], hand.float(), atol=1e-5), (type(chosen[locations[0]]).__name__, r)
    whole = joint_logits(model, every.encoded, bases, {loc: v[s] for loc, v, s in zip(locations, vectors, sources)}, pad)
    assert torch.allclose(got, whole, atol=1e-5)  # the last `make`: whole vectors
    assert (got - lab.predict(examples)).abs().amax() > 1e-3  # the writes move the logits: agreement could have failed


def test_subspace_writes_equal_the_joint_interchange_of_their_vectors_on_an_encoder(encoder_lab, examples):
    _check_intervened(encoder_lab, examples)


def test_subspace_writes_equal_the_joint_interchange_of_their_vectors_on_a_decoder(task, examples, monli_dir):
    tok = tokenizer(tokenizer_kind("llama"), str(monli_dir))
    _check_intervened(interp.IntervenableModel(interp.load_model(decoder_model("llama", tok), tok), task), examples)


def test_a_full_width_subspace_is_the_whole_vector_and_training_is_seeded(encoder_lab, examples):
    width = {v: encoder_lab.width(examples, loc) for v, loc in ALIGNMENT.items()}
    full = encoder_lab.train_das_jointly(examples, ALIGNMENT, k=width, per_base=3, epochs=1, batch_size=8, test_share=0.5)
    assert torch.allclose(full.trained.logits, full.vanilla.logits, atol=1e-4) and torch.allclose(full.untrained.logits, full.vanilla.logits, atol=1e-4)
    found = encoder_lab.train_das_jointly(examples, ALIGNMENT, k=2, per_base=3, epochs=2, lr=1e-2, batch_size=8, test_share=0.5)
    assert (found.untrained.logits - found.vanilla.logits).abs().amax() > 1e-3  # the null of the line above: a narrow subspace is not
    assert (found.trained.logits - found.untrained.logits).abs().amax() > 1e-4 and len(found.losses) == 2  # training moved the rotations
    again = encoder_lab.train_das_jointly(examples, ALIGNMENT, k=2, per_base=3, epochs=2, lr=1e-2, batch_size=8, test_share=0.5)
    assert again.losses == found.losses and torch.equal(again.trained.logits, found.trained.logits)
    held_out = set(found.trained.base_ids) | {s for ids in found.trained.source_ids.values() for s in ids}
    assert len(held_out) <= len(examples) // 2 + 1 and found.train_runs == 3 * (len(examples) - len(examples) // 2)
    frame = found.summary_frame()
    assert list(frame.method) == ["trained", "untrained", "vanilla"] and (frame.iia_low <= frame.iia).all() and (frame.iia <= frame.iia_high).all()
    assert "held-out IIA" in repr(found) and ("learned" in repr(found)) and set(found.interventions) == set(ALIGNMENT)


@pytest.mark.parametrize("case, kwargs, message", [
    ("a kind that is not a sized subspace", {"kind": "boundless"}, "kind='boundless' must be one of rotated, lowrank"),
    ("sizes for other variables", {"k": {"lexrel": 2}}, "must give one size for every variable"),
    ("one location for both", {"alignment": {"lexrel": "blocks.0.hook_resid_post@w_h", "negated": "blocks.0.hook_resid_post@w_h"}},
     "names one location for two variables"),
    ("no source tuple", {"per_base": 0}, "per_base"),
    ("a subspace wider than its location", {"k": 10_000}, "k=10000"),
])  # fmt: skip
def test_bad_settings_are_refused_by_name(encoder_lab, examples, case, kwargs, message):
    kwargs = {"alignment": ALIGNMENT, "k": 2, "per_base": 1, "epochs": 1, **kwargs}
    with pytest.raises(interp.ConfigError, match=message.replace("(", r"\(").replace("[", r"\[")):
        encoder_lab.train_das_jointly(examples, **kwargs)


def test_the_command_trains_a_joint_alignment_and_writes_each_subspace(tiny_classifier_dir, monli_dir, tmp_path):
    """`interp das --alignment`: the printout (each method's IIA beside its nulls with intervals, the verdict), then
    joint_das.json and a loadable subspace per variable; the same folder again is refused without --overwrite, and a
    malformed alignment writes nothing."""
    import json

    from click.testing import CliRunner

    from interp.cli import main
    from interp.files.subspaces import load_trained_intervention

    args = ["das", "--model", str(tiny_classifier_dir), "--alignment", ",".join(f"{v}={loc}" for v, loc in ALIGNMENT.items()), "--subspace", "2",
            "--per-base", "2", "--epochs", "1", "--splits", "pmonli,nmonli_test", "--max-per-split", "6", "--test-share", "0.5",
            "--data-dir", str(monli_dir), "--out", str(tmp_path / "j"), "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith("method") and [line.split()[0] for line in lines[2:5]] == ["trained", "untrained", "vanilla"]
    assert "learned" in lines[5] and lines[6].startswith("[95%]: ")
    record = json.loads((tmp_path / "j" / "joint_das.json").read_text())
    assert record["alignment"] == ALIGNMENT and record["k"] == {"lexrel": 2, "negated": 2} and record["train_runs"] == 12
    assert [r["method"] for r in record["summary"]] == ["trained", "untrained", "vanilla"] and (tmp_path / "j" / "das-joint.manifest.json").is_file()
    for variable in ALIGNMENT:
        loaded, sidecar = load_trained_intervention(tmp_path / "j" / "interventions" / f"{variable}.safetensors")
        assert loaded.k == 2 and sidecar["location"] == ALIGNMENT[variable] and sidecar["joint_alignment"] == ALIGNMENT
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "holds joint_das.json; pass --overwrite" in again.stderr
    bad = CliRunner().invoke(main, [*args[:4], "lexrel", *args[5:-2], str(tmp_path / "b"), "--quiet"])
    assert bad.exit_code == 2 and "is not VARIABLE=LOCATION" in bad.stderr and not (tmp_path / "b").exists()
