"""Cross-language FIFO on one lock: a Go holder, then a Node.js waiter, then
a Python waiter queue on the same lock of one real ``leasehold server``.
Releasing the holder must hand the lock to the Node waiter (first in the
queue), and releasing that to the Python one; the fencing tokens rise
strictly Go < Node < Python.

Each client is its own process, driven the same way: it prints its token
when it holds the lock and releases when its stdin closes. Each waiter is
seen in the server's queue (LOCK.INFO) before the next one starts. Every
wait is bounded; every child is killed at the end of the test whatever
happens, and dies with the driver if the driver itself is killed.

Environment (set by tests/xlang/CMakeLists.txt): LEASEHOLD_BINARY,
LEASEHOLD_GO_LOCK_CLI, LEASEHOLD_SOURCE_DIR.
"""

from __future__ import annotations

import ctypes
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List, Optional

import pytest

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("LEASEHOLD_SOURCE_DIR") or HERE.parents[1])
sys.path.insert(0, str(SOURCE / "clients" / "python" / "src"))

import leasehold  # noqa: E402

LOCK = "xlang-fifo"
STEP = 30.0  # upper bound, in seconds, on any one step on a busy machine


def scaled(seconds: float) -> float:
    try:
        factor = float(os.environ.get("LEASEHOLD_TEST_TIME_SCALE", "1"))
    except ValueError:
        factor = 1.0
    return seconds * max(factor, 1.0)


def poll(predicate: Callable[[], bool], timeout: float) -> bool:
    """Polls ``predicate`` until true (-> True) or ``timeout`` (scaled) passed (-> False)."""
    end = time.monotonic() + scaled(timeout)
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)  # deliberate: the poll interval of this helper
    return True


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = STEP) -> None:
    """Polls ``predicate`` until true; fails the test after ``timeout`` (scaled)."""
    if not poll(predicate, timeout):
        pytest.fail(f"timed out after {scaled(timeout)}s waiting for {what}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the driver goes away."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def executable(env: str, fallback: Optional[Path] = None) -> str:
    path = os.environ.get(env) or (str(fallback) if fallback else "")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"{env}: no executable at '{path}' (run through ctest, which builds and sets it)")
    return path


