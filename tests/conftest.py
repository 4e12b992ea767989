"""Shared fixtures: the real MoNLI directory, spoiled copies of it, and tiny random BERT models."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never wait on the network in tests
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs one worker per core (pytest-xdist): one thread each, for this process and the
    # commands and notebook kernels it starts, so that the workers do not oversubscribe the cores.
    os.environ["OMP_NUM_THREADS"] = "1"
    import torch

    torch.set_num_threads(1)

import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis: `make test` draws the same examples on every run and keeps no example database, so the suite
# cannot fail at random; `make fuzz` (HYPOTHESIS_PROFILE=long) keeps the random search, 25 times longer.
settings.register_profile("default", max_examples=40, deadline=None, derandomize=True, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=1000, deadline=None, derandomize=False, database=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

REPO = Path(__file__).resolve().parents[1]
# The data lie beside the repository (../shared/datasets) unless the environment points elsewhere: `pytest` run
# directly reads them as `make test` does, and every command a test starts inherits the same folders.
for _variable, _folder in (("INTERP_MONLI_DIR", "monli"), ("INTERP_FRAGMENTS_DIR", "semantic_fragments")):
    if not os.environ.get(_variable) and (REPO.parent / "shared" / "datasets" / _folder).is_dir():
        os.environ[_variable] = str(REPO.parent / "shared" / "datasets" / _folder)

def file_seconds(items) -> dict:
    """What each file's ``slow`` markers say it takes on 2 cores: a module's marker (``pytestmark``) is the whole file's
    figure, a test's marker that test's; 0 for a file with no slow test."""
    weight: dict = {}
    for item in items:
        marker = item.get_closest_marker("slow")
        if marker is None:
            continue
        seconds = float(marker.kwargs.get("seconds", 60))
        module = getattr(item.module, "pytestmark", [])
        whole = any(m.name == "slow" for m in (module if isinstance(module, list) else [module]))
        if whole:
            weight[item.path] = max(weight.get(item.path, 0.0), seconds)
        else:
            weight[item.path] = weight.get(item.path, 0.0) + seconds
    return weight


def pytest_collection_modifyitems(config, items):
    """Under `make test`'s workers (pytest-xdist, one file per worker at a time, in collection order:
    --no-loadscope-reorder) the files holding slow tests start first, the longest first, so that no long file starts last."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        weight = file_seconds(items)
        items.sort(key=lambda item: -weight.get(item.path, 0.0))  # stable: a file's tests keep their order


if os.environ.get("ATEN_CPU_CAPABILITY") and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    # before any test builds a kernel: inductor's cache is not keyed by the capability (interp.engine.compiled)
    import tempfile

    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), f"torchinductor-aten-{os.environ['ATEN_CPU_CAPABILITY']}")


@pytest.fixture(scope="session", autouse=True)
def _cache_dir(tmp_path_factory):
    """Converted GGUF checkpoints and joined GGUF files go to this run's temporary folder, not the user's
    ``~/.cache/interp`` (``INTERP_CACHE_DIR``; a value already set is kept)."""
    if not os.environ.get("INTERP_CACHE_DIR"):
        os.environ["INTERP_CACHE_DIR"] = str(tmp_path_factory.getbasetemp() / "interp-cache")
    yield


@pytest.fixture(scope="session")
def monli_dir() -> Path:
    """The released MoNLI files: $INTERP_MONLI_DIR, else ../shared/datasets/monli beside the repo."""
    path = Path(os.environ.get("INTERP_MONLI_DIR") or REPO.parent / "shared" / "datasets" / "monli")
    if not (path / "pmonli.jsonl").is_file():
        pytest.fail(f"MoNLI not found at {path}: set INTERP_MONLI_DIR (see README.md, 'Getting the data')")
    return path


