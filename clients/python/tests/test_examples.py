"""The documented example runs against a real server and docs/python.md shows it verbatim."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import leasehold
from conftest import ROOT, Proc

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "billing_job.py"


def test_billing_job_example_runs(server: Proc) -> None:
    env = dict(os.environ, PYTHONPATH=str(EXAMPLE.parents[1] / "src"))
    out = subprocess.run([sys.executable, str(EXAMPLE), server.endpoint, "worker_a"], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "worker_a: billed job_42 with token" in out.stdout
    got = leasehold.Client(server.endpoint).fenced_get("billing/job_42/ledger")
    assert got is not None and got.text.startswith("worker_a step 2")


def test_docs_show_the_example_verbatim() -> None:
    doc = (ROOT / "docs" / "python.md").read_text()
    assert EXAMPLE.read_text() in doc
