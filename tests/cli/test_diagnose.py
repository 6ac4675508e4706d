"""sparkguard diagnose, driven as a user would: real logs, real PyTorch allocator failures, real shells."""
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SPARKGUARD = os.environ["SPARKGUARD"]
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
LOGS = SOURCE / "tests" / "data" / "logs"
PYTHON = "/usr/bin/python3"


def diagnose(*args, stdin=None):
    return subprocess.run([SPARKGUARD, "diagnose", *map(str, args)], input=stdin, capture_output=True, timeout=120)


def diagnose_json(*args, stdin=None):
    result = diagnose(*args, "--json", stdin=stdin)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_json_shape():
    out = diagnose_json(LOGS / "cuda-oom-torch2.1-capacty.log", "--exit-code", 1)
    assert out["oom"] is True
    assert out["kind"] == "cuda-allocator"
    assert out["phase"] == "load"
    assert out["confidence"] == "certain"
    assert out["evidence"].startswith("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB.")
    assert out["line"] == 1
    assert out["exit"] == "exit code 1"
    assert {"oom", "kind", "phase", "evidence", "confidence", "reason", "line", "last_step", "total_steps"} <= out.keys()


def test_not_oom_json_has_nulls():
    out = diagnose_json(LOGS / "lookalike-triton-shared-memory.log", "--exit-code", 1)
    assert out["oom"] is False
    assert out["kind"] is None and out["phase"] is None and out["evidence"] is None and out["confidence"] is None
    assert "not a SIGKILL" in out["reason"]


def test_text_output():
    result = diagnose(LOGS / "cuda-oom-mid-training.log", "--exit-code", 1)
    assert result.returncode == 0
    text = result.stdout.decode()
    assert "verdict:  OOM (cuda-allocator), during training, certain" in text
    assert "evidence: line 17: RuntimeError: CUDA out of memory." in text
    assert "progress: step 371 of 4899" in text


def test_text_output_not_oom():
    text = diagnose(LOGS / "lookalike-no-space-left-on-device.log", "--exit-code", 1).stdout.decode()
    assert text.startswith("verdict:  not OOM\n")


def test_exit_137_with_only_killed_is_probable():
    out = diagnose_json("-", "--exit-code", 137, stdin=b"Killed\n")
    assert out["oom"] is True
    assert out["kind"] == "sigkill-probable"
    assert out["confidence"] == "probable"
    assert "probable cause" in out["reason"]
    assert diagnose_json("-", "--exit-code", -9, stdin=b"Killed\n")["kind"] == "sigkill-probable"


def test_exit_0_is_never_oom():
    assert diagnose_json(LOGS / "cuda-oom-caught-exit0.log", "--exit-code", 0)["oom"] is False


def test_missing_file_is_a_usage_error_naming_it(tmp_path):
    missing = tmp_path / "no-such-train.log"
    result = diagnose(missing)
    assert result.returncode == 2
    assert str(missing) in result.stderr.decode()
    assert "No such file" in result.stderr.decode()


@pytest.mark.parametrize("args", [[], ["a.log", "b.log"], ["-", "--exit-code", "lots"], ["-", "--exit-code", "999"],
                                  ["-", "--color"]])
def test_usage_errors_exit_2(args):
    assert diagnose(*args, stdin=b"").returncode == 2


def test_help():
    result = diagnose("--help")
    assert result.returncode == 0
    assert result.stdout.decode().startswith("usage: sparkguard diagnose LOGFILE [--exit-code N] [--json]")
    assert "--exit-code N" in result.stdout.decode()


def test_binary_garbage_keeps_json_valid():
    rng = random.Random(7)
    garbage = bytes(rng.randrange(256) for _ in range(200_000))
    log = garbage + b"\n\x00\xff\xfe torch.OutOfMemoryError: CUDA out of memory.\xc3\x28\x1b[0m\x00\n" + garbage
    out = diagnose_json("-", "--exit-code", 1, stdin=log)
    assert out["kind"] == "cuda-allocator"
    assert "\x00" not in out["evidence"]
    assert diagnose_json("-", stdin=garbage)["oom"] is False


def test_one_megabyte_line():
    log = b"x" * (1 << 20) + b" RuntimeError: CUDA error: out of memory\n"
    assert diagnose_json("-", "--exit-code", 1, stdin=log)["kind"] == "cuda-runtime"


