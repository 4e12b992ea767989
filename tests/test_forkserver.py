"""The suite's fork server (``tests/forkserver.py``) runs a command as its entry point would: same output, same status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMANDS = (
    ["interp", "--help"],
    ["interp", "no-such-command"],  # a usage error: status 2, the message on stderr
    ["python", "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
    ["python", "-c", "raise RuntimeError('boom')"],
)


def outcome(result: subprocess.CompletedProcess) -> tuple:
    """Status, stdout and the last line of stderr (a traceback's file names differ: ``<string>`` either way)."""
    return result.returncode, result.stdout, (result.stderr.strip().splitlines() or [""])[-1]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c)[:40])
def test_a_command_through_the_fork_server_ends_as_the_real_program(command, fork_server, tmp_path):
    real = {"interp": str(Path(sys.executable).parent / "interp"), "python": sys.executable}[command[0]]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    direct = subprocess.run([real, *command[1:]], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    forked = subprocess.run([str(fork_server.bin / command[0]), *command[1:]], cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert outcome(forked) == outcome(direct)
    assert direct.returncode != 0 or command[1] == "--help"  # the null: failures are among the cases


def test_a_client_without_its_server_runs_the_real_program(fork_server, tmp_path):
    """A client whose socket is gone (the server died) still runs the command, as the real program."""
    client = fork_server.bin / "python"
    orphan = tmp_path / "python"
    orphan.write_text(client.read_text().replace(str(fork_server.socket), str(tmp_path / "no-socket")))
    orphan.chmod(0o755)
    result = subprocess.run([str(orphan), "-c", "import sys; print(sys.argv)"], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, "['-c']\n")