@pytest.fixture(scope="session")
def fragments_dir(monli_dir) -> Path:
    """The eight semantic fragments: $INTERP_FRAGMENTS_DIR, else semantic_fragments beside MoNLI."""
    path = Path(os.environ.get("INTERP_FRAGMENTS_DIR") or monli_dir.parent / "semantic_fragments")
    if not path.is_dir():
        pytest.fail(f"the semantic fragments are not at {path} (see datasets/semantic_fragments/README.md)")
    return path


@pytest.fixture
def spoil(tmp_path, monli_dir):
    """Copy MoNLI into tmp_path and replace one line (1-based) of one file; returns the directory."""

    def make(split: str = "nmonli_test", line: int | None = None, text: str | None = None, whole: str | None = None):
        target = tmp_path / "monli"
        if not target.exists():
            shutil.copytree(monli_dir, target)
            for f in target.iterdir():
                f.chmod(0o644)
        path = target / f"{split}.jsonl"
        if whole is not None:
            path.write_text(whole, encoding="utf-8")
        elif line is not None:
            lines = path.read_text(encoding="utf-8").splitlines()
            lines[line - 1] = text
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return target

    return make


def record(**changes) -> str:
    """A valid NMoNLI line with some fields changed (a field set to None is removed)."""
    base = {
        "sentence1": "the man does not own a dog",
        "sentence2": "the man does not own a mammal",
        "gold_label": "neutral",
        "depth": 4,
        "sentence1_lex": "dog",
        "sentence2_lex": "mammal",
    }
    base.update(changes)
    return json.dumps({k: v for k, v in base.items() if v is not None})


@pytest.fixture(scope="module")
def task(monli_dir):
    """MoNLI read from the data directory (a test module that needs another task defines its own ``task``)."""
    import interp

    return interp.load_task("monli", data_dir=str(monli_dir))


@pytest.fixture(scope="module")
def encoder_lab(wide_classifier_dir, task):
    """The wide random BERT classifier bound to ``task`` (the workbench's tests against hooks by hand)."""
    import interp

    return interp.IntervenableModel(str(wide_classifier_dir), task)


@pytest.fixture(scope="module", params=["encoder", "decoder"])
def lab_of_each_kind(request, encoder_lab, task, monli_dir):
    """The wide random BERT's lab, then a tiny random Llama's (its tokenizer trained on MoNLI's sentences), bound to
    ``task``: what a test that must hold for both model kinds runs on."""
    if request.param == "encoder":
        return encoder_lab
    import interp
    from decoders import decoder_model, tokenizer, tokenizer_kind

    tok = tokenizer(tokenizer_kind("llama"), str(monli_dir))
    return interp.IntervenableModel(interp.load_model(decoder_model("llama", tok), tok), task)


@pytest.fixture(scope="session")
def minilm_tokenizer():
    from transformers import AutoTokenizer

    from interp.models import embedded_model_dir

    return AutoTokenizer.from_pretrained(embedded_model_dir())


def _tiny_config(tokenizer, **kwargs):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
        **kwargs,
    )


@pytest.fixture(scope="session")
def tiny_encoder_dir(tmp_path_factory, minilm_tokenizer) -> Path:
    """A random 2-layer BertModel (no head) saved as safetensors, with the uncased WordPiece tokenizer."""
    import torch
    from transformers import BertModel

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("tiny_encoder")
    BertModel(_tiny_config(minilm_tokenizer)).save_pretrained(path, safe_serialization=True)
    minilm_tokenizer.save_pretrained(path)
    return path


def _tiny_classifier(path: Path, tokenizer, labels, seed: int, **config) -> Path:
    """A random 2-layer BertForSequenceClassification with ``labels``, saved with the tokenizer at ``path``."""
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    names = dict(enumerate(labels))
    model_config = _tiny_config(tokenizer, num_labels=len(labels), id2label=names, label2id={v: k for k, v in names.items()}, **config)
    BertForSequenceClassification(model_config).save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def wide_classifier_dir(tmp_path_factory, minilm_tokenizer) -> Path:
    """A random 2-block, 2-head BERT classifier with MoNLI's labels initialized wide (0.2), so that its outputs move
    with every site a test writes."""
    return _tiny_classifier(tmp_path_factory.mktemp("wide_classifier"), minilm_tokenizer, ("entailment", "neutral"), seed=4, initializer_range=0.2)


