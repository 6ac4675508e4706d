"""Signals at the wrong moment: sparkguard passes them to the trainer's whole tree, stops what
ignores them after the grace period, leaves nothing behind, and a killed sparkguard resumes."""
import json
import os
import signal
import subprocess
import textwrap
import time

import pytest

from conftest import HF_TRAIN, PYTHON, SPARKGUARD, base_env, pid_alive, read_attempts, read_report, sparkguard, wait_for

STUBBORN_TREE = """
    import os, signal, subprocess, sys, time
    pids = os.environ["PIDS_FILE"]
    child = os.fork()
    def ignore():
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
    if child == 0:                      # ignores the polite signals, and has a grandchild that does too
        ignore()
        grandchild = subprocess.Popen(["sleep", "1000"], preexec_fn=ignore)
        escaped = subprocess.Popen(["sleep", "1001"], start_new_session=True)   # left the process group
        open(pids, "a").write(f"{os.getpid()} {grandchild.pid} {escaped.pid}\\n")
        time.sleep(1000)
        sys.exit(0)
    if os.environ.get("LEADER_IGNORES"):
        ignore()
    else:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    open(pids, "a").write(f"{os.getpid()}\\n")
    print("training step 1", flush=True)
    time.sleep(1000)
"""


def start_stubborn(tmp_path, grace, leader_ignores=False):
    trainer = tmp_path / "stubborn.py"
    trainer.write_text("#!/usr/bin/python3\n" + textwrap.dedent(STUBBORN_TREE))
    trainer.chmod(0o755)
    pids_file = tmp_path / "pids"
    env = base_env(PIDS_FILE=str(pids_file), **({"LEADER_IGNORES": "1"} if leader_ignores else {}))
    proc = subprocess.Popen([SPARKGUARD, "run", "--run-dir", tmp_path / "run", "--grace", str(grace), "--", trainer],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_for(lambda: pids_file.exists() and len(pids_file.read_text().split()) == 4, 20)
    return proc, [int(p) for p in pids_file.read_text().split()]


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_whole_tree_and_exits_128_plus_n(tmp_path, sig, code):
    proc, pids = start_stubborn(tmp_path, grace=1)
    try:
        started = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == code
        assert time.monotonic() - started >= 0.9, "the children that ignore it got no grace period"
        assert wait_for(lambda: not any(pid_alive(p) for p in pids), 5), [p for p in pids if pid_alive(p)]
        report = read_report(tmp_path / "run")
        assert report["outcome"] == "interrupted" and report["exit_code"] == code
        assert report["attempts"][0]["outcome"] == "interrupted"
    finally:
        proc.kill()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_leader_that_ignores_sigterm_is_killed_after_the_grace_period(tmp_path):
    proc, pids = start_stubborn(tmp_path, grace=2, leader_ignores=True)
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
        assert 1.9 <= time.monotonic() - started < 10
        assert wait_for(lambda: not any(pid_alive(p) for p in pids), 5)
    finally:
        proc.kill()


def test_children_left_behind_by_a_finished_trainer_are_stopped(tmp_path):
    trainer = tmp_path / "leaky.py"
    trainer.write_text("#!/usr/bin/python3\nimport subprocess, sys\n"
                       "p = subprocess.Popen(['sleep', '1000'], start_new_session=True)\n"
                       f"open({str(tmp_path / 'pid')!r}, 'w').write(str(p.pid))\n")
    trainer.chmod(0o755)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, cwd=tmp_path, timeout=30)
    assert result.returncode == 0
    assert not pid_alive(int((tmp_path / "pid").read_text()))


def test_a_killed_sparkguard_resumes_its_run_from_the_checkpoint(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    command = [PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 2, "--max_seq_length", 128,
               "--width", 2, "--max_steps", 12, "--save_steps", 2, "--step_sleep", 0.25]
    proc = subprocess.Popen([SPARKGUARD, "run", "--run-dir", run, "--", *map(str, command)], env=base_env(),
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (out / "checkpoint-4" / "trainer_state.json").exists(), 60)
        trainer_pid = read_attempts(out)[0]["pid"]
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_for(lambda: not pid_alive(trainer_pid), 5), "the trainer outlived a SIGKILLed sparkguard"
    finally:
        proc.kill()
    assert read_report(run)["outcome"] == "running"

    result = sparkguard("run", "--resume-run", run, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    report = read_report(run)
    assert report["outcome"] == "succeeded"
    assert [a["outcome"] for a in report["attempts"]] == ["interrupted", "succeeded"]
    ran = read_attempts(out)
    assert len(ran) == 2 and ran[1]["start_step"] >= 4
    assert report["attempts"][1]["resumed_from"].endswith(f"checkpoint-{ran[1]['start_step']}")

    again = sparkguard("run", "--resume-run", run, cwd=tmp_path)
    assert again.returncode == 2 and b"already ended" in again.stderr


def test_resume_run_refuses_options_it_would_ignore(tmp_path):
    result = sparkguard("run", "--resume-run", tmp_path, "--max-attempts", 3, cwd=tmp_path)
    assert result.returncode == 2 and b"--max-attempts" in result.stderr
