"""Every block marked runnable in the README and the docs runs, as written, on the tiny random model and real MoNLI.

A fenced ``bash`` or ``python`` block right after a line ``<!-- runnable -->``
(invisible on GitHub and in the site) is runnable. The blocks of one page run
in order in one fresh folder (a later block reads what an earlier one wrote),
with ``examples/`` linked in, the venv's ``interp`` on ``PATH``, MoNLI and the
fragments from the suite's folders. One substitution keeps them fast: the
embedded model, ``minilm``, is replaced by a tiny random 2-layer BERT encoder
with its tokenizer, so a renamed flag or function fails here in seconds; and
a probe sweep that does not name its seeds runs one seed, not three. And
each ``interp`` command and Python block runs as a fork of a process that
imported torch and transformers once (``tests/forkserver.py``): the same
entry point, without paying their import for each command.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow(seconds=130)

REPO = Path(__file__).resolve().parents[1]
MARK = "<!-- runnable -->"
BLOCK = re.compile(re.escape(MARK) + r"\n```(bash|python)\n(.*?)```", re.S)


def pages() -> list[Path]:
    """The README and every Markdown page of the docs (not the generated API stubs)."""
    return [REPO / "README.md"] + sorted(p for p in (REPO / "docs").rglob("*.md") if "reference/api" not in p.as_posix())


def runnable_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of each runnable block, in order; a mark not followed by a bash or python block is an error."""
    blocks = BLOCK.findall(text)
    if len(blocks) != text.count(MARK):
        raise ValueError(f"{text.count(MARK) - len(blocks)} runnable mark(s) not followed by a ```bash or ```python block")
    return blocks


#: The fine-tuning most pages start with. It is run once per test run (shared by the workers) and its checkpoint copied
#: where a page's block writes it, so the block's own `interp train` finds it finished with the same settings and reuses
#: it, as it would for a user who ran the page twice: the command still runs, as written, without training again.
COMMON_TRAINING = re.compile(r"^interp train +--model minilm --splits pmonli,nmonli_train --out (\S+)$", re.M)


@pytest.fixture(scope="session")
def trained_tiny(tmp_path_factory, tiny_encoder_dir, monli_dir) -> Path:
    """:data:`COMMON_TRAINING` on the tiny encoder: the checkpoint folder."""
    from conftest import made_once

    def make(folder: Path) -> None:
        env = dict(os.environ, INTERP_MONLI_DIR=str(monli_dir), HF_HUB_OFFLINE="1")
        command = [str(Path(sys.executable).parent / "interp"), "train", "--model", str(tiny_encoder_dir), "--splits", "pmonli,nmonli_train",
                   "--out", str(folder / "model"), "--quiet"]  # fmt: skip
        subprocess.run(command, env=env, check=True, capture_output=True, timeout=900)

    return made_once(tmp_path_factory, "docs_tiny_model", make) / "model"


#: A probe sweep run without ``--probe-seeds``: its command up to a trailing comment, and the comment.
PROBE_SWEEP = re.compile(r"^(interp probe\b(?:(?!--probe-seeds)[^#\n])*?)(\s*#.*)?$", re.M)


def with_tiny_model(code: str, tiny: Path) -> str:
    """The block with the embedded model swapped for the tiny one (as a flag value and as a Python string), and a probe
    sweep that averages over the default three seeds given ``--probe-seeds 1``: a third of the work, every flag as written."""
    code = re.sub(r"--model minilm\b", f"--model {tiny}", code).replace('"minilm"', repr(str(tiny)))
    return PROBE_SWEEP.sub(lambda m: f"{m.group(1)} --probe-seeds 1{m.group(2) or ''}", code)


RUNNABLE = {p.relative_to(REPO).as_posix(): runnable_blocks(p.read_text(encoding="utf-8")) for p in pages()}


def test_the_readme_and_the_guides_have_runnable_blocks():
    """The null for the runs below: the README's two quickstarts and the guides' blocks are found, so none passes empty."""
    assert [lang for lang, _ in RUNNABLE["README.md"]] == ["bash", "python"]
    assert len([page for page, blocks in RUNNABLE.items() if page.startswith("docs/guides/") and blocks]) >= 5


def test_the_substitutions_touch_only_the_model_and_an_unseeded_probe_sweep():
    tiny = Path("/t")
    assert with_tiny_model("interp probe --cache a.h5 --out o   # targets: x\n", tiny) == "interp probe --cache a.h5 --out o --probe-seeds 1   # targets: x\n"
    assert with_tiny_model("interp probe --cache a.h5 --probe-seeds 2\n", tiny) == "interp probe --cache a.h5 --probe-seeds 2\n"
    assert with_tiny_model("interp train --model minilm --out m\n", tiny) == "interp train --model /t --out m\n"
    assert with_tiny_model('interp.load_model("minilm")', tiny) == "interp.load_model('/t')"


def test_a_mark_without_a_block_is_an_error():
    with pytest.raises(ValueError, match="not followed"):
        runnable_blocks(f"{MARK}\n\n```bash\ninterp --help\n```\n")
    assert runnable_blocks(f"{MARK}\n```bash\ninterp --help\n```\n") == [("bash", "interp --help\n")]


@pytest.mark.parametrize("page", [page for page, blocks in RUNNABLE.items() if blocks])
def test_the_runnable_blocks_run(page, tiny_encoder_dir, fork_server, tmp_path, request):
    (tmp_path / "examples").symlink_to(REPO / "examples")
    for out in COMMON_TRAINING.findall("\n".join(code for _, code in RUNNABLE[page])):
        shutil.copytree(request.getfixturevalue("trained_tiny"), tmp_path / out)
    env = dict(fork_server.env, PATH=f"{fork_server.bin}{os.pathsep}{fork_server.env['PATH']}")
    for number, (language, code) in enumerate(RUNNABLE[page], 1):
        code = with_tiny_model(code, tiny_encoder_dir)
        command = ["bash", "-euo", "pipefail", "-c", code] if language == "bash" else [str(fork_server.bin / "python"), "-c", code]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{page}, runnable block {number} ({language}):\n{code}\n{result.stderr[-3000:]}"
        trained = COMMON_TRAINING.findall(RUNNABLE[page][number - 1][1])
        for out in trained:  # the copied checkpoint was the one the command asked for: it reused it, training nothing
            assert "already trained with these settings" in result.stdout + result.stderr, (page, out)
