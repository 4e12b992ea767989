"""Joint interchange interventions (``lab.interchange_jointly``): two sites written in one run, each from its own source,
against forward hooks written by hand on an encoder and a decoder; one variable alone is the single-site interchange;
the counterfactual is INFER's with each variable from its own source; the draw is seeded and recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import interp

from decoders import decoder_model, tokenizer, tokenizer_kind
from hand_hooks import by_hand

pytestmark = pytest.mark.filterwarnings("ignore::interp.InterpWarning")

ALIGNMENT = {"lexrel": "blocks.0.hook_resid_post@w_h", "negated": "blocks.1.hook_resid_post@cls"}


@pytest.fixture(scope="module")
def examples(task):
    return task.examples(("pmonli", "nmonli_test"), per_split=4, seed=3)


def _check_against_hooks(lab, examples, alignment, per_base):
    res = lab.interchange_jointly(examples, {v: examples for v in alignment}, alignment, per_base=per_base, seed=1)
    by_id = {e.id: e for e in examples}
    encoded = {e.id: enc for e, enc in zip(examples, lab.encode(examples))}
    vectors = {v: dict(zip([e.id for e in examples], lab.vectors(examples, loc)[:, 0])) for v, loc in alignment.items()}
    for r, base in enumerate(res.base_ids):
        enc = encoded[base]
        writes = []
        for v, loc in alignment.items():
            location = lab.location(loc)
            role = location.roles[0]
            writes.append((location.hidden_index - 1, enc.positions[role], vectors[v][res.source_ids[v][r]]))
        types = list(enc.token_type_ids) if lab.model.template is None else None
        _, logits = by_hand(lab.model.module, enc.input_ids, types, writes=writes)
        assert torch.allclose(res.logits[r], logits.to(res.logits.dtype), atol=1e-5), (r, base)
    assert by_id and (res.logits - lab.predict([by_id[b] for b in res.base_ids])).abs().amax() > 1e-3  # the null: writes move logits
    return res


def test_two_sites_each_from_its_own_source_equal_hooks_by_hand_on_an_encoder(encoder_lab, examples):
    res = _check_against_hooks(encoder_lab, examples, ALIGNMENT, per_base=3)
    assert len(res.base_ids) == 3 * len(examples) and res.per_base == 3
    naive = encoder_lab.interchange_jointly(examples, {v: examples for v in ALIGNMENT}, ALIGNMENT, per_base=3, seed=1, naive=True)
    assert naive.source_ids == res.source_ids and torch.allclose(naive.logits, res.logits, atol=1e-5)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_two_sites_each_from_its_own_source_equal_hooks_by_hand_on_a_decoder(family, task, examples, monli_dir):
    tok = tokenizer(tokenizer_kind(family), str(monli_dir))
    lab = interp.IntervenableModel(interp.load_model(decoder_model(family, tok), tok), task)
    _check_against_hooks(lab, examples, {"lexrel": "blocks.0.hook_resid_post@w_h", "negated": "blocks.1.hook_resid_post@w_p"}, per_base=2)


def test_one_variable_alone_is_the_single_site_interchange(encoder_lab, examples):
    res = encoder_lab.interchange_jointly(examples, {"lexrel": examples}, {"lexrel": ALIGNMENT["lexrel"]}, per_base=4, seed=2)
    grid = encoder_lab.interchange(examples, examples, ALIGNMENT["lexrel"], variables=("lexrel",))
    row = {e.id: i for i, e in enumerate(examples)}
    for r, (b, s) in enumerate(zip(res.base_ids, res.source_ids["lexrel"])):
        assert torch.allclose(res.logits[r], grid.logits[row[b], row[s]], atol=1e-5)
        assert res.counterfactual[r] == grid.causal_pred["lexrel"][row[b], row[s]]


def test_the_counterfactual_takes_each_variable_from_its_own_source(encoder_lab, examples):
    """INFER: entailment exactly where lexrel is ⊏ and there is no negation, or ⊐ under negation (Figure 1)."""
    res = encoder_lab.interchange_jointly(examples, {v: examples for v in ALIGNMENT}, ALIGNMENT, per_base=6, seed=4)
    by_id = {e.id: e for e in examples}
    for r in range(len(res.base_ids)):
        forward = by_id[res.source_ids["lexrel"][r]].lexrel.value == "forward"
        negated = by_id[res.source_ids["negated"][r]].negated
        assert res.labels[res.counterfactual[r]] == ("entailment" if forward != negated else "neutral")
    assert len({(a, b) for a, b in zip(res.source_ids["lexrel"], res.source_ids["negated"])}) > len(examples)  # tuples, not a diagonal
    again = encoder_lab.interchange_jointly(examples, {v: examples for v in ALIGNMENT}, ALIGNMENT, per_base=6, seed=4)
    assert again.source_ids == res.source_ids  # seeded


def test_the_result_states_its_nulls_and_saves_every_source(encoder_lab, examples, tmp_path):
    res = encoder_lab.interchange_jointly(examples, {v: examples for v in ALIGNMENT}, ALIGNMENT, per_base=5)
    s = res.summary()
    assert s["rows"] == 40 and {"iia", "stays_base", "copies_lexrel", "copies_negated", "iia_causal"} <= set(s)
    assert s["iia"].low <= float(s["iia"]) <= s["iia"].high and "word pairs" in s["interval"]
    assert float(s["iia"]) == pytest.approx(float(np.mean(res.model_pred == res.counterfactual)))
    assert "IIA" in repr(res) and "stays the base" in repr(res) and "copies negated" in repr(res)
    path = res.save(tmp_path / "joint.json")
    record = json.loads(path.read_text())
    assert record["alignment"] == ALIGNMENT and len(record["rows"]) == 40
    assert [row["source_negated"] for row in record["rows"]] == res.source_ids["negated"]
    with pytest.raises(interp.OutputError, match="exists"):
        res.save(path)


@pytest.mark.parametrize("sources, alignment, options, says", [
    ({"lexrel": None}, {"negated": "blocks.0.hook_resid_post@cls"}, {}, "must map the same variables"),
    ({"colour": None}, {"colour": "blocks.0.hook_resid_post@cls"}, {}, "no such variable"),
    ({"lexrel": None, "negated": None}, {"lexrel": "blocks.0.hook_resid_post@w_h", "negated": "blocks.0.hook_resid_post@w_h"}, {}, "one location for two"),
    ({"lexrel": None}, {"lexrel": "blocks.0.hook_resid_post@w_h"}, {"per_base": 0}, "per_base=0"),
], ids=["other variables", "unknown variable", "one location twice", "no tuples"])  # fmt: skip
def test_a_bad_joint_intervention_names_the_parameter(encoder_lab, examples, sources, alignment, options, says):
    with pytest.raises(interp.ConfigError, match=says):
        encoder_lab.interchange_jointly(examples, {v: examples for v in sources}, alignment, **options)


def test_the_command_runs_a_joint_intervention_beside_each_variable_alone(tiny_classifier_dir, monli_dir, tmp_path):
    from click.testing import CliRunner

    from interp.cli import main

    out = tmp_path / "joint.json"
    args = ["intervene", "--model", str(tiny_classifier_dir), "--alignment", ",".join(f"{v}={loc}" for v, loc in ALIGNMENT.items()),
            "--splits", "pmonli,nmonli_test", "--max-per-split", "6", "--per-base", "4", "--seed", "3", "--data-dir", str(monli_dir), "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("joint interchange (lexrel at blocks.0.hook_resid_post@w_h, negated at blocks.1.hook_resid_post@cls): 48 runs, 4 source")
    assert any(line.startswith("lexrel alone at blocks.0.hook_resid_post@w_h: IIA ") for line in lines)
    assert any(line.startswith("negated alone at blocks.1.hook_resid_post@cls: IIA ") for line in lines)
    assert any("stays the base" in line and "copies the negated source" in line for line in lines) and "[95%]: " in result.stdout
    record = json.loads(out.read_text())
    assert record["per_base"] == 4 and record["seed"] == 3 and set(record["alone"]) == {"lexrel", "negated"} and len(record["rows"]) == 48
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and "exists; pass --overwrite" in again.stderr  # nothing overwritten unless told
    for extra, says in ((["--locations", "blocks.0.hook_resid_post@w_h"], "not both or neither"),):
        bad = CliRunner().invoke(main, [*args[:-2], "--out", str(tmp_path / "x.json"), *extra])
        assert bad.exit_code == 2 and says in bad.stderr, bad.output
    bad = CliRunner().invoke(main, [*args[:4], "lexrel", *args[5:-2], "--out", str(tmp_path / "y.json")])
    assert bad.exit_code == 2 and "is not VARIABLE=LOCATION" in bad.stderr and not (tmp_path / "y.json").exists()


def test_a_joint_pass_out_of_memory_is_halved_and_drops_no_run(encoder_lab, examples, monkeypatch):
    """The engine's row loop (interp.engine.rows.in_passes): a pass of more than 2 rows that runs out of memory is run
    again in halves; every run's logits are the same as without it."""
    import interp.engine.plan as plan_engine  # the write plan's pass, which a joint run is

    alignment = {v: ALIGNMENT[v] for v in ALIGNMENT}
    expected = encoder_lab.interchange_jointly(examples, {v: examples for v in alignment}, alignment, per_base=4, seed=7)
    real, failed = plan_engine.batch_inputs, []

    def tight(model, batch, device):
        if batch["input_ids"].shape[0] > 2:
            failed.append(batch["input_ids"].shape[0])
            raise torch.OutOfMemoryError("injected")
        return real(model, batch, device)

    monkeypatch.setattr(plan_engine, "batch_inputs", tight)
    again = encoder_lab.interchange_jointly(examples, {v: examples for v in alignment}, alignment, per_base=4, seed=7)
    assert failed and torch.allclose(again.logits, expected.logits, atol=1e-6) and again.source_ids == expected.source_ids


