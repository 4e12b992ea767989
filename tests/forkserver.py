"""A fork server for the suite's command lines: torch, transformers and interp imported once, each command a fork.

On a 2-core machine starting ``interp`` costs about ten seconds of imports
(torch and transformers) before the command does anything, and the runnable
blocks of the docs run dozens of commands. Here one server process imports
them once; ``bin/interp`` and ``bin/python`` in its folder are small clients
that hand the server their arguments, working folder, environment and
standard streams (file descriptors over a Unix socket), and it forks a
child that runs the command exactly as the entry point would
(:func:`interp.cli.main`, or ``python -c CODE``) in that folder and
environment, writing to the client's own streams; the client exits with the
child's status. A client that cannot reach the server runs the real
program instead.

The command runs as written; what differs from a fresh process is only that
the modules were imported before the command's environment was set (the
server starts with the suite's environment, the one the commands get), and
that the suite's MoNLI files were parsed once (a command reading the same
text gets the same examples, :func:`interp.tasks.monli.data.read_split`).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

#: Imported by the server before it forks: what nearly every command imports.
PRELOAD = (
    "torch",
    "transformers",
    "transformers.models.bert.modeling_bert",
    "scipy.stats",
    "sklearn.linear_model",
    "matplotlib.pyplot",
    "networkx",
    "h5py",
    "interp",
    "interp.api",
    "interp.cli",
)

#: Seconds the server may take to import :data:`PRELOAD` (about 15 on a 2-core machine).
START_TIMEOUT = 300

CLIENT = """\
import json, os, socket, sys
program = {program!r}
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect({sock!r})
    message = {{"kind": program, "argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}}
    socket.send_fds(s, [json.dumps(message).encode()], [0, 1, 2])
except OSError:  # no server: the real program
    real = {real!r}
    os.execv(real, [real, *sys.argv[1:]])
status = s.recv(16)
if not status:  # the server went away during the command: not run again
    sys.exit("the suite's fork server stopped before the command ended")
sys.exit(int(status))
"""


def _run_child(message: dict, fds: list[int]) -> None:
    """In the forked child: take the client's streams, folder and environment, run the command, exit with its status."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(message["cwd"])
    os.environ.clear()
    os.environ.update(message["env"])
    code = 0
    try:
        if message["kind"] == "interp":
            from interp.cli import main

            sys.argv = ["interp", *message["argv"]]
            main()
        else:
            argv = message["argv"]
            if len(argv) < 2 or argv[0] != "-c":
                raise SystemExit(f"the fork server's python takes -c CODE only, got {argv}")
            sys.argv = ["-c", *argv[2:]]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else (print(exc.code, file=sys.stderr) or 1))
    except BaseException:  # noqa: BLE001 - as the interpreter does: the traceback, status 1
        import traceback

        traceback.print_exc()
        code = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve(sock_path: str) -> None:
    """The server: import :data:`PRELOAD`, say ``ready`` on stdout, then fork a child per client until killed or
    orphaned."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    if os.environ.get("INTERP_MONLI_DIR"):  # the suite's MoNLI, parsed once: a command that reads the same text reuses it
        from interp.tasks.monli.data import load_monli

        load_monli()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(sock_path)
    listener.listen(16)
    print("ready", flush=True)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nobody reads the pipe after this line
    waiting: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    parent = os.getppid()
    while os.getppid() == parent:  # the test process that started it is gone (killed): so is the server
        for _ in selector.select(timeout=0.05):
            conn, _ = listener.accept()
            data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            pid = os.fork()
            if pid == 0:
                listener.close()
                conn.close()
                _run_child(json.loads(data), fds)
            for fd in fds:
                os.close(fd)
            waiting[pid] = conn
        while waiting:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                try:
                    conn.send(str(code if code >= 0 else 128 - code).encode())
                finally:
                    conn.close()


class ForkServer:
    """A running server and its clients: :attr:`bin` holds ``interp`` and ``python``, which reach it at :attr:`socket`.

    Args:
        folder: where the socket and the clients go (a fresh temporary folder).
        env: the server's environment, the one the commands are to run in (:attr:`env`; put :attr:`bin` first on its
            ``PATH``).
    """

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.env = env
        self.bin = folder / "bin"
        self.bin.mkdir(parents=True)
        self.socket = folder / "s"
        sock = str(self.socket)
        venv_bin = Path(sys.executable).parent
        for program, real in (("interp", venv_bin / "interp"), ("python", Path(sys.executable))):
            client = self.bin / program
            client.write_text(f"#!{sys.executable} -IS\n" + CLIENT.format(program=program, sock=sock, real=str(real)))
            client.chmod(0o755)
        self.process = subprocess.Popen([sys.executable, __file__, sock], env=env, stdout=subprocess.PIPE, text=True)
        started = time.monotonic()
        with selectors.DefaultSelector() as waiting:
            waiting.register(self.process.stdout, selectors.EVENT_READ)
            line = self.process.stdout.readline() if waiting.select(timeout=START_TIMEOUT) else ""
        if line.strip() != "ready":
            self.close()
            raise RuntimeError(f"fork server did not start (after {time.monotonic() - started:.0f} s): {line!r}")

    def children(self) -> list[int]:
        """The pids of the server's children now: the commands running (Linux: read from ``/proc``)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended while the folder was read
                continue
            if int(fields[1]) == self.process.pid:
                found.append(int(stat.parent.name))
        return found

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


if __name__ == "__main__":
    serve(sys.argv[1])
