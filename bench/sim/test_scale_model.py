"""The scaling model (bench/sim/scale_model.py) against what can be worked
out by hand: its slots are Redis's, one client's cycle time is the sum of
its parts, a single lock does not scale with shards, and uniform load does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale_model  # noqa: E402


def calibration(tmp_path: Path, **changes: float) -> scale_model.Calibration:
    values = json.loads((HERE / "calibration.json").read_text())
    values.update(changes)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(values))
    return scale_model.Calibration.load(path)


def test_slots_are_redis_cluster_slots() -> None:
    # The values `redis-cli CLUSTER KEYSLOT` gives (tests/slots checks the
    # server's own hash_slot() against a running redis-server).
    assert scale_model.hash_slot("123456789") == 12739
    assert scale_model.hash_slot("foo") == 12182
    assert scale_model.hash_slot("foo{hash_tag}") == 2515
    assert scale_model.hash_slot("foo{}{bar}") == 8363
    assert scale_model.shard_of_slot(16383, 3) == 2
    assert scale_model.shard_of_slot(0, 64) == 0


def test_one_client_cycle_is_the_sum_of_its_parts(tmp_path: Path) -> None:
    # A fixed commit time, one client: each command costs a round trip, the
    # server's CPU and one commit, and a cycle is two commands.
    cal = calibration(tmp_path, clients_per_shard=1, commit_p50_us=200, commit_p99_us=200,
                      server_cpu_us_per_command=10, rtt_us=150)
    result = scale_model.Simulation(cal, 1, None, seed=3).run(cycles=500, warmup_cycles=100)
    expected = 1.0 / (2 * (150e-6 + 10e-6 + 200e-6))
    assert result.cycles_per_s == pytest.approx(expected, rel=0.01)
    assert result.p99_acquire_ms == pytest.approx(0.36, rel=0.01)


def test_one_lock_does_not_scale_with_shards(tmp_path: Path) -> None:
    cal = calibration(tmp_path, locks=1, clients_per_shard=8)
    one = scale_model.Simulation(cal, 1, None, seed=5).run(cycles=2000, warmup_cycles=500)
    four = scale_model.Simulation(cal, 4, None, seed=5).run(cycles=2000, warmup_cycles=500)
    assert four.cycles_per_s == pytest.approx(one.cycles_per_s, rel=0.15)
    assert four.hot_shard_share == 1.0


def test_uniform_load_scales_near_linearly(tmp_path: Path) -> None:
    cal = calibration(tmp_path, clients_per_shard=8)
    one = scale_model.Simulation(cal, 1, None, seed=7).run(cycles=3000, warmup_cycles=1000)
    eight = scale_model.Simulation(cal, 8, None, seed=7).run(cycles=6000, warmup_cycles=2000)
    assert eight.cycles_per_s / (8 * one.cycles_per_s) >= 0.9


def test_the_command_prints_the_table_and_the_goal(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(HERE / "scale_model.py"), "--shards", "1,2", "--cycles", "500",
                          "--json", str(tmp_path / "out.json")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "| uniform | 2 |" in out.stdout
    assert "goal: uniform W1 at 2 shards >= 0.9x linear" in out.stdout
    rows = json.loads((tmp_path / "out.json").read_text())["rows"]
    assert [r["shards"] for r in rows] == [1, 2, 1, 2]


@pytest.mark.parametrize("change, says", [
    ({"rtt_us": -1}, "rtt_us must be a positive number"),
    ({"commit_p99_us": 10}, "commit_p99_us is below commit_p50_us"),
    ({"locks": "many"}, "locks must be a positive number"),
])
def test_a_bad_calibration_is_refused(tmp_path: Path, change: dict, says: str) -> None:
    values = json.loads((HERE / "calibration.json").read_text())
    values.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(values))
    out = subprocess.run([sys.executable, str(HERE / "scale_model.py"), "--calibration", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert says in out.stderr
