"""Telemetry during `sparkguard run`: thermal.csv rows that join train.log on time, across
relaunches, on a GB10 (the fake nvidia-smi prints what the real one prints, [N/A] included), a
discrete card, NVML (a fake libnvidia-ml.so.1) and no GPU at all; a sampler that dies mid-run."""
import csv
import json
import os
import re
import textwrap

from conftest import HF_TRAIN, PYTHON, base_env, read_events, read_report, sparkguard

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d")
COLUMNS = ("timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,gpu_sm_clock_mhz,"
           "gpu_util_pct,gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,mem_cached_gb,trainer_rss_gb")


def stepping_trainer(tmp_path, steps=8, pause=0.5):
    path = tmp_path / "t.py"
    path.write_text("#!/usr/bin/python3\n" + textwrap.dedent(f"""
        import sys, time
        data = bytearray(60 * 1024 * 1024)  # resident memory the RSS column can see
        for step in range(1, {steps} + 1):
            print(f"step {{step}}/{steps} loss 1.0", flush=True)
            time.sleep({pause})
    """))
    path.chmod(0o755)
    return path


def rows(run):
    with open(run / "thermal.csv") as f:
        assert f.readline().strip() == COLUMNS
    with open(run / "thermal.csv") as f:
        return list(csv.DictReader(f))


def run_with(tmp_path, gpu, extra_env=None, args=()):
    env = base_env(SPARKGUARD_FAKE_GPU=gpu, SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1", **(extra_env or {}))
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--thermal-interval", 1, *args, "--",
                        stepping_trainer(tmp_path), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return result


def test_gb10_rows_join_train_log_and_leave_na_fields_empty(tmp_path):
    run_with(tmp_path, "gb10")
    run = tmp_path / "run"
    table = rows(run)
    assert len(table) >= 3
    assert all(STAMP.fullmatch(r["timestamp"]) for r in table)
    assert all(r["attempt"] == "1" for r in table)
    assert table[-1]["gpu_temp_c"] and table[-1]["gpu_power_w"]
    assert all(r["gpu_power_limit_w"] == "" for r in table)  # GB10 reports [N/A]
    assert all(float(r["mem_total_gb"]) > 0 and r["mem_available_gb"] for r in table)
    assert max(float(r["trainer_rss_gb"] or 0) for r in table) > 0.05
    steps = [int(r["step"]) for r in table if r["step"]]
    assert steps == sorted(steps) and steps[-1] >= 3
    log_times = [line.split(" ", 1)[0] for line in (run / "train.log").read_text().splitlines()]
    assert log_times[0] <= table[1]["timestamp"] <= log_times[-1]  # one clock, one format: they join
    report = read_report(run)
    assert report["telemetry"]["gpu_source"] == "nvidia-smi" and report["telemetry"]["rows"] == len(table)
    env_report = json.loads((run / "env-report.json").read_text())
    assert env_report["platform"] == "dgx-spark"
    assert "preflight" in [e["event"] for e in read_events(run)]


def test_a_discrete_card_reports_its_power_limit(tmp_path):
    run_with(tmp_path, "rtx4090")
    table = rows(tmp_path / "run")
    assert table[-1]["gpu_power_limit_w"] == "450"
    assert json.loads((tmp_path / "run" / "env-report.json").read_text())["platform"] == "generic-nvidia"


def test_no_gpu_keeps_the_memory_columns(tmp_path):
    run_with(tmp_path, "none")
    table = rows(tmp_path / "run")
    assert all(r["gpu_temp_c"] == "" and r["gpu_power_w"] == "" for r in table)
    assert all(r["mem_available_gb"] for r in table)
    telemetry = read_report(tmp_path / "run")["telemetry"]
    assert telemetry["gpu_source"] == "none" and telemetry["gpu_missing_because"]


def test_nvml_is_preferred_when_its_library_loads(tmp_path):
    fake_nvml = os.environ.get("SPARKGUARD_TEST_FAKE_NVML")
    if not fake_nvml:
        import pytest
        pytest.skip("run through ctest: it names the fake libnvidia-ml.so.1")
    env = base_env(SPARKGUARD_FAKE_GPU="none", SPARKGUARD_NVML_LIBRARY=fake_nvml, SPARKGUARD_FAKE_NVML="gb10")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--thermal-interval", 1, "--",
                        stepping_trainer(tmp_path), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert read_report(tmp_path / "run")["telemetry"]["gpu_source"] == "nvml"
    assert rows(tmp_path / "run")[-1]["gpu_temp_c"]


def test_a_sampler_that_dies_mid_run_leaves_the_run_going(tmp_path):
    result = run_with(tmp_path, "gb10", extra_env={"SPARKGUARD_FAKE_GPU_LOOPS": "2"})
    assert b"GPU sampler (nvidia-smi) exited" in result.stderr
    table = rows(tmp_path / "run")
    assert any(r["gpu_temp_c"] for r in table) and table[-1]["gpu_temp_c"] == ""
    assert read_report(tmp_path / "run")["outcome"] == "succeeded"


def test_rows_keep_coming_through_a_relaunch(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    env = base_env(SPARKGUARD_FAKE_GPU="gb10", SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    command = ["prlimit", "--as=1010000000", PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 8,
               "--max_seq_length", 1024, "--warmup_steps", 4, "--max_steps", 8, "--save_steps", 2, "--width", 8,
               "--step_sleep", 0.3]
    result = sparkguard("run", "--run-dir", run, "--thermal-interval", 1, "--ladder", "shorter-packing,smaller-batch",
                        "--min-seq", 512, "--", *command, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    table = rows(run)
    attempts = sorted({int(r["attempt"]) for r in table})
    assert attempts == [1, 2, 3]
    assert {r["rung"] for r in table if r["attempt"] == "3"} == {"smaller-batch"}
    measured = read_report(run)["attempts"][0]["measured"]
    assert measured["peak_pool_used_gb"] > 0 and measured["peak_trainer_rss_gb"] > 0.2


def test_a_bad_thermal_interval_is_a_usage_error(tmp_path):
    result = sparkguard("run", "--thermal-interval", "0.5", "--", "true", cwd=tmp_path)
    assert result.returncode == 2 and b"--thermal-interval" in result.stderr


def test_elapsed_and_the_summary_span_the_whole_run_across_resume_run(tmp_path):
    import signal
    import subprocess
    import time
    from conftest import SPARKGUARD, wait_for
    run = tmp_path / "run"
    env = base_env(SPARKGUARD_FAKE_GPU="none", SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    first = subprocess.Popen([SPARKGUARD, "run", "--run-dir", run, "--thermal-interval", "1", "--",
                              stepping_trainer(tmp_path, steps=12, pause=0.5)], env=env, cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert wait_for(lambda: (run / "thermal.csv").exists() and len(rows(run)) >= 3, 30)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    time.sleep(1.5)  # sparkguard was away: elapsed time goes on
    before = len(rows(run))
    resumed = sparkguard("run", "--resume-run", run, cwd=tmp_path, env=env)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    elapsed = [float(r["elapsed_s"]) for r in rows(run)]
    assert len(elapsed) > before
    assert elapsed == sorted(elapsed)  # never restarts at 1 after the resume
    assert elapsed[before] >= elapsed[before - 1] + 1.5
    assert read_report(run)["telemetry"]["rows"] == len(elapsed)  # every row, not the resumed part
