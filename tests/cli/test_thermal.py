"""sparkguard thermal: the sampler alone, until stopped (the replacement for thermal-sample.sh)."""
import csv
import signal
import subprocess
import time

from conftest import SPARKGUARD, base_env, sparkguard, wait_for


def sample(tmp_path, gpu, seconds=3.5):
    out = tmp_path / "thermal.csv"
    before = len(out.read_text().splitlines()) if out.exists() else 0
    env = base_env(SPARKGUARD_FAKE_GPU=gpu, SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    proc = subprocess.Popen([SPARKGUARD, "thermal", "--interval", "1", "-o", str(out)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert wait_for(lambda: out.exists() and len(out.read_text().splitlines()) >= before + 4, 20)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 0
    with open(out) as f:
        return list(csv.DictReader(f)), proc.stderr.read()


def test_thermal_samples_a_gb10_until_interrupted(tmp_path):
    table, stderr = sample(tmp_path, "gb10")
    assert len(table) >= 3
    assert all(r["attempt"] == "" and r["step"] == "" and r["trainer_rss_gb"] == "" for r in table)
    assert table[-1]["gpu_temp_c"] == "41" and table[-1]["gpu_power_limit_w"] == ""
    assert b"platform dgx-spark" in stderr


def test_thermal_without_a_gpu_keeps_the_memory_columns(tmp_path):
    table, _ = sample(tmp_path, "none")
    assert all(r["gpu_temp_c"] == "" and float(r["mem_total_gb"]) > 0 for r in table)


def test_thermal_appends_to_an_existing_file_and_refuses_a_foreign_one(tmp_path):
    sample(tmp_path, "gb10")
    before = len((tmp_path / "thermal.csv").read_text().splitlines())
    sample(tmp_path, "gb10")
    lines = (tmp_path / "thermal.csv").read_text().splitlines()
    assert len(lines) > before and lines.count(lines[0]) == 1  # one header
    (tmp_path / "other.csv").write_text("a,b,c\n1,2,3\n")
    result = sparkguard("thermal", "-o", tmp_path / "other.csv", cwd=tmp_path)
    assert result.returncode != 0 and b"other.csv" in result.stderr


def test_thermal_rejects_an_interval_under_a_second(tmp_path):
    result = sparkguard("thermal", "--interval", "0.2", cwd=tmp_path)
    assert result.returncode == 2 and b"--interval" in result.stderr
