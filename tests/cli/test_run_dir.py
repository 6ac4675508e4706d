"""A run directory nobody can corrupt: one sparkguard at a time (an flock the kernel drops when
sparkguard dies), and a finished run is never appended to unless --overwrite moves it aside."""
import json
import os
import signal
import subprocess
import time

from conftest import PYTHON, SPARKGUARD, base_env, pid_alive, read_report, sparkguard, wait_for


def slow_trainer(tmp_path, seconds=60):
    path = tmp_path / "slow.py"
    path.write_text(f"import time\nprint('step 1', flush=True)\ntime.sleep({seconds})\n")
    return path


def start(run, *command):
    return subprocess.Popen([SPARKGUARD, "run", "--run-dir", run, "--", *map(str, command)], env=base_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def launched(run):
    events = run / "events.jsonl"
    return events.exists() and '"launch"' in events.read_text()


def test_a_second_sparkguard_is_refused_while_a_run_is_live(tmp_path):
    run = tmp_path / "run"
    first = start(run, PYTHON, slow_trainer(tmp_path))
    try:
        assert wait_for(lambda: launched(run), 30)
        intruder = sparkguard("run", "--run-dir", run, "--", "echo", "intruder", cwd=tmp_path)
        assert intruder.returncode == 2
        message = intruder.stderr.decode()
        assert f"PID {first.pid}" in message and "in use by another sparkguard" in message
        resumer = sparkguard("run", "--resume-run", run, cwd=tmp_path)
        assert resumer.returncode == 2 and f"PID {first.pid}" in resumer.stderr.decode()
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(60)
    assert "intruder" not in (run / "train.log").read_text()
    assert len(read_report(run)["attempts"]) == 1


def test_the_lock_goes_with_a_killed_sparkguard_and_resume_run_takes_it(tmp_path):
    run = tmp_path / "run"
    first = start(run, PYTHON, slow_trainer(tmp_path, 3))
    assert wait_for(lambda: launched(run), 30)
    trainer = json.loads([l for l in (run / "events.jsonl").read_text().splitlines() if '"launch"' in l][0])["pid"]
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert wait_for(lambda: not pid_alive(trainer), 10)  # parent-death signal: the trainer goes with it
    resumed = sparkguard("run", "--resume-run", run, cwd=tmp_path, timeout=120)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    assert read_report(run)["outcome"] == "succeeded"


def test_a_finished_run_is_not_appended_to_and_overwrite_moves_it_aside(tmp_path):
    run = tmp_path / "run"
    assert sparkguard("run", "--run-dir", run, "--", "echo", "first", cwd=tmp_path).returncode == 0
    log = (run / "train.log").read_text()
    again = sparkguard("run", "--run-dir", run, "--", "echo", "second", cwd=tmp_path)
    assert again.returncode == 2
    message = again.stderr.decode()
    assert "(succeeded)" in message and "--resume-run" in message and "--overwrite" in message
    assert (run / "train.log").read_text() == log

    fresh = sparkguard("run", "--run-dir", run, "--overwrite", "--", "echo", "second", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr.decode()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("run.previous-")]
    assert len(aside) == 1 and (aside[0] / "train.log").read_text() == log  # moved, never deleted
    assert "second" in (run / "train.log").read_text() and "first" not in (run / "train.log").read_text()
    assert read_report(run)["command"] == ["echo", "second"]
    assert sparkguard("run", "--overwrite", "--", "echo", "x", cwd=tmp_path).returncode == 2  # needs --run-dir
