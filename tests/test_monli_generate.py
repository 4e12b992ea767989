"""MoNLI-style generation from Debian's WordNet: the reader, the relation, the generator, its file read back as MoNLI, agreement with MoNLI's lexrel."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from interp.cli import main
from interp.core.errors import DataError
from interp.tasks import resolve_task
from interp.tasks.monli.data import load_monli, read_generated
from interp.tasks.monli.generate import MonliGenerateConfig, corpus_from_monli, generate_monli_records, substitute, wordnet_agreement
from interp.tasks.monli.wordnet import MAN_PAGE, _prepare, lexnames_from_man_page, neighbours, noun_relation, open_wordnet


@pytest.fixture(scope="module")
def wn():
    if not Path("/usr/share/wordnet/data.noun").is_file():
        pytest.fail("Debian's WordNet is not installed: make setup-test installs wordnet-base and wordnet-sense-index")
    return open_wordnet()


def test_lexnames_are_made_from_the_man_page_and_the_reader_root_once(tmp_path, monkeypatch):
    text = lexnames_from_man_page(gzip.decompress(Path(MAN_PAGE).read_bytes()).decode())
    lines = text.splitlines()
    assert len(lines) == 45 and lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[-1].startswith("44\tadj.ppl")
    with pytest.raises(DataError, match="lexicographer files"):
        lexnames_from_man_page("01\tadj.pert\tx\n00\tadj.all\ty\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = _prepare(Path("/usr/share/wordnet"), Path(MAN_PAGE))
    assert root == tmp_path / "interp" / "nltk_data" / "corpora" / "wordnet"
    assert (root / "lexnames").read_text() == text and not (root / "data.noun").is_symlink()
    stamp = (root / "data.noun").stat().st_mtime_ns
    assert _prepare(Path("/usr/share/wordnet"), Path(MAN_PAGE)) == root and (root / "data.noun").stat().st_mtime_ns == stamp


def test_a_missing_or_partial_wordnet_names_what_is_missing(tmp_path):
    with pytest.raises(DataError, match=r"does not exist; install Debian's WordNet"):
        open_wordnet(tmp_path / "none")
    (tmp_path / "data.noun").write_text("")
    with pytest.raises(DataError, match="lacks index.noun"):
        open_wordnet(tmp_path)
    result = CliRunner().invoke(main, ["monli-generate", "--out", str(tmp_path / "g.jsonl"), "--wordnet-dir", str(tmp_path / "none")])
    assert result.exit_code == 2 and "wordnet-base" in result.stderr and not (tmp_path / "g.jsonl").exists()


def test_noun_relations_follow_hypernyms_with_frequent_senses_breaking_ties(wn):
    assert noun_relation(wn, "poodle", "dog") == ("forward", 1)
    assert noun_relation(wn, "dog", "poodle") == ("reverse", 1)
    assert noun_relation(wn, "ball", "baseball") == ("reverse", 1)  # baseball.n.02 ⊏ ball.n.01, not the pitch ball.n.11
    assert noun_relation(wn, "dog", "car") is None and noun_relation(wn, "dog", "qwxz") is None
    near = neighbours(wn, "dog", max_depth=2, min_count=1)
    assert near["puppy"] == -1 and near["animal"] == 2 and all(w.isalpha() and w.islower() for w in near)
    assert set(neighbours(wn, "dog", max_depth=2, min_count=50)) < set(near)  # the rare-lemma filter removes some


def test_substitution_keeps_case_and_fixes_the_article():
    assert substitute("A man rides a horse.", "horse", "elephant") == "A man rides an elephant."
    assert substitute("An owl sleeps.", "owl", "bird") == "A bird sleeps."
    assert substitute("Dog and dog.", "dog", "cat") is None
    assert substitute("a dog chases a cat", "dog", "cat") is None


@pytest.fixture(scope="module")
def generated(wn, monli_dir, tmp_path_factory):
    monli = load_monli(monli_dir)
    corpus = corpus_from_monli([e for e in monli if e.split == "pmonli"])[:30] + corpus_from_monli([e for e in monli if e.split == "nmonli_test"])[:30]
    known = frozenset(w for e in monli for w in (e.w_p, e.w_h))
    records, stats = generate_monli_records(MonliGenerateConfig(per_sentence=1, seed=3), corpus, wn, known)
    path = tmp_path_factory.mktemp("wn") / "gen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records, stats, path, corpus, known


def test_generated_pairs_read_back_as_monli_with_infer_labels(generated, wn):
    records, stats, path, corpus, known = generated
    again, _ = generate_monli_records(MonliGenerateConfig(per_sentence=1, seed=3), corpus, wn, known)
    assert again == records and stats["labels"]["entailment"] == stats["labels"]["neutral"]
    task = resolve_task("monli", data_file=str(path))
    examples = task.load(task.splits)
    assert len(examples) == len(records) and {e.split for e in examples} == {"pmonli", "nmonli"}
    task.build_causal_model(examples)  # INFER reproduces every label
    for r in records:
        relation = noun_relation(wn, r["sentence1_lex"], r["sentence2_lex"])
        assert relation is not None and (relation[0] == "forward") == (r["depth"] > 0)
    assert any(r["new_word"] for r in records) and any(not r["new_word"] for r in records)


def test_spoiled_generated_lines_name_file_and_line(generated, tmp_path):
    records = generated[0]
    for change, message in (({"negated": "yes"}, "field 'negated' must be true or false"), ({"gold_label": "neutral" if records[1]["gold_label"] == "entailment" else "entailment"}, "contradicts depth")):
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(records[0]) + "\n" + json.dumps({**records[1], **change}) + "\n", encoding="utf-8")
        with pytest.raises(DataError, match=rf"bad.jsonl:2: .*{message}"):
            read_generated(path)


def test_wordnet_agrees_with_monli_where_both_know_the_words_and_the_null_does_not(wn, monli_dir):
    report = wordnet_agreement(load_monli(monli_dir), wn)
    assert report["both_in_wordnet"] > 1900 and report["agreement_of_both"] >= 0.99
    assert report["null_related_at_random"] < 0.3  # randomly re-paired words are mostly unrelated: agreement is not free


def test_cli_generates_and_evaluate_reads_the_file(tmp_path, monli_dir, tiny_classifier_dir):
    runner = CliRunner()
    out = tmp_path / "gen.jsonl"
    args = ["monli-generate", "--out", str(out), "--corpus", "nmonli_test", "--new-words-only", "--per-sentence", "1", "--data-dir", str(monli_dir)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "not in MoNLI" in result.output and "agreement" in result.output
    stats = json.loads((tmp_path / "gen.stats.json").read_text())
    assert stats["negated"] == stats["pairs"] and stats["new_words"] == stats["substitutes"] > 0
    assert runner.invoke(main, args).exit_code == 2  # exists
    assert runner.invoke(main, [*args, "--overwrite", "--max-depth", "0"]).exit_code == 2
    scored = runner.invoke(main, ["evaluate", "--model", str(tiny_classifier_dir), "--task", "monli", "--data-file", str(out), "--json"])
    assert scored.exit_code == 0, scored.output
    assert json.loads(scored.output)["nmonli"]["n"] == stats["pairs"]