def test_named_sources_run_each_base_with_its_own_source_of_each_variable(encoder_lab, examples):
    """per_base=None: base i with source i of every variable, as written; the same runs as hooks by hand, and the
    counterfactual INFER's with each variable from its own named source."""
    bases = examples[:5]
    lexrel, negated = examples[3:8], examples[::-1][:5]
    res = encoder_lab.interchange_jointly(bases, {"lexrel": lexrel, "negated": negated}, ALIGNMENT, per_base=None)
    assert res.base_ids == [e.id for e in bases] and res.source_ids == {"lexrel": [e.id for e in lexrel], "negated": [e.id for e in negated]}
    drawn = encoder_lab.interchange_jointly(bases, {"lexrel": lexrel, "negated": negated}, ALIGNMENT, per_base=1, seed=3)
    assert drawn.source_ids != res.source_ids  # the null: a draw is not the named order
    with pytest.raises(interp.ConfigError, match=r"sources\['negated'\].* holds 4 examples for 5 bases"):
        encoder_lab.interchange_jointly(bases, {"lexrel": lexrel, "negated": negated[:4]}, ALIGNMENT, per_base=None)
    encoded = {e.id: enc for e, enc in zip(examples, encoder_lab.encode(examples))}
    vectors = {v: dict(zip([e.id for e in examples], encoder_lab.vectors(examples, loc)[:, 0])) for v, loc in ALIGNMENT.items()}
    for r, base in enumerate(res.base_ids):
        enc = encoded[base]
        writes = [(encoder_lab.location(loc).hidden_index - 1, enc.positions[encoder_lab.location(loc).roles[0]], vectors[v][res.source_ids[v][r]])
                  for v, loc in ALIGNMENT.items()]  # fmt: skip
        _, logits = by_hand(encoder_lab.model.module, enc.input_ids, list(enc.token_type_ids), writes=writes)
        assert torch.allclose(res.logits[r], logits.to(res.logits.dtype), atol=1e-5), r


