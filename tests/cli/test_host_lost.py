"""After the host died with the trainer: sparkguard and its trainer SIGKILLed together (what a
wedged DGX Spark's power cycle does to them), the boot id changed (SPARKGUARD_BOOT_ID_FILE stands in
for /proc/sys/kernel/random/boot_id), then `--resume-run`. The lost attempt is `host-lost` and the
same configuration is relaunched, resumed from the newest checkpoint; a second loss on it takes
the next rung; a loss with the pool in the memory guard's warning band (memory-low events in the
host's last seconds) takes it at once, as OOM kind host-lost-memory."""
import json
import os
import signal
import subprocess

from conftest import HF_TRAIN, PYTHON, SPARKGUARD, base_env, mem_available, pid_alive, read_attempts, read_events, \
    read_report, sparkguard, wait_for


def trainer(out):
    return [PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 4, "--max_seq_length", 128,
            "--width", 2, "--max_steps", 16, "--save_steps", 2, "--step_sleep", 0.3]


def lose_the_host(run, out, boot_file, boot, *options, attempt=1, checkpoint=4):
    """Starts (attempt 1) or resumes the run on `boot`, waits for `checkpoint`, kills sparkguard and the trainer together."""
    boot_file.write_text(boot + "\n")
    env = base_env(SPARKGUARD_BOOT_ID_FILE=str(boot_file))
    args = ["run", "--run-dir", run, *options, "--", *trainer(out)] if attempt == 1 else ["run", "--resume-run", run]
    proc = subprocess.Popen([SPARKGUARD, *map(str, args)], env=env, cwd=run.parent, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        assert wait_for(lambda: (out / "attempts.jsonl").exists() and len(read_attempts(out)) == attempt, 60)
        assert wait_for(lambda: (out / f"checkpoint-{checkpoint}" / "trainer_state.json").exists(), 60)
        trainer_pid = read_attempts(out)[-1]["pid"]
        os.kill(proc.pid, signal.SIGKILL)
        os.kill(trainer_pid, signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_for(lambda: not pid_alive(trainer_pid), 5)
    finally:
        proc.kill()
        proc.wait()
    state = json.loads((run / "state.json").read_text())
    assert state["boot_id"] == boot


def resume(run, boot_file, boot):
    boot_file.write_text(boot + "\n")
    return sparkguard("run", "--resume-run", run, cwd=run.parent, env=base_env(SPARKGUARD_BOOT_ID_FILE=str(boot_file)),
                      timeout=300)


def test_a_lost_host_relaunches_the_same_configuration_once_then_takes_the_next_rung(tmp_path):
    run, out, boot = tmp_path / "run", tmp_path / "out", tmp_path / "boot_id"
    lose_the_host(run, out, boot, "boot-a", "--ladder", "smaller-batch", "--memory-floor", 0)
    lose_the_host(run, out, boot, "boot-b", attempt=2, checkpoint=8)
    result = resume(run, boot, "boot-c")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [a["outcome"] for a in attempts] == ["host-lost", "oom", "succeeded"]
    assert [(a["rung"], a["config"]["batch_size"]) for a in attempts] == [(None, 4), (None, 4), ("smaller-batch", 2)]
    assert "relaunching the same configuration" in attempts[0]["evidence"]
    assert attempts[1]["oom_kind"] == "host-lost-memory" and attempts[1]["confidence"] == "probable"
    assert "lost again on the same configuration" in attempts[1]["evidence"]
    assert attempts[1]["resumed_from"].endswith("checkpoint-4") or attempts[1]["resumed_from"].endswith("checkpoint-6")
    ran = read_attempts(out)
    assert ran[1]["start_step"] >= 4 and ran[2]["start_step"] >= 8
    lost = [e for e in read_events(run) if e["event"] == "host-lost"]
    assert [(e["attempt"], e["previous_boot"], e["oom"]) for e in lost] == [(1, "boot-a", False), (2, "boot-b", True)]


def test_a_host_lost_with_the_pool_in_the_warning_band_is_an_oom_at_once(tmp_path):
    available_gb = mem_available() / 1e9
    run, out, boot = tmp_path / "run", tmp_path / "out", tmp_path / "boot_id"
    # A floor at 60% of MemAvailable: never reached, but its warning band (twice the floor) is
    # above MemAvailable, so the guard writes memory-low events all along, as before a wedge.
    lose_the_host(run, out, boot, "boot-a", "--ladder", "smaller-batch", "--memory-floor", f"{0.6 * available_gb:.2f}")
    assert [e for e in read_events(run) if e["event"] == "memory-low"]
    result = resume(run, boot, "boot-b")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [(a["outcome"], a["rung"]) for a in attempts] == [("oom", None), ("succeeded", "smaller-batch")]
    assert attempts[0]["oom_kind"] == "host-lost-memory"
    evidence = attempts[0]["evidence"]  # the lowest reading in the band: a memory-low event or a thermal.csv row
    assert "warning band" in evidence and ("memory-low event" in evidence or "thermal.csv" in evidence), evidence
    assert attempts[1]["resumed_from"]


def test_the_same_boot_is_not_a_lost_host(tmp_path):
    run, out, boot = tmp_path / "run", tmp_path / "out", tmp_path / "boot_id"
    lose_the_host(run, out, boot, "boot-a", "--memory-floor", 0)
    result = resume(run, boot, "boot-a")
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    assert [a["outcome"] for a in read_report(run)["attempts"]] == ["interrupted", "succeeded"]
    assert not [e for e in read_events(run) if e["event"] == "host-lost"]