class Child:
    """One child process; its stdout is read line by line on a thread."""

    def __init__(self, name: str, argv: List[str], log: Path, stdin: bool = True) -> None:
        self.name = name
        self.log = log
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        with open(log, "ab") as err:
            self.proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=err, preexec_fn=_die_with_parent)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.put(raw.decode("utf-8", errors="replace").rstrip("\n"))
        self._lines.put(None)

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")[-2000:]

    def line(self, what: str, timeout: float = STEP) -> str:
        """The next stdout line; fails the test on EOF or after ``timeout``."""
        try:
            text = self._lines.get(timeout=scaled(timeout))
        except queue.Empty:
            pytest.fail(f"{self.name}: no {what} within {scaled(timeout)}s; stderr:\n{self.stderr()}")
        if text is None:
            pytest.fail(f"{self.name}: exited ({self.proc.wait()}) before printing {what}; stderr:\n{self.stderr()}")
        return text

    def has_line(self) -> bool:
        return not self._lines.empty()

    def release(self) -> None:
        """Closes stdin: the client releases its lock and exits."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def exit_code(self, timeout: float = STEP) -> int:
        try:
            return self.proc.wait(timeout=scaled(timeout))
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.name}: still running after {scaled(timeout)}s; stderr:\n{self.stderr()}")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture
def workdir() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="leasehold-xlang-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def children() -> Iterator[List[Child]]:
    """Every child started by the test; all killed at the end, whatever happened."""
    started: List[Child] = []
    yield started
    for child in reversed(started):
        child.kill()


@pytest.fixture
def server(workdir: Path, children: List[Child]) -> str:
    """A real ``leasehold server`` on a free loopback port; its endpoint."""
    binary = executable("LEASEHOLD_BINARY", SOURCE / "build" / "leasehold")
    for _ in range(5):
        port = free_port()
        child = Child("leasehold server", [binary, "server", "--listen", f"127.0.0.1:{port}",
                                           "--data-dir", str(workdir / "data"), "--log-level", "warn"],
                      workdir / "server.log", stdin=False)
        children.append(child)
        if poll(lambda: port_open(port) or child.proc.poll() is not None, 15) and port_open(port):
            return f"127.0.0.1:{port}"
        child.kill()  # the port was taken meanwhile, or the server failed: try another
    pytest.fail(f"leasehold server never listened; its log:\n{(workdir / 'server.log').read_text()[-2000:]}")


def test_go_holder_then_node_then_python_waiters_get_the_lock_in_queue_order(
        server: str, workdir: Path, children: List[Child]) -> None:
    go_cli = executable("LEASEHOLD_GO_LOCK_CLI")
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: scripts/install-deps.sh test installs nodejs")
    node_cli = SOURCE / "clients" / "node" / "bin" / "leasehold-node-lock.js"
    if not (SOURCE / "clients" / "node" / "node_modules" / "ioredis").is_dir():
        pytest.fail("clients/node/node_modules is missing: run scripts/install-deps.sh test")
    wait = str(int(scaled(120)))  # how long each waiter may queue: longer than the whole test

    observer = leasehold.Client(server, call_timeout=5.0)
    try:
        def info() -> leasehold.LockInfo:
            got = observer.lock_info(LOCK)
            assert got is not None, f"lock '{LOCK}' unknown to the server"
            return got

        def waiters() -> List[str]:
            got = observer.lock_info(LOCK)
            return [w.owner for w in got.waiters] if got is not None else []

        def free() -> bool:
            got = observer.lock_info(LOCK)
            return got is None or not got.holders

        go = Child("Go holder", [go_cli, "--endpoints", server, "--owner", "go", "--wait", "0", LOCK],
                   workdir / "go.log")
        children.append(go)
        go_token = int(go.line("the Go holder's token"))
        assert [(h.owner, h.token) for h in info().holders] == [("go", go_token)]

        nodejs = Child("Node waiter", [node, str(node_cli), LOCK, "--endpoints", server, "--owner", "node",
                                       "--wait", f"{wait}s"], workdir / "node.log")
        children.append(nodejs)
        wait_until(lambda: waiters() == ["node"], "the Node waiter in the lock's queue")

        python = Child("Python waiter", [sys.executable, str(HERE / "python_waiter.py"), server, LOCK, "python", wait],
                       workdir / "python.log")
        children.append(python)
        wait_until(lambda: waiters() == ["node", "python"], "the Python waiter in the queue after the Node one")
        assert not nodejs.has_line() and not python.has_line(), "a waiter printed a token while Go held the lock"

        go.release()
        assert go.exit_code() == 0, f"the Go holder's release failed; stderr:\n{go.stderr()}"
        node_token = int(nodejs.line("the Node waiter's token (first in the queue)"))
        now = info()
        assert [(h.owner, h.token) for h in now.holders] == [("node", node_token)]
        assert [w.owner for w in now.waiters] == ["python"], "the Python waiter stays queued behind Node"
        assert not python.has_line(), "the Python waiter got the lock while Node held it"

        nodejs.release()
        assert nodejs.exit_code() == 0, f"the Node waiter's release failed; stderr:\n{nodejs.stderr()}"
        python_token = int(python.line("the Python waiter's token"))
        now = info()
        assert [(h.owner, h.token) for h in now.holders] == [("python", python_token)]
        assert now.waiters == []

        python.release()
        assert python.exit_code() == 0, f"the Python waiter's release failed; stderr:\n{python.stderr()}"
        wait_until(free, "the lock free after the last release")

        assert go_token < node_token < python_token, (go_token, node_token, python_token)
    finally:
        observer.close()
