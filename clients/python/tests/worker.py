"""A worker process for the cross-process tests (test_session.py).

worker.py ENDPOINT LOCK hold-then-write : 1 s session, takes LOCK, prints
    "token N", waits for a line on stdin, then tries a fenced write and prints
    "refused" (StaleToken) or "written".
worker.py ENDPOINT LOCK append FILE ID : waits for LOCK (FIFO), appends
    "ID:token" to FILE, releases.
worker.py ENDPOINT LOCK hold GRACE [TTL] : a TTL-second session (default 30;
    close_grace=GRACE seconds, "none" for no ONCLOSE), takes LOCK, prints
    "token N", then sleeps until killed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import leasehold  # noqa: E402


def main() -> int:
    endpoint, lock_name, mode = sys.argv[1:4]
    client = leasehold.Client(endpoint, call_timeout=10.0)
    if mode == "hold-then-write":
        session = leasehold.Session(client, ttl=1.0)
        lock = session.lock(lock_name, wait=10.0)
        lock.acquire()
        print("token", lock.token, flush=True)
        sys.stdin.readline()  # paused (SIGSTOP) before this returns
        try:
            lock.fenced_put("ledger/job_42", "written by A")
            print("written", flush=True)
        except leasehold.StaleToken:
            print("refused", flush=True)
        session.close()
        return 0
    if mode == "hold":
        grace = None if sys.argv[4] == "none" else float(sys.argv[4])
        ttl = float(sys.argv[5]) if len(sys.argv) > 5 else 30.0
        session = leasehold.Session(client, ttl=ttl, close_grace=grace)
        lock = session.lock(lock_name, wait=10.0)
        lock.acquire()
        print("token", lock.token, flush=True)
        sys.stdin.readline()  # until killed (or stdin closes)
        return 0
    if mode == "append":
        path, ident = sys.argv[4:6]
        with leasehold.Session(client, ttl=5.0) as session, session.lock(lock_name, wait=60.0) as lock:
            with open(path, "a") as f:
                f.write(f"{ident}:{lock.token}\n")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
