"""Fixtures: real ``leasehold server`` and ``redis-server`` processes on 127.0.0.1.

The leasehold binary is ``$LEASEHOLD_BINARY`` (set by ctest), else
``build/leasehold`` of this checkout. Every process runs on a free loopback
port with a private data dir and is stopped at the end of its test.

Tests wait for conditions, never for time: ``wait_until`` (fails the test),
``poll_until`` (returns what it polled) and ``wait_until_async`` poll a
predicate under a deadline of ``scaled(timeout)``, the same time scale as
testkit/eventually.h (``LEASEHOLD_TEST_TIME_SCALE``, 1 to 100).
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, List, Optional, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))


def leasehold_binary() -> str:
    path = os.environ.get("LEASEHOLD_BINARY") or str(ROOT / "build" / "leasehold")
    if not os.access(path, os.X_OK):
        pytest.fail(f"leasehold binary not found at {path} (build it, or set LEASEHOLD_BINARY)")
    return path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


T = TypeVar("T")


def time_scale() -> float:
    """``LEASEHOLD_TEST_TIME_SCALE`` (a number from 1 to 100, default 1;
    anything else counts as 1, so it never makes a test stricter)."""
    try:
        value = float(os.environ.get("LEASEHOLD_TEST_TIME_SCALE") or "1")
    except ValueError:
        return 1.0
    return value if math.isfinite(value) and 1.0 <= value <= 100.0 else 1.0


def scaled(seconds: float) -> float:
    """An upper bound on how long something may take, grown by time_scale().
    Lower bounds ("not before the TTL") are not scaled."""
    return seconds * time_scale()


def poll_until(predicate: Callable[[], T], timeout: float, interval: float = 0.01) -> T:
    """Calls ``predicate`` every ``interval`` seconds until it returns
    something true, and returns that; after ``scaled(timeout)`` seconds
    returns the (false) value of one last call."""
    end = time.monotonic() + scaled(timeout)
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(interval)  # deliberate: the poll interval of the helper every wait goes through
    return predicate()


def wait_until(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.01) -> T:
    """poll_until(), failing the test if ``predicate`` never held."""
    value = poll_until(predicate, timeout, interval)
    if not value:
        pytest.fail(f"timed out after {scaled(timeout)}s waiting for {what}")
    return value


async def wait_until_async(predicate: Callable[[], T], timeout: float, what: str, interval: float = 0.01) -> T:
    """wait_until() for a coroutine: the event loop runs between polls."""
    end = time.monotonic() + scaled(timeout)
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(interval)  # deliberate: the poll interval of the helper
    value = predicate()
    if not value:
        pytest.fail(f"timed out after {scaled(timeout)}s waiting for {what}")
    return value


def port_open(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class HoldingProxy:
    """A loopback TCP proxy in front of 127.0.0.1:``port`` that can hold the
    network, as the fault proxy of the C++ tests does with a held partition
    (torture/faults/fault_proxy.h): ``hold()`` stops every byte both ways on
    every connection, current and new (they wait in the kernel and here, and
    flow again at ``heal()``, as TCP would retransmit them after a partition
    heals; a close waits too). ``hold_on``: hold by itself when a chunk
    containing these bytes arrives (before forwarding it). ``held`` is set
    at each hold. ``accepted`` and ``open`` count connections. Use as a
    context manager: leaving it closes every socket."""

    def __init__(self, port: int, hold_on: Optional[bytes] = None) -> None:
        self._port = port
        self._hold_on = hold_on
        self.held = threading.Event()
        self._flowing = threading.Event()
        self._flowing.set()
        self._mu = threading.Lock()
        self._socks: List[socket.socket] = []
        self.accepted = 0
        self.open = 0
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self.endpoint = f"127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept_loop, daemon=True).start()

    def hold(self) -> None:
        self._flowing.clear()
        self.held.set()

    def heal(self) -> None:
        self._flowing.set()

    def __enter__(self) -> "HoldingProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self._flowing.set()
        with self._mu:
            socks, self._socks = self._socks + [self._listener], []
        for sock in socks:
            sock.close()

    def _accept_loop(self) -> None:
        while True:
            try:
                c, _ = self._listener.accept()
                up = socket.create_connection(("127.0.0.1", self._port))
            except OSError:
                return
            with self._mu:
                self.accepted += 1
                self.open += 1
                self._socks += [c, up]
            ended = threading.Event()
            threading.Thread(target=self._pipe, args=(c, up, ended), daemon=True).start()
            threading.Thread(target=self._pipe, args=(up, c, ended), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, ended: threading.Event) -> None:
        try:
            while True:
                self._flowing.wait()
                data = src.recv(65536)
                with self._mu:
                    if self._hold_on is not None and self._hold_on in data:
                        self._hold_on = None
                        self.hold()
                self._flowing.wait()  # a chunk read as the hold began waits here
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with self._mu:
                if not ended.is_set():
                    ended.set()
                    self.open -= 1
            for sock in (src, dst):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Proc:
    """One server child process on a fixed loopback port."""

    def __init__(self, argv_for_port: Callable[[int], List[str]], log: Path) -> None:
        self._argv_for_port = argv_for_port
        self._log = log
        self.port = 0
        self.proc: Optional[subprocess.Popen[bytes]] = None

    @property
    def endpoint(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, same_port: bool = False) -> None:
        for _ in range(5):
            if not same_port or not self.port:
                self.port = free_port()
            with open(self._log, "ab") as log:
                proc = self.proc = subprocess.Popen(self._argv_for_port(self.port), stdout=log, stderr=log)
            if poll_until(lambda: port_open(self.port) or proc.poll() is not None, 15) and port_open(self.port):
                return
            self.kill()
            if same_port:  # the old socket may linger a moment
                poll_until(lambda: not port_open(self.port), 5)
        pytest.fail(f"could not start {self._argv_for_port(self.port)}; see {self._log}")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.resume()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=15)

    def restart(self) -> None:
        self.stop()
        self.start(same_port=True)

    def pause(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)


def leasehold_proc(tmp_path: Path, name: str = "leasehold") -> Proc:
    binary = leasehold_binary()
    data = tmp_path / f"{name}-data"
    return Proc(
        lambda port: [binary, "server", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data), "--log-level", "warn"],
        tmp_path / f"{name}.log",
    )


def redis_proc(tmp_path: Path, name: str, prefix: Optional[List[str]] = None) -> Proc:
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    return Proc(
        lambda port: (prefix or [])
        + ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
           "--dir", str(d), "--daemonize", "no"],
        tmp_path / f"{name}.log",
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Proc]:
    p = leasehold_proc(tmp_path)
    p.start()
    yield p
    p.stop()


@pytest.fixture
def redis_servers(tmp_path: Path) -> Iterator[List[Proc]]:
    procs = [redis_proc(tmp_path, f"redis{i}") for i in range(5)]
    for p in procs:
        p.start()
    yield procs
    for p in procs:
        p.stop()
