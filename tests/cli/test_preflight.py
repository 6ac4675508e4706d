"""sparkguard preflight against the fake nvidia-smi (and the fake NVML): the platform each machine
implies, the checks that fail (G10, G1, the workload), env-report.json's shape and the exit codes."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import base_env, sparkguard

CHECKS = {"hardware", "G1", "G3", "G4", "G6", "G9", "G10", "disk", "drop-caches"}
VALUE_PREFIXES = ("pass", "fail", "warn: ", "skip: ", "info: ")
FAKE_NVML = os.environ.get("SPARKGUARD_TEST_FAKE_NVML")


def debian_torch():
    """Debian's python3-torch is a CPU-only build; None when /usr/bin/python3 has no torch."""
    probe = subprocess.run(["/usr/bin/python3", "-c", "import torch; print(torch.version.cuda)"], capture_output=True, text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None


def preflight(tmp_path, *args, fake_gpu="gb10", **env):
    out = tmp_path / "env-report.json"
    result = sparkguard("preflight", "-o", out, *args, cwd=tmp_path, env=base_env(SPARKGUARD_FAKE_GPU=fake_gpu, **env))
    report = json.loads(out.read_text()) if out.exists() else None
    return result, report


def check_shape(report):
    assert set(report) >= {"platform", "checks", "headroom_gb", "verdict", "details"}
    assert set(report["checks"]) >= CHECKS
    for name, value in report["checks"].items():
        assert value.startswith(VALUE_PREFIXES), (name, value)
        assert name in report["details"]
        if value == "fail":
            assert report["details"][name]["why"]
    assert isinstance(report["headroom_gb"], (int, float))
    assert report["verdict"] in ("ready", "ready-with-warnings", "blocked")


def test_gb10_is_a_dgx_spark(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="gb10")
    assert result.returncode == 0, result.stderr
    check_shape(report)
    assert report["platform"] == "dgx-spark"
    assert report["details"]["hardware"]["gpus"][0]["compute_cap"] == "12.1"
    assert report["details"]["hardware"]["cuda_version"] == "13.0"
    assert report["details"]["hardware"]["gpu_telemetry"] == "nvidia-smi"
    if os.uname().machine != "aarch64":  # a GB10 is only ever seen on aarch64
        assert "not aarch64" in report["checks"]["hardware"]
    assert report["checks"]["G4"] == "info: 41 C, 11.6 W of a 100 W cap, 0% busy"
    assert report["details"]["G4"]["power_limit_w"] is None  # GB10's [N/A]
    assert report["details"]["G3"]["source"].startswith("/proc/meminfo")
    assert report["checks"]["G10"] == "pass"
    assert b"platform: dgx-spark" in result.stdout and b"verdict: " in result.stdout


def test_a_discrete_card_is_generic_nvidia(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="rtx4090")
    assert result.returncode == 0, result.stderr
    check_shape(report)
    assert report["platform"] == "generic-nvidia"
    assert report["checks"]["hardware"].startswith("info: NVIDIA GeForce RTX 4090 (compute 8.9, Ada Lovelace), driver 550.120, CUDA 12.4")
    assert report["checks"]["G4"] == "info: 38 C, 24.5 W of a 450 W cap, 0% busy"
    assert report["details"]["hardware"]["platform_profile"] == "gpu-24gb"


def test_no_gpu_is_cpu_only(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="none")
    assert result.returncode == 0, result.stderr
    check_shape(report)
    assert report["platform"] == "cpu-only"
    assert report["checks"]["hardware"].startswith("skip: no NVIDIA GPU (nvidia-smi exited 9")
    assert report["checks"]["G4"].startswith("skip: no GPU telemetry")
    assert report["verdict"] == "ready-with-warnings"  # the skips remain
    assert report["headroom_gb"] > 0


def test_an_old_driver_still_answers(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="v100-470")
    assert result.returncode == 0, result.stderr
    assert report["platform"] == "generic-nvidia"
    assert report["details"]["hardware"]["gpus"][0]["compute_cap"] is None  # R470 knows no compute_cap
    assert report["checks"]["G4"].startswith("info: 35 C, 41.2 W of a 300 W cap")


def test_a_driver_whose_version_line_has_no_cuda(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="rtx-pro-610")
    assert result.returncode == 0, result.stderr
    assert report["details"]["hardware"]["cuda_version"] == "13.2"
    assert "(compute 12.0, Blackwell), driver 610.43.02, CUDA 13.2" in report["checks"]["hardware"]


@pytest.mark.skipif(not FAKE_NVML, reason="needs the fake NVML library built with the tests")
def test_nvml_is_preferred_when_it_loads(tmp_path):
    result, report = preflight(tmp_path, fake_gpu="gb10", SPARKGUARD_NVML_LIBRARY=FAKE_NVML, SPARKGUARD_FAKE_NVML="gb10")
    assert result.returncode == 0, result.stderr
    assert report["details"]["hardware"]["gpu_telemetry"] == "nvml"
    assert report["details"]["hardware"]["cuda_version"] == "13.0"  # nvmlSystemGetCudaDriverVersion_v2
    assert report["checks"]["G4"] == "info: 41 C, 11.6 W of a 100 W cap, 0% busy"


def test_tensor_parallelism_across_machines_is_blocked(tmp_path):
    result, report = preflight(tmp_path, "--", sys.executable, "train.py", "--tensor_parallel_size", "2", WORLD_SIZE="2")
    assert result.returncode == 3, result.stderr
    assert report["checks"]["G10"] == "fail"
    assert report["details"]["G10"]["why"].startswith("tensor parallelism across machines (tensor parallel size 2, 2 machines")
    assert report["verdict"] == "blocked"
    assert b"why: tensor parallelism across machines" in result.stdout


def test_tensor_parallelism_in_a_config_file_across_nodes(tmp_path):
    config = tmp_path / "megatron.yaml"
    config.write_text("model:\n  tensor_model_parallel_size: 2\n")
    result, report = preflight(tmp_path, "--", "torchrun", "--nnodes=2", "train.py", "--config", config)
    assert result.returncode == 3
    assert report["checks"]["G10"] == "fail"
    assert f"{config}: tensor_model_parallel_size: 2" in report["details"]["G10"]["evidence"]


def test_data_parallel_across_machines_is_fine(tmp_path):
    # No GPU, so that a CPU-only torch behind torchrun is no failure here.
    result, report = preflight(tmp_path, "--", "torchrun", "--nproc_per_node", "1", "train.py", fake_gpu="none", NNODES="2")
    assert result.returncode == 0, report["checks"]
    assert report["checks"]["G10"].startswith("info: 2 machines, data parallel (NNODES=2")


@pytest.mark.skipif(debian_torch() not in ("None",), reason="needs /usr/bin/python3 with a CPU-only torch (Debian's)")
def test_a_cpu_only_torch(tmp_path):
    result, report = preflight(tmp_path, "--", "/usr/bin/python3", "train.py", fake_gpu="gb10")
    assert result.returncode == 3
    assert report["checks"]["G1"] == "fail"
    assert "CPU-only build (torch.version.cuda is None)" in report["details"]["G1"]["why"]
    assert report["details"]["G1"]["driver_cuda"] == "13.0"
    _, no_gpu = preflight(tmp_path, "--", "/usr/bin/python3", "train.py", fake_gpu="none")
    assert no_gpu["checks"]["G1"].startswith("info: PyTorch ") and "no GPU here" in no_gpu["checks"]["G1"]


def test_a_python_without_torch_is_a_skip(tmp_path):
    venv_python = tmp_path / "bin" / "python3"
    venv_python.parent.mkdir()
    venv_python.write_text("#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n")  # no site-packages: no torch
    venv_python.chmod(0o755)
    _, report = preflight(tmp_path, "--", venv_python, "train.py")
    assert report["checks"]["G1"].startswith("skip: no PyTorch in ")
    assert "No module named 'torch'" in report["checks"]["G1"]


def test_another_tenant_on_the_gpu(tmp_path):
    vllm = tmp_path / "vllm"
    vllm.symlink_to("/bin/sleep")
    server = subprocess.Popen([str(vllm), "60"])
    try:
        script = tmp_path / "gpu.json"
        script.write_text(json.dumps({"apps": [{"pid": server.pid, "process_name": "vllm", "used_memory": 20480}]}))
        _, report = preflight(tmp_path, fake_gpu="rtx4090", SPARKGUARD_FAKE_GPU_SCRIPT=str(script))
    finally:
        server.kill()
        server.wait()
    assert report["checks"]["G6"].startswith("warn: ")
    assert f"vllm (pid {server.pid}, 21.5 GB on the GPU" in report["checks"]["G6"]
    tenant = next(t for t in report["details"]["G6"]["tenants"] if t["pid"] == server.pid)
    assert tenant["on_gpu"] and tenant["kind"] == "vllm"


def test_a_workload_that_does_not_fit_is_blocked(tmp_path):
    result, report = preflight(tmp_path, "--model", "llama-3.1-70b", "--method", "full", fake_gpu="rtx4090")
    assert result.returncode == 3
    assert report["checks"]["workload"] == "fail"
    assert report["headroom_gb"] < 0
    assert report["plan"]["verdict"] == "does-not-fit"


def test_a_workload_that_fits_gives_its_headroom(tmp_path):
    result, report = preflight(tmp_path, "--params", "0.5e9", "--method", "lora", "--budget-gb", "60", fake_gpu="gb10")
    assert report["checks"]["workload"] == "pass", report["details"]["workload"]
    assert report["headroom_gb"] == pytest.approx(report["details"]["workload"]["headroom_gb"])
    assert 0 < report["headroom_gb"] < 60
    assert result.returncode == 0


def test_json_output_and_the_default_path(tmp_path):
    result = sparkguard("preflight", "--json", cwd=tmp_path, env=base_env(SPARKGUARD_FAKE_GPU="gb10"))
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    written = json.loads((tmp_path / "env-report.json").read_text())
    assert printed == written
    check_shape(written)


@pytest.mark.parametrize("args", [["extra"], ["--no-such-flag"], ["--model", "no-such-model-anywhere"], ["--batch", "zero"]])
def test_usage_errors_exit_2(tmp_path, args):
    result, report = preflight(tmp_path, *args)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(b"sparkguard: error: ")
    assert report is None


def test_an_unwritable_report_path_is_a_usage_error(tmp_path):
    result = sparkguard("preflight", "-o", tmp_path / "missing" / "env-report.json", cwd=tmp_path,
                        env=base_env(SPARKGUARD_FAKE_GPU="none"))
    assert result.returncode == 2
    assert b"--output: " in result.stderr and b"missing/env-report.json" in result.stderr


def test_help_lists_the_options(tmp_path):
    result = sparkguard("preflight", "--help", cwd=tmp_path)
    assert result.returncode == 0
    for option in (b"--output", b"--json", b"--model", b"--params", b"G10"):
        assert option in result.stdout
    listing = sparkguard("--help", cwd=tmp_path)
    assert b"preflight" in listing.stdout


def test_g1_looks_through_wrappers_to_the_trainers_python(tmp_path):
    venv_python = tmp_path / "bin" / "python3"
    venv_python.parent.mkdir()
    # no site-packages, so no torch; and sys.executable is this path, so the probe names it
    venv_python.write_text("#!/bin/bash\nexec -a \"$0\" /usr/bin/python3 -S \"$@\"\n")
    venv_python.chmod(0o755)
    _, report = preflight(tmp_path, "--", "prlimit", "--as=9000000000", "nice", "-n", "5", "env", "A=1", "nohup",
                          "taskset", "-c", "0", "numactl", "--membind=0", venv_python, "train.py")
    assert report["checks"]["G1"].startswith(f"skip: no PyTorch in {venv_python}")
