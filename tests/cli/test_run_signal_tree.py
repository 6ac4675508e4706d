"""A signal to sparkguard reaches every process of the trainer's tree, not only the group leader:
the leader, its child, a grandchild and a grandchild that left the process group each record
the signals they receive. SIGKILL follows only after --grace, for what is still alive."""
import os
import signal
import subprocess
import textwrap
import time

import pytest

from conftest import PYTHON, SPARKGUARD, base_env, pid_alive, read_report, wait_for

# Each process appends "NAME PID SIGNUM" for every signal it gets; with EXIT_ON_SIGNAL it then
# exits, else it goes on (so only the SIGKILL after the grace period stops it).
RECORDER = """
    import os, signal, subprocess, sys, time
    name = sys.argv[1]
    record = os.environ["SIGNALS_FILE"]
    def note(text):
        fd = os.open(record, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        os.write(fd, text.encode())
        os.close(fd)
    def got(signum, frame):
        note(f"{name} {os.getpid()} {signum}\\n")
        if os.environ.get("EXIT_ON_SIGNAL"):
            os._exit(0)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, got)
    me = [sys.executable, sys.argv[0]]
    if name == "leader":
        subprocess.Popen(me + ["child"])
    elif name == "child":
        subprocess.Popen(me + ["grandchild"])
        subprocess.Popen(me + ["escaped"], start_new_session=True)   # left the process group
    note(f"ready {name} {os.getpid()}\\n")
    if name == "leader":
        print("training step 1", flush=True)
    while True:
        time.sleep(0.05)
"""
NAMES = {"leader", "child", "grandchild", "escaped"}


def start_tree(tmp_path, grace, exit_on_signal):
    trainer = tmp_path / "recorder.py"
    trainer.write_text("#!/usr/bin/python3\n" + textwrap.dedent(RECORDER))
    trainer.chmod(0o755)
    record = tmp_path / "signals"
    env = base_env(SIGNALS_FILE=str(record), **({"EXIT_ON_SIGNAL": "1"} if exit_on_signal else {}))
    proc = subprocess.Popen([SPARKGUARD, "run", "--run-dir", tmp_path / "run", "--grace", str(grace), "--",
                             PYTHON, trainer, "leader"], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def ready():
        if not record.exists():
            return {}
        lines = [line.split() for line in record.read_text().splitlines()]
        return {words[1]: int(words[2]) for words in lines if words[0] == "ready"}
    assert wait_for(lambda: set(ready()) == NAMES, 30), (ready(), proc.poll())
    return proc, record, ready()


def received(record):
    """{name: [signal numbers]} from the recorders' lines."""
    got = {}
    for words in (line.split() for line in record.read_text().splitlines()):
        if words[0] != "ready":
            got.setdefault(words[0], []).append(int(words[2]))
    return got


def cleanup(proc, pids):
    proc.kill()
    for pid in pids.values():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_every_process_of_the_tree_receives_the_signal(tmp_path, sig, code):
    proc, record, pids = start_tree(tmp_path, grace=30, exit_on_signal=True)
    try:
        started = time.monotonic()
        proc.send_signal(sig)
        assert proc.wait(timeout=20) == code
        assert time.monotonic() - started < 10, "a tree that obeyed was kept waiting for the grace period"
        assert wait_for(lambda: set(received(record)) == NAMES, 5), received(record)
        assert all(set(sigs) == {sig} for sigs in received(record).values()), received(record)
        assert wait_for(lambda: not any(pid_alive(p) for p in pids.values()), 5)
        assert read_report(tmp_path / "run")["outcome"] == "interrupted"
    finally:
        cleanup(proc, pids)


def test_sigterm_reaches_every_process_and_sigkill_waits_for_the_grace_period(tmp_path):
    grace = 3
    proc, record, pids = start_tree(tmp_path, grace=grace, exit_on_signal=False)
    try:
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        # Within the grace period every process has recorded SIGTERM and all are still alive.
        assert wait_for(lambda: set(received(record)) == NAMES, grace - 1), received(record)
        time.sleep(max(0.0, started + grace - 1 - time.monotonic()))
        assert all(pid_alive(p) for p in pids.values()), "SIGKILL came before the grace period ended"
        assert proc.poll() is None
        assert proc.wait(timeout=20) == 143
        assert time.monotonic() - started >= grace - 0.1
        assert wait_for(lambda: not any(pid_alive(p) for p in pids.values()), 5), \
            [n for n, p in pids.items() if pid_alive(p)]
        got = received(record)
        assert all(set(sigs) == {signal.SIGTERM} for sigs in got.values()), got
    finally:
        cleanup(proc, pids)
