"""Shared helpers for the command-line tests of `sparkguard run`: the binary, real trainers,
and cleanup of every process and memory cgroup a test creates."""
import atexit
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

SPARKGUARD = os.environ.get("SPARKGUARD", "sparkguard")
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
TRAINERS = SOURCE / "tests" / "trainers"
HF_TRAIN = TRAINERS / "hf_train.py"
PYTHON = "/usr/bin/python3"
CGROUP_V1 = Path("/sys/fs/cgroup/memory")


def state_dir():
    """A fresh XDG_STATE_HOME (a history of measured runs of its own), removed when the tests end."""
    path = tempfile.mkdtemp(prefix="sg-state-")
    atexit.register(shutil.rmtree, path, True)
    return path


def base_env(**extra):
    """The environment of a test run, with a history of measured runs of its own (XDG_STATE_HOME)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONUNBUFFERED="1", SPARKGUARD_PROFILES=str(SOURCE / "profiles"),
               PATH=f"{SOURCE / 'tests' / 'fakes'}:{os.environ['PATH']}", XDG_STATE_HOME=state_dir())
    env.update(extra)
    return env


def sparkguard(*args, cwd=None, env=None, timeout=600, stdin=subprocess.DEVNULL):
    return subprocess.run([SPARKGUARD, *map(str, args)], cwd=cwd, env=env or base_env(), capture_output=True,
                          timeout=timeout, stdin=stdin)


def read_report(run_dir):
    return json.loads((Path(run_dir) / "report.json").read_text())


def read_events(run_dir):
    return [json.loads(line) for line in (Path(run_dir) / "events.jsonl").read_text().splitlines()]


def read_attempts(output_dir):
    """What each attempt of hf_train.py ran with, as it wrote it."""
    return [json.loads(line) for line in (Path(output_dir) / "attempts.jsonl").read_text().splitlines()]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, timeout, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def mem_available():
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    pytest.skip("no MemAvailable in /proc/meminfo")


def settled_mem_available(step=64 << 20, interval=0.5, timeout=20):
    """MemAvailable once it has stopped moving (two readings `interval` apart within `step` bytes): the
    memory tests set their floor from it, and a previous test's processes still exiting would free
    memory after the reading and keep the pool above the floor."""
    previous = mem_available()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(interval)
        now = mem_available()
        if abs(now - previous) < step:
            return now
        previous = now
    return previous


@pytest.fixture
def memory_cgroup():
    """A fresh cgroup v1 memory cgroup; yields (path, set_limit). Removed afterwards, its processes killed."""
    if not CGROUP_V1.is_dir() or not os.access(CGROUP_V1, os.W_OK):
        pytest.skip("needs a writable cgroup v1 memory hierarchy (root)")
    path = CGROUP_V1 / f"sparkguard-test-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir()

    def set_limit(limit_bytes):
        (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
        memsw = path / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            memsw.write_text(str(limit_bytes))

    try:
        yield path, set_limit
    finally:
        for _ in range(50):
            pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)
        for _ in range(50):
            try:
                path.rmdir()
                break
            except OSError:
                time.sleep(0.1)


@pytest.fixture(scope="module")
def slurm_bed():
    """A real two-node Slurm (slurm_bed.py), started once for a test module and torn down after it,
    every process, namespace, veth and file it made, whatever happened."""
    import slurm_bed as bed_module
    why_not = bed_module.available()
    if why_not:
        pytest.skip(f"the Slurm test bed {why_not}")
    bed = bed_module.SlurmBed()
    try:
        bed.start()
        yield bed
    finally:
        bed.stop()
