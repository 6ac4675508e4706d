"""The memory guard against the real /proc/meminfo: a floor a few GB under this machine's
MemAvailable, and a stand-in trainer (tests/trainers/mem_hog.py) that maps and touches 256 MB
chunks with MAP_POPULATE as fast as the kernel gives them. The guard must kill it before
MemAvailable goes more than 0.5 GB under the floor, call the death an OOM of kind memory-guard,
and the ladder must finish the run at a batch that fits. The test's memory is bounded by the
floor: the trainer never gets more than the headroom plus half a GB."""
import json
import signal

import pytest

from conftest import PYTHON, TRAINERS, read_events, read_report, settled_mem_available, sparkguard

MEM_HOG = TRAINERS / "mem_hog.py"
HEADROOM_GB = 4.0    # the floor this far under MemAvailable now
GB_PER_SAMPLE = 1.5  # batch 8 and 4 need more than the headroom (12, 6 GB); batch 2 (3 GB) fits
OVERSHOOT_GB = 0.5


def hog(out):
    return [PYTHON, MEM_HOG, "--batch", "{batch_size}", "--grad-accum", "{grad_accum}", "--gb-per-sample",
            GB_PER_SAMPLE, "--steps", 2, "--output_dir", out]


def lowest_available_seen(out):
    """{attempt: the lowest MemAvailable the trainer read after one of its chunks}."""
    lowest = {}
    for line in (out / "available.jsonl").read_text().splitlines():
        r = json.loads(line)
        lowest[r["attempt"]] = min(lowest.get(r["attempt"], r["available"]), r["available"])
    return lowest


def test_the_guard_kills_a_runaway_trainer_near_the_floor_and_the_ladder_finishes(tmp_path):
    available = settled_mem_available()
    if available < (HEADROOM_GB + 4) * 1e9:
        pytest.skip("needs 8 GB of MemAvailable")
    floor_gb = available / 1e9 - HEADROOM_GB
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--memory-floor", f"{floor_gb:.3f}", "--ladder", "smaller-batch",
                        "--profile", "generic", "--batch", 8, "--grad-accum", 1, "--", *hog(out), cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [a["config"]["batch_size"] for a in attempts] == [8, 4, 2]
    assert [a["outcome"] for a in attempts] == ["oom", "oom", "succeeded"]
    floor = floor_gb * 1e9
    for a in attempts[:2]:
        assert a["oom_kind"] == "memory-guard" and a["confidence"] == "certain", a
        assert a["exit_code"] == 128 + signal.SIGKILL
        assert "under the floor" in a["evidence"] and "pool" in a["evidence"] and "/s" in a["evidence"], a["evidence"]
        guard = a["measured"]["memory_guard"]
        assert guard["at_kill"]["available_gb"] < floor_gb
        assert guard["at_kill"]["pool_gb"] > 0 and guard["at_kill"]["fall_rate_gb_per_s"] >= 0
        # How far under the floor the pool went: as the guard saw it, and as the trainer saw it.
        assert guard["lowest_available_gb"] * 1e9 > floor - OVERSHOOT_GB * 1e9, guard
    lowest = lowest_available_seen(out)
    for n in ("1", "2"):
        assert lowest[n] > floor - OVERSHOOT_GB * 1e9, (n, lowest[n] / 1e9, floor_gb)
    assert lowest["3"] > floor  # batch 2 fits: the guard never had to act
    assert "at_kill" not in attempts[2]["measured"]["memory_guard"]

    events = read_events(run)
    assert [e["kind"] for e in events if e["event"] == "oom"] == ["memory-guard", "memory-guard"]
    low = [e for e in events if e["event"] == "memory-low"]
    assert low and all(e["available_gb"] < 2 * floor_gb and e["floor_gb"] == pytest.approx(floor_gb, abs=0.01) for e in low)
    by_attempt = {}
    for e in low:
        by_attempt.setdefault(e["attempt"], []).append(e["time"])
    assert all(len(times) <= 30 for times in by_attempt.values())


def test_memory_floor_zero_turns_the_guard_off_and_bad_floors_are_usage_errors(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--memory-floor", "0", "--profile", "generic", "--batch", 1, "--",
                        PYTHON, MEM_HOG, "--batch", "{batch_size}", "--gb-per-sample", 0.25, "--steps", 1,
                        "--output_dir", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert "memory_guard" not in read_report(run)["attempts"][0]["measured"]
    assert not [e for e in read_events(run) if e["event"] == "memory-low"]
    for bad in ("6GB", "-1", "100%"):
        result = sparkguard("run", "--memory-floor", bad, "--", "true", cwd=tmp_path)
        assert result.returncode == 2 and b"--memory-floor" in result.stderr, (bad, result.stderr)


def test_the_trainers_tree_runs_with_a_raised_oom_score_adj(tmp_path):
    """So that the kernel's OOM killer, if it acts, takes the trainer and never sparkguard."""
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", "/bin/sh", "-c",
                        "cat /proc/self/oom_score_adj; sh -c 'cat /proc/self/oom_score_adj'", cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert result.stdout.split() == [b"500", b"500"]
