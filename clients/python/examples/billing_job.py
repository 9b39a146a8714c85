"""billing_job: the seeds' billing job (lock:job_42) written with leasehold.

The worker holds the lock through a session that keeps itself alive, checks
its lease before each step, and writes the ledger with its fencing token:
a worker that paused past its lease (GC, SIGSTOP, VM migration) gets its
late write refused instead of corrupting the newer holder's records.

Usage: python3 billing_job.py [host:port] [worker-name]
"""

import sys

import leasehold


def run(endpoint: str, worker: str) -> int:
    client = leasehold.Client(endpoint)
    with leasehold.Session(client, ttl=10.0, owner=worker) as session:
        try:
            with session.lock("lock:job_42", wait=5.0) as lock:
                for step in range(3):
                    lock.check()  # raises LockLost once the lease is in doubt
                    record = f"{worker} step {step} (token {lock.token})"
                    # Fenced write: the store refuses it (StaleToken) once a
                    # newer token has been granted for lock:job_42.
                    lock.fenced_put("billing/job_42/ledger", record)
                print(f"{worker}: billed job_42 with token {lock.token}")
                return 0
        except leasehold.TimedOut:
            print(f"{worker}: job_42 is being billed by someone else")
            return 75
        except (leasehold.LockLost, leasehold.StaleToken) as e:
            print(f"{worker}: lost job_42, stopped without writing: {e}")
            return 76


if __name__ == "__main__":
    sys.exit(run(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:7379",
                 sys.argv[2] if len(sys.argv) > 2 else "worker_a"))
