"""Each JSON output has one checked-in schema (docs/schema/*.json), and a
real server's outputs match it: every ``leasehold ... --json`` of the CLI
and every ``/api/*`` body of the HTTP listener, with holders, a waiter, a
binary lock name and history in the state. The schemas also say that every
number is a JSON number (``status --json`` once gave ``"1.00"``)."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import jsonschema
import pytest

from conftest import Proc, free_port, leasehold_binary, wait_until

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schema"
BINARY_NAME = b"bin\xff/lock"


def schema(name: str) -> Dict[str, Any]:
    with open(SCHEMAS / f"{name}.json") as f:
        return json.load(f)  # type: ignore[no-any-return]


def validate(name: str, document: Any) -> None:
    s = schema(name)
    jsonschema.Draft202012Validator.check_schema(s)
    jsonschema.Draft202012Validator(s).validate(document)


class Server:
    def __init__(self, tmp_path: Path) -> None:
        self.http_port = free_port()
        self.tmp = tmp_path
        self.proc = Proc(lambda port: [leasehold_binary(), "server", "--listen", f"127.0.0.1:{port}", "--data-dir",
                                       str(tmp_path / "data"), "--http-listen", f"127.0.0.1:{self.http_port}",
                                       "--log-level", "warn"], tmp_path / "server.log")
        self.children: List["subprocess.Popen[bytes]"] = []

    def cli(self, *args: Any) -> Tuple[int, Any, str]:
        """Runs ``leasehold ARGS --json``: exit code, parsed stdout, stderr."""
        p = subprocess.run([leasehold_binary(), *args, "--json", "--endpoints", self.proc.endpoint],
                           capture_output=True, timeout=60)
        out = p.stdout.decode("utf-8")
        assert out.endswith("\n") and out.count("\n") == 1, f"{args}: not one line: {out!r}"
        return p.returncode, json.loads(out), p.stderr.decode("utf-8", "replace")

    def hold(self, name: bytes, *flags: str) -> None:
        """``leasehold lock NAME -- sleep``, in the background."""
        self.children.append(subprocess.Popen([leasehold_binary(), "lock", "--endpoints", self.proc.endpoint, "--ttl",
                                               "30s", *flags, name, "--", "sleep", "120"],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def http(self, path: str) -> Tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=30) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def stop(self) -> None:
        for c in self.children:
            c.terminate()
            c.wait(timeout=30)
        self.proc.stop()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    s.proc.start()
    yield s
    s.stop()


def lock_state(s: Server, name: str) -> Any:
    code, info, _ = s.cli("info", name)
    return info if code == 0 else None


def test_every_output_matches_its_schema(server: Server) -> None:
    # Some history (a grant and a release), then a held lock with a waiter,
    # and a held lock whose name is not UTF-8.
    done = subprocess.run([leasehold_binary(), "lock", "--endpoints", server.proc.endpoint, "jobs/done", "--",
                           "true"], capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    server.hold(b"jobs/held")
    wait_until(lambda: lock_state(server, "jobs/held"), 20, "jobs/held to be held")
    server.hold(b"jobs/held", "--wait", "60s")
    wait_until(lambda: (lock_state(server, "jobs/held") or {}).get("waiters"), 20, "a waiter on jobs/held")
    server.hold(BINARY_NAME)
    wait_until(lambda: len(server.cli("locks")[1]) == 2, 20, "two locks held")

    seen = set()

    def cli(schema_name: str, *args: Any, code: int = 0) -> Any:
        got, doc, err = server.cli(*args)
        assert got == code, f"{args}: exit {got}: {err}"
        validate(schema_name, doc)
        seen.add(schema_name)
        return doc

    status = cli("cli-status", "status")
    assert isinstance(status["average_batch_commands"], (int, float)), status
    assert isinstance(status["loop_longest_turn_ms"], (int, float)), status
    locks = cli("cli-locks", "locks")
    assert any(lock.get("name_binary") for lock in locks), locks
    held = cli("cli-info", "info", "jobs/held")
    assert held["holders"] and held["waiters"], held
    assert cli("cli-info", "info", "jobs/nosuch", code=1) is None
    history = cli("cli-history", "history", "jobs/done")
    assert [r["event"] for r in history] == ["release", "grant"], history
    assert cli("cli-history", "history", "jobs/nosuch", code=1) == []
    sessions = cli("cli-session-list", "session", "list")
    assert len(sessions) == 3, sessions

    def http(schema_name: str, path: str, code: int = 200) -> Any:
        got, doc = server.http(path)
        assert got == code, f"{path}: {got} {doc}"
        validate(schema_name, doc)
        seen.add(schema_name)
        return doc

    http("http-status", "/api/status")
    assert len(http("http-locks", "/api/locks")["locks"]) == 2
    assert http("http-lock", "/api/locks/jobs%2Fheld")["waiters"]
    assert http("http-lock", "/api/locks/bin%FF%2Flock")["name_binary"] is True
    http("http-lock", "/api/locks/jobs%2Fnosuch", code=404)
    assert len(http("http-sessions", "/api/sessions")["sessions"]) == 3
    records = http("http-history", "/api/history?lock=jobs%2Fdone")["records"]
    # One name per concept: the CLI's history and the API's say the same.
    assert [(r["lock"], r["time_ms"], r["event"]) for r in records] == \
        [(r["lock"], r["time_ms"], r["event"]) for r in history]

    assert seen == {p.stem for p in SCHEMAS.glob("*.json")}, "a schema in docs/schema that no output is checked against"


def test_schemas_refuse_numbers_as_strings() -> None:
    """The check can fail: "1.00" where a number belongs is refused."""
    good = {"endpoint": "127.0.0.1:1", "role": "primary", "leasehold_version": "0.1.0", "uptime_in_seconds": 1,
            "applied_index": 1, "average_batch_commands": 1.0, "loop_longest_turn_ms": 9.8, "sessions": 0,
            "locks": 0, "waiters": 0, "some_counter": 3}
    validate("cli-status", good)
    for key, bad in (("average_batch_commands", "1.00"), ("some_counter", "3"), ("loop_longest_turn_ms", "9.8")):
        with pytest.raises(jsonschema.ValidationError):
            validate("cli-status", {**good, key: bad})
