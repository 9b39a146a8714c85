"""The Python side of the cross-language test, shaped like leasehold-go-lock
and leasehold-node-lock.js: acquires the lock NAME (waiting in its queue),
prints the fencing token as one line on stdout, holds the lock until stdin
closes, then releases it.

Usage: python_waiter.py ENDPOINT NAME OWNER WAIT_SECONDS

Exit codes: 0 released; 75 not acquired within WAIT_SECONDS; 76 the lock
was lost while held; 1 anything else (the error on stderr).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python" / "src"))

import leasehold  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print("usage: python_waiter.py ENDPOINT NAME OWNER WAIT_SECONDS", file=sys.stderr)
        return 64
    endpoint, name, owner, wait = argv[1], argv[2], argv[3], float(argv[4])
    client = leasehold.Client(endpoint, call_timeout=5.0, name=f"xlang-python-{os.getpid()}")
    try:
        with leasehold.Session(client, ttl=10.0, owner=owner) as session:
            lock = session.lock(name, wait=wait)
            try:
                token = lock.acquire()
            except leasehold.TimedOut as e:
                print(f"python_waiter: {e}", file=sys.stderr)
                return 75
            print(token, flush=True)
            sys.stdin.read()  # hold until the driver closes our stdin
            if not lock.release():
                print(f"python_waiter: lost: {lock.reason}", file=sys.stderr)
                return 76
            return 0
    finally:
        client.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