def test_the_command_runs_the_joint_intervention_a_file_names(tiny_classifier_dir, monli_dir, tmp_path):
    """intervene --alignment --source-ids FILE: each line one run, its base and each variable's source; bad lines named."""
    from click.testing import CliRunner

    import interp as api
    from interp.cli import main

    task = api.load_task("monli", data_dir=str(monli_dir))
    ids = [e.id for e in task.examples(("pmonli", "nmonli_test"), per_split=6, seed=0)]
    runs = [{"base": ids[i], "lexrel": ids[(i + 1) % len(ids)], "negated": ids[(i + 5) % len(ids)]} for i in range(len(ids))]
    named = tmp_path / "runs.jsonl"
    named.write_text("".join(json.dumps(r) + "\n" for r in runs), encoding="utf-8")
    out = tmp_path / "joint.json"
    args = ["intervene", "--model", str(tiny_classifier_dir), "--alignment", ",".join(f"{v}={loc}" for v, loc in ALIGNMENT.items()),
            "--splits", "pmonli,nmonli_test", "--max-per-split", "6", "--data-dir", str(monli_dir), "--source-ids", str(named)]  # fmt: skip
    result = CliRunner().invoke(main, [*args, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "12 runs, 1 source tuples per base" in result.stdout
    record = json.loads(out.read_text())
    assert [(r["base"], r["source_lexrel"], r["source_negated"]) for r in record["rows"]] == [tuple(r.values()) for r in runs]
    for text, says in (('{"base": "%s", "lexrel": "%s"}' % (ids[0], ids[1]), ":1: missing field 'negated'"),
                       ('{"base": "nowhere:1", "lexrel": "%s", "negated": "%s"}' % (ids[0], ids[1]), ":1: example 'nowhere:1' is not among")):  # fmt: skip
        named.write_text(text + "\n", encoding="utf-8")
        bad = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "z.json")])
        assert bad.exit_code == 2 and says in bad.stderr and not (tmp_path / "z.json").exists(), bad.output