def run_python_under_address_limit(script, tmp_path, limit=2 << 30):
    """Runs a real PyTorch script with its address space capped, returning (exit code, output file)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(script))
    result = subprocess.run(["prlimit", f"--as={limit}", PYTHON, str(path)], capture_output=True, env=env, timeout=300)
    log = tmp_path / "train.log"
    log.write_bytes(result.stdout + result.stderr)
    return result.returncode, log


def test_real_cpu_allocator_oom_while_loading(tmp_path):
    code, log = run_python_under_address_limit("""
        import torch
        torch.set_num_threads(1)
        a = torch.ones(64, 64)
        print("warm-up matmul", float((a @ a).sum()), flush=True)
        weights = torch.empty(8 * 1024**3, dtype=torch.uint8)
    """, tmp_path)
    assert code == 1, log.read_text()
    assert "DefaultCPUAllocator: can't allocate memory" in log.read_text()
    out = diagnose_json(log, "--exit-code", code)
    assert (out["oom"], out["kind"], out["phase"], out["confidence"]) == (True, "cpu-allocator", "load", "certain")


def test_real_cpu_allocator_oom_mid_training(tmp_path):
    """A real training loop printing Hugging Face's progress formats, then an activation too large to allocate."""
    code, log = run_python_under_address_limit("""
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(1)
        model = torch.nn.Linear(64, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(256, 64), torch.randn(256, 1)
        total = 10
        for step in range(1, total + 1):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print(f"{{'loss': {loss.item():.4f}, 'grad_norm': 1.0, 'learning_rate': 0.1, 'epoch': {step / total:.2f}}}", flush=True)
            print(f"Step {step}/{total} | loss {loss.item():.4f}", flush=True)
            if step == 5:
                activations = torch.empty(8 * 1024**3, dtype=torch.uint8)
    """, tmp_path)
    assert code == 1, log.read_text()
    out = diagnose_json(log, "--exit-code", code)
    assert (out["oom"], out["kind"], out["phase"]) == (True, "cpu-allocator", "train")
    assert (out["last_step"], out["total_steps"]) == (5, 10)


def test_real_shell_report_of_a_sigkilled_trainer(tmp_path):
    """bash's own 'Killed' report and exit 137; the kill is ours, the format is the shell's."""
    result = subprocess.run(["bash", "-c", f'{PYTHON} -c "import os, signal; print(\'loading\', flush=True); '
                                           f'os.kill(os.getpid(), signal.SIGKILL)"; exit $?'],
                            capture_output=True, timeout=60)
    assert result.returncode == 137
    assert b"Killed" in result.stderr
    log = tmp_path / "train.log"
    log.write_bytes(result.stdout + result.stderr)
    out = diagnose_json(log, "--exit-code", result.returncode)
    assert (out["oom"], out["kind"], out["confidence"], out["line"]) == (True, "sigkill-probable", "probable", 2)


def test_every_manifest_case_through_the_binary():
    manifest = json.loads((LOGS / "manifest.json").read_text())
    for entry in manifest["logs"]:
        for case in entry["cases"]:
            args = [LOGS / entry["file"]] + (["--exit-code", case["exit"]] if "exit" in case else [])
            out = diagnose_json(*args)
            assert out["oom"] == case["oom"], (entry["file"], case, out)
            if "kind" in case:
                assert out["kind"] == case["kind"], (entry["file"], case, out)


@pytest.mark.parametrize("log", ["nvrm-no-memory-dmesg-timestamps.log", "nvrm-no-memory-journalctl-gb10.log"])
def test_a_log_of_only_the_drivers_nvrm_records_is_unified_memory_oom(log):
    """Real NVRM lines (dmesg with timestamps, journalctl -k without): nothing else explains a death."""
    out = diagnose_json(LOGS / log)
    assert (out["oom"], out["kind"], out["confidence"], out["line"]) == (True, "unified-memory", "probable", 1)
    assert "NV_ERR_NO_MEMORY" in out["evidence"]
    assert "driver" in out["reason"]
    text = diagnose(LOGS / log).stdout.decode()
    assert text.startswith("verdict:  OOM (unified-memory)")


def test_nvrm_records_followed_by_an_unrelated_exception_are_not_oom():
    """The driver logs NV_ERR_NO_MEMORY on healthy runs too: another error explains the death first."""
    nvrm = (LOGS / "nvrm-no-memory-journalctl-gb10.log").read_bytes()
    exception = (LOGS / "lookalike-illegal-memory-access.log").read_bytes()
    out = diagnose_json("-", "--exit-code", 1, stdin=nvrm + exception)
    assert out["oom"] is False
    assert "healthy runs" in out["reason"]
    # A SIGKILL right after that error has it for a competing cause too: what came just before decides.
    killed = diagnose_json("-", "--exit-code", 137, stdin=nvrm + exception)
    assert killed["oom"] is False and "lines after another error" in killed["reason"]
