"""The live status line, as a person sees it: sparkguard in a real terminal (tmux), the trainer's
output scrolling above a status row pinned to the bottom; nothing of it when not on a terminal."""
import os
import shutil
import subprocess
import time

import pytest

from conftest import HF_TRAIN, PYTHON, SOURCE, SPARKGUARD, base_env, sparkguard, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (scripts/setup.sh installs it)")


def trainer(out):
    return [PYTHON, HF_TRAIN, "--output_dir", out, "--max_steps", 30, "--save_steps", 10, "--logging_steps", 10,
            "--per_device_train_batch_size", 1, "--max_seq_length", 64, "--width", 1, "--step_sleep", 0.2]


def in_terminal(tmp_path, args, env_extra=""):
    session = f"sg{os.getpid()}{tmp_path.name[-12:]}".replace(".", "")  # suites of two worktrees share one tmux server
    command = " ".join(f"'{a}'" for a in [SPARKGUARD, "run", "--run-dir", tmp_path / "run", *args])
    env = " ".join(f"{k}='{v}'" for k, v in base_env().items() if k in ("PATH", "OPENBLAS_NUM_THREADS", "SPARKGUARD_PROFILES"))
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "15",
                    f"env {env} {env_extra} {command}; echo EXIT=$?; sleep 60"], check=True)
    return session


def screen(session, escapes=False):
    return subprocess.run(["tmux", "capture-pane", "-p", *(["-e"] if escapes else []), "-t", session],
                          capture_output=True, text=True).stdout.splitlines()


def test_the_status_line_sits_on_the_bottom_row_below_the_trainers_output(tmp_path):
    session = in_terminal(tmp_path, ["--", *trainer(tmp_path / "out")])
    try:
        assert wait_for(lambda: screen(session)[-1].startswith("sparkguard │ attempt 1 │ step"), 30), screen(session)
        rows = screen(session)
        assert "/30" in rows[-1] and "pool" in rows[-1]
        assert any("%|" in row for row in rows[:-1])  # tqdm's bar, above, untouched
        assert not any("sparkguard │" in row for row in rows[:-1])
        assert wait_for(lambda: any(row.startswith("EXIT=0") for row in screen(session)), 60)
        assert not any("sparkguard │" in row for row in screen(session)), "the status row was not given back"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session])


def test_no_color_leaves_the_status_line_plain(tmp_path):
    session = in_terminal(tmp_path, ["--", *trainer(tmp_path / "out")], env_extra="NO_COLOR=1")
    try:
        assert wait_for(lambda: screen(session)[-1].startswith("sparkguard │"), 30)
        assert "\x1b[1m" not in screen(session, escapes=True)[-1]
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session])


def test_quiet_and_pipes_get_no_status_line(tmp_path):
    session = in_terminal(tmp_path, ["--quiet", "--", *trainer(tmp_path / "out")])
    try:
        assert wait_for(lambda: any(row.startswith("EXIT=0") for row in screen(session)), 60)
        assert not any("sparkguard │" in row for row in screen(session))
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session])
    result = sparkguard("run", "--run-dir", tmp_path / "run2", "--", *trainer(tmp_path / "out2"), cwd=tmp_path)
    assert result.returncode == 0
    assert b"\x1b" not in result.stderr
