"""Every thermal.csv row is on the disk before the next is sampled: one write(2), then fdatasync(2),
seen with strace (Debian's strace package, installed by scripts/setup.sh) on `sparkguard thermal`
and on `sparkguard run`."""
import csv
import os
import re
import shutil
import signal
import subprocess
import textwrap
from pathlib import Path

from conftest import SPARKGUARD, base_env, wait_for

CALL = re.compile(r"^\d+\s+(write|writev|pwrite64|pwritev2?|fdatasync|fsync)\((\d+)<([^>]*)>")


def thermal_calls(trace, csv_path):
    """The write and sync calls on thermal.csv, in order: ["write", "fdatasync", ...]."""
    calls = []
    for line in trace.read_text().splitlines():
        match = CALL.match(line)
        if match and match.group(3) == str(csv_path):
            calls.append("sync" if match.group(1) in ("fdatasync", "fsync") else "write")
    return calls


def rows_in(csv_path):
    with open(csv_path) as f:
        return list(csv.DictReader(f))


def strace(trace, *command):
    strace_bin = shutil.which("strace")
    assert strace_bin, "strace is missing: run scripts/setup.sh"
    return [strace_bin, "-f", "-qq", "-y", "-e", "signal=none", "-e", "trace=write,writev,pwrite64,fdatasync,fsync",
            "-o", str(trace), *map(str, command)]


def assert_each_row_synced(calls, rows):
    # The header is one write; each row after it is one write followed by its fdatasync.
    assert calls[0] == "write" and calls[1:] == ["write", "sync"] * rows, calls


def test_thermal_fdatasyncs_each_row(tmp_path):
    out, trace = tmp_path / "thermal.csv", tmp_path / "trace"
    env = base_env(SPARKGUARD_FAKE_GPU="gb10", SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    proc = subprocess.Popen(strace(trace, SPARKGUARD, "thermal", "--interval", 1, "-o", out), env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= 4, 30), proc.poll()
        traced = int(Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()[0])
        os.kill(traced, signal.SIGINT)  # to sparkguard itself, which stops after its current row
        assert proc.wait(timeout=20) == 0, proc.stderr.read().decode()[-2000:]
    finally:
        proc.kill()
    rows = len(rows_in(out))
    assert rows >= 3
    assert_each_row_synced(thermal_calls(trace, out), rows)


def test_run_fdatasyncs_each_row(tmp_path):
    trainer = tmp_path / "t.py"
    trainer.write_text("#!/usr/bin/python3\n" + textwrap.dedent("""
        import time
        for step in range(1, 5):
            print(f"step {step}/4", flush=True)
            time.sleep(0.8)
    """))
    trainer.chmod(0o755)
    run, trace = tmp_path / "run", tmp_path / "trace"
    env = base_env(SPARKGUARD_FAKE_GPU="none", SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    result = subprocess.run(strace(trace, SPARKGUARD, "run", "--run-dir", run, "--thermal-interval", 1, "--", trainer),
                            env=env, cwd=tmp_path, capture_output=True, timeout=120)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    rows = len(rows_in(run / "thermal.csv"))
    assert rows >= 2
    assert_each_row_synced(thermal_calls(trace, run / "thermal.csv"), rows)
