"""sparkguard drop-caches, and the OOM ladder's drop-caches rung for a user who is not root, with
Debian's real sudo and a real non-root user this test creates (and removes): without the sudoers
line of scripts/examples/sparkguard-drop-caches.sudoers the rung is skipped and the reason names
that exact line; with it, the rung runs `sudo -n sparkguard drop-caches` and the kernel's
drop_pagecache counter moves."""
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import PYTHON, SOURCE, SPARKGUARD, base_env, read_events, read_report, sparkguard

SUDOERS_EXAMPLE = SOURCE / "scripts" / "examples" / "sparkguard-drop-caches.sudoers"
BINARY = os.path.realpath(SPARKGUARD)

# Attempt 1 dies of a CUDA allocator OOM, the relaunch succeeds.
TRAINER = """import os, sys
if os.environ["SPARKGUARD_ATTEMPT"] == "1":
    print("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
          "of 119.70 GiB of which 1.12 GiB is free.", file=sys.stderr)
    sys.exit(1)
print("done")
"""


def vmstat(field):
    for line in Path("/proc/vmstat").read_text().splitlines():
        name, value = line.split()
        if name == field:
            return int(value)
    pytest.skip(f"/proc/vmstat has no {field}")


def needs_root_and_sudo():
    if os.geteuid() != 0:
        pytest.skip("creates a user and writes /etc/sudoers.d: needs root")
    if not shutil.which("sudo"):
        pytest.skip("needs Debian's sudo (scripts/setup.sh installs it)")


@pytest.fixture
def trainee():
    """A fresh non-root user and a directory it owns; both removed afterwards."""
    needs_root_and_sudo()
    name = f"sgdc{os.getpid() % 100000}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    home = Path(tempfile.mkdtemp(prefix="sparkguard-drop-caches-"))
    try:
        user = pwd.getpwnam(name)
        os.chown(home, user.pw_uid, user.pw_gid)
        (home / "train.py").write_text(TRAINER)
        yield name, home
    finally:
        shutil.rmtree(home, ignore_errors=True)
        subprocess.run(["userdel", name], check=False)


@pytest.fixture
def sudoers_file(trainee):
    """Installs the example's line for the trainee and this binary in /etc/sudoers.d; removed afterwards."""
    name, _ = trainee
    example = [l for l in SUDOERS_EXAMPLE.read_text().splitlines() if l.strip() and not l.startswith("#")]
    assert example == ["train ALL=(root) NOPASSWD: /usr/bin/sparkguard drop-caches"]
    line = example[0].replace("train ", name + " ", 1).replace("/usr/bin/sparkguard", BINARY)
    path = Path("/etc/sudoers.d") / f"sparkguard-test-{name}"
    path.write_text(line + "\n")
    path.chmod(0o440)
    try:
        check = subprocess.run(["visudo", "-c", "-f", str(path)], capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        yield line
    finally:
        path.unlink(missing_ok=True)


def run_as(name, home, *args):
    env = base_env(HOME=str(home))
    return subprocess.run(["runuser", "-u", name, "--", BINARY, *map(str, args)], cwd=home, env=env,
                          capture_output=True, text=True, timeout=300)


def test_drop_caches_as_root_drops_the_page_cache():
    if os.geteuid() != 0:
        pytest.skip("needs root")
    before = vmstat("drop_pagecache")
    result = sparkguard("drop-caches")
    assert result.returncode == 0, result.stderr
    assert vmstat("drop_pagecache") > before


def test_drop_caches_takes_no_arguments():
    result = sparkguard("drop-caches", "1")
    assert result.returncode == 2 and b"takes no arguments" in result.stderr
    assert sparkguard("drop-caches", "--sync").returncode == 2


def test_drop_caches_as_a_normal_user_fails_without_touching_anything(trainee):
    name, home = trainee
    before = vmstat("drop_pagecache")
    result = run_as(name, home, "drop-caches")
    assert result.returncode == 125, result.stderr
    assert "/proc/sys/vm/drop_caches" in result.stderr
    assert vmstat("drop_pagecache") == before


def test_without_the_sudoers_line_the_rung_is_skipped_naming_it(trainee):
    name, home = trainee
    result = run_as(name, home, "run", "--run-dir", home / "run", "--ladder", "drop-caches", "--",
                    PYTHON, home / "train.py")
    assert result.returncode == 4, result.stderr[-3000:]
    report = read_report(home / "run")
    assert [a["outcome"] for a in report["attempts"]] == ["oom"]
    why = report["skipped_at_end"][0]["why"]
    assert report["skipped_at_end"][0]["rung"] == "drop-caches"
    assert f"{name} ALL=(root) NOPASSWD: {BINARY} drop-caches" in why, why
    assert "sparkguard-drop-caches.sudoers" in why


def test_with_the_sudoers_line_the_rung_drops_caches_through_sudo(trainee, sudoers_file):
    name, home = trainee
    before = vmstat("drop_pagecache")
    result = run_as(name, home, "run", "--run-dir", home / "run", "--ladder", "drop-caches", "--",
                    PYTHON, home / "train.py")
    assert result.returncode == 0, result.stderr[-3000:]
    attempts = read_report(home / "run")["attempts"]
    assert [(a["rung"], a["outcome"]) for a in attempts] == [(None, "oom"), ("drop-caches", "succeeded")]
    assert attempts[1]["config"]["drop_caches"]
    dropped = [e for e in read_events(home / "run") if e["event"] == "drop-caches"]
    assert len(dropped) == 1 and dropped[0]["ok"] is True and dropped[0]["how"] == "sudo", dropped
    assert dropped[0]["error"] is None
    assert vmstat("drop_pagecache") > before