@pytest.fixture(scope="session")
def tiny_classifier_dir(tmp_path_factory, minilm_tokenizer) -> Path:
    """A random 2-layer BertForSequenceClassification with MoNLI's labels."""
    return _tiny_classifier(tmp_path_factory.mktemp("tiny_classifier"), minilm_tokenizer, ("entailment", "neutral"), seed=1)


def made_once(tmp_path_factory, name: str, make) -> Path:
    """``make(folder)`` run once per test run into a folder every xdist worker shares (under a file lock), the folder returned.

    Under ``make test`` the session fixtures of each worker would otherwise each redo a fine-tuning; the first worker to
    ask makes it, the others wait and read it. Without workers it is an ordinary temporary folder.
    """
    from filelock import FileLock

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.mktemp(name)
        make(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent  # this run's folder, above each worker's own
    folder, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def finetuned_minilm(monli_dir, tmp_path_factory):
    """The embedded model fine-tuned briefly on 384 PMoNLI examples (the challenge-set setting), scored on the PMoNLI
    examples held out of its training split and on NMoNLI test: (dir, stdout)."""
    folder = made_once(tmp_path_factory, "finetuned_minilm", lambda f: _finetune_minilm(monli_dir, f))
    return folder / "model", (folder / "stdout.txt").read_text(encoding="utf-8")


def _finetune_minilm(monli_dir: Path, folder: Path) -> None:
    from click.testing import CliRunner

    from interp.cli import main

    out = folder / "model"
    args = [
        "train",
        "--model", "minilm",
        "--splits", "pmonli_train",
        "--max-examples", "384",
        "--epochs", "3",
        "--lr", "2e-4",
        "--eval-splits", "pmonli_heldout,nmonli_test",
        "--data-dir", str(monli_dir),
        "--out", str(out),
        "--quiet",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (folder / "stdout.txt").write_text(result.stdout, encoding="utf-8")


@pytest.fixture(scope="session")
def mqnli_file(tmp_path_factory) -> Path:
    """A small generated MQNLI file (iid, 300 train / 120 test, 10 words per class)."""
    from interp.tasks.mqnli.generate import MQNLIConfig, generate_mqnli

    out = tmp_path_factory.mktemp("mqnli") / "iid.jsonl"
    generate_mqnli(MQNLIConfig(n_train=300, n_test=120, split="iid", vocab_size=10, seed=5), out)
    return out


@pytest.fixture(scope="session")
def tiny_mqnli_classifier_dir(tmp_path_factory, minilm_tokenizer) -> Path:
    """A random 2-layer BertForSequenceClassification with MQNLI's three labels, initialized wide so its outputs vary."""
    from interp.tasks.mqnli.files import MQNLI_LABELS

    path = tmp_path_factory.mktemp("tiny_mqnli_classifier")
    return _tiny_classifier(path, minilm_tokenizer, MQNLI_LABELS, seed=3, initializer_range=0.2)


@pytest.fixture(scope="session")
def fork_server(tmp_path_factory, monli_dir, fragments_dir):
    """One :class:`forkserver.ForkServer` per worker, in the suite's environment (the venv's programs on ``PATH``, the
    suite's data, no download): each ``interp`` or ``python -c`` run through its ``bin`` is a fork of a process that
    imported torch and transformers once, not a new interpreter paying about ten seconds for them."""
    from forkserver import ForkServer

    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               INTERP_MONLI_DIR=str(monli_dir), INTERP_FRAGMENTS_DIR=str(fragments_dir), HF_HUB_OFFLINE="1")
    server = ForkServer(tmp_path_factory.mktemp("forkserver"), env)
    yield server
    server.close()
