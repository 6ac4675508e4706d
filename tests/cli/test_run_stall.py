"""The stall watchdog: a trainer that neither writes nor steps for --stall-timeout has stalled.
With memory evidence (here: a real OpenBLAS spin under an address-space cap) it is an OOM of kind
memory-stall and the ladder goes on; without, it is a hang: exit 5, or --on-hang relaunch."""
import subprocess
import textwrap

from conftest import HF_TRAIN, PYTHON, base_env, read_attempts, read_events, read_report, sparkguard


def torch_vmsize():
    """Address space of a Python that has imported torch (no BLAS call yet), in bytes."""
    out = subprocess.run([PYTHON, "-c", "import torch\nprint([l for l in open('/proc/self/status') if l.startswith('VmSize')][0].split()[1])"],
                         capture_output=True, text=True, env=base_env(), check=True).stdout
    return int(out) * 1024


def test_an_openblas_spin_near_the_address_space_cap_is_a_memory_stall_and_is_laddered(tmp_path):
    # 1024 tokens x 600 KiB leaves ~40 MB under the cap: OpenBLAS's first call cannot map its
    # buffers and spins. 512 tokens leave ~350 MB, enough (it needs 130-200 MB here).
    cap = torch_vmsize() + 1024 * 600 * 1024 + 40_000_000
    run, out = tmp_path / "run", tmp_path / "out"
    command = ["prlimit", f"--as={cap}", PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 1,
               "--max_seq_length", 1024, "--reserve_kb_per_token", 600, "--width", 2, "--max_steps", 4]
    # Stall timeouts in these tests stay well above torch's import time on a loaded machine.
    result = sparkguard("run", "--run-dir", run, "--stall-timeout", "10s", "--grace", 2, "--ladder", "shorter-packing",
                        "--min-seq", 512, "--", *command, cwd=tmp_path, timeout=180)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [a["outcome"] for a in attempts] == ["oom", "succeeded"]
    assert attempts[0]["oom_kind"] == "memory-stall"
    assert "address-space limit" in attempts[0]["evidence"]
    assert [a["config"]["seq_len"] for a in attempts] == [1024, 512]
    stall = attempts[0]["measured"]["stall"]
    spinning = [p for p in stall["processes"] if p["comm"].startswith("python")]
    assert spinning and spinning[0]["as_limit_gb"] is not None and spinning[0]["cpu_seconds"] > 1  # it spins
    dump = (run / "stall-1.txt").read_text()
    assert "memory stall" in dump and "reserving" in dump
    assert "Thread" in dump and "hf_train.py" in dump  # py-spy (the fake on PATH) was asked
    assert [e["event"] for e in read_events(run)].count("stall") == 1


def hanging(out):
    return [PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 1, "--max_seq_length", 64,
            "--width", 1, "--max_steps", 5, "--save_steps", 2, "--hang_at_step", 3]


def test_a_hang_without_memory_evidence_stops_with_exit_5(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--stall-timeout", "6s", "--grace", 1, "--", *hanging(out),
                        cwd=tmp_path, timeout=60)
    assert result.returncode == 5, result.stderr.decode()[-2000:]
    report = read_report(run)
    assert report["outcome"] == "stalled" and report["exit_code"] == 5
    assert report["attempts"][0]["outcome"] == "stalled"
    assert "no sign of memory exhaustion" in report["attempts"][0]["evidence"]
    assert "waiting on a collective that never completes" in (run / "stall-1.txt").read_text()
    assert b"hung" in result.stderr


def test_on_hang_relaunch_resumes_once_and_finishes(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    # 8 s: the resumed attempt imports torch silently first, and ctest runs tests side by side.
    result = sparkguard("run", "--run-dir", run, "--stall-timeout", "8s", "--grace", 1, "--on-hang", "relaunch", "--",
                        *hanging(out), cwd=tmp_path, timeout=90)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    attempts = read_report(run)["attempts"]
    assert [a["outcome"] for a in attempts] == ["stalled", "succeeded"]
    assert attempts[1]["rung"] is None and attempts[1]["resumed_from"].endswith("checkpoint-2")
    assert [r["start_step"] for r in read_attempts(out)] == [0, 2]


def script(tmp_path, body):
    path = tmp_path / "t.py"
    path.write_text("#!/usr/bin/python3\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def test_progress_bars_without_newlines_are_not_a_stall(tmp_path):
    trainer = script(tmp_path, """
        import sys, time
        for step in range(1, 11):
            sys.stderr.write(f"\\r{step * 10}%|#| {step}/10 [00:01<00:01, 2.5it/s]"); sys.stderr.flush()
            time.sleep(0.4)
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--stall-timeout", "1s", "--", trainer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "stall" not in [e["event"] for e in read_events(tmp_path / "run")]


def test_a_long_model_load_with_steady_output_is_not_a_stall(tmp_path):
    trainer = script(tmp_path, """
        import time
        for shard in range(1, 11):
            print(f"Loading checkpoint shards: {shard}/10", flush=True)
            time.sleep(0.4)
        print("{'loss': 2.0, 'epoch': 0.1}", flush=True)
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--stall-timeout", "1s", "--", trainer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert read_report(tmp_path / "run")["outcome"] == "succeeded"


def test_a_bad_stall_timeout_is_a_usage_error(tmp_path):
    result = sparkguard("run", "--stall-timeout", "soon", "--", "true", cwd=tmp_path)
    assert result.returncode == 2 and b"--stall-timeout" in result.stderr
    result = sparkguard("run", "--on-hang", "pray", "--", "true", cwd=tmp_path)
    assert result.returncode == 2 and b"--on-hang" in result.stderr


def test_a_trainer_that_keeps_hanging_ends_as_stalled_when_attempts_run_out(tmp_path):
    trainer = script(tmp_path, """
        import time
        print("step 1/10 loss 2.0", flush=True)
        time.sleep(1000)
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--stall-timeout", "2s", "--grace", 1, "--on-hang", "relaunch",
                        "--max-attempts", 2, "--", trainer, cwd=tmp_path, timeout=60)
    assert result.returncode == 5, result.stderr.decode()[-2000:]
    report = read_report(tmp_path / "run")
    assert report["outcome"] == "stalled" and [a["outcome"] for a in report["attempts"]] == ["stalled", "stalled"]
    assert "still hangs after 2 attempts" in report["summary"]
