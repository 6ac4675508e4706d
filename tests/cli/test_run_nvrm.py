"""The NVIDIA driver's unified-memory allocation failure as `sparkguard run` sees it: a record in
/dev/kmsg during the attempt, and a trainer SIGKILLed with no kernel OOM kill to explain it.

Root writes the record the way the driver does (a kernel log line at error level). /dev/kmsg
keeps it: nothing can remove one record from the ring buffer, and clearing the whole buffer would
take other programs' evidence, so the test writes exactly one record. Other sparkguard runs on
this machine at that moment would see it as well."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import HF_TRAIN, PYTHON, base_env, read_events, read_report, wait_for

# NVIDIA/open-gpu-kernel-modules#1358: the record of a DGX Spark whose unified memory ran out.
NVRM = ("NVRM: nvCheckOkFailedNoLog: Check failed: Out of memory [NV_ERR_NO_MEMORY] (0x00000051) "
        "returned from _memdescAllocInternal(pMemDesc) @ mem_desc.c:1359")

# The first attempt says it is loading, leaves its pid and waits to be killed; later attempts are
# the real Hugging Face stand-in trainer.
WRAPPER = """
import os, sys, time
here = os.path.dirname(os.path.abspath(__file__))
if not os.path.exists(os.path.join(here, "first-attempt-ran")):
    open(os.path.join(here, "first-attempt-ran"), "w").close()
    print("Loading checkpoint shards:  50%|#####     | 1/2 [00:01<00:01,  1.0s/it]", flush=True)
    with open(os.path.join(here, "pid.tmp"), "w") as f:
        f.write(str(os.getpid()))
    os.rename(os.path.join(here, "pid.tmp"), os.path.join(here, "pid"))
    time.sleep(300)
    sys.exit(3)
os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
"""


def kmsg_writable():
    try:
        with open("/dev/kmsg", "w"):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not kmsg_writable(), reason="writing a record to /dev/kmsg needs root")
def test_nvrm_record_during_the_attempt_makes_a_sigkill_unified_memory_oom_and_the_ladder_goes_on(tmp_path):
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text(textwrap.dedent(WRAPPER))
    run, out = tmp_path / "run", tmp_path / "out"
    trainer = [HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 2, "--max_seq_length", 256,
               "--max_steps", 2, "--save_steps", 2, "--logging_steps", 1, "--width", 8]
    command = [os.environ.get("SPARKGUARD", "sparkguard"), "run", "--run-dir", run, "--memory-floor", 0, "--",
               PYTHON, wrapper, *trainer]
    proc = subprocess.Popen(list(map(str, command)), cwd=tmp_path, env=base_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        pid_file = tmp_path / "pid"
        assert wait_for(pid_file.exists, 60), "the first attempt never started"
        pid = int(pid_file.read_text())
        time.sleep(0.5)  # sparkguard's kernel watch opened /dev/kmsg at the launch, before this record
        with open("/dev/kmsg", "w") as kmsg:
            kmsg.write(f"<3>{NVRM}\n")
        os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    first = attempts[0]
    assert first["outcome"] == "oom", first
    assert first["oom_kind"] == "unified-memory", first
    assert first["confidence"] == "probable" and first["phase"] == "load"
    assert "NV_ERR_NO_MEMORY" in first["evidence"]
    assert first["exit_code"] == 137
    # The ladder's next rung, and the run finished there.
    assert attempts[1]["rung"] == "drop-caches"
    assert attempts[-1]["outcome"] == "succeeded"
    oom_events = [e for e in read_events(run) if e["event"] == "oom"]
    assert oom_events[0]["kind"] == "unified-memory"
