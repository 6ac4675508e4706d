"""`sparkguard run -- srun ...` on a real two-node Slurm (slurm_bed.py): a real gloo DDP job whose rank
on node2 dies of a real allocator OOM under `prlimit --as` once the warm-up steps (a quarter of the length) are checkpointed,
the same job killed by the kernel's OOM killer in Slurm's memory cgroup (`srun --mem`), a failure that is not OOM on one rank,
SIGTERM to sparkguard, and scancel (interrupted, not OOM). Measured on the bed (hf_train.py --width 8, seq 512, DDP): under an
address-space cap of 1300e6 bytes batch 8 fails and batch 4 runs; for `--mem`, see the cgroup test."""
import json
import os
import signal
import subprocess
import time

import pytest
from conftest import HF_TRAIN, PYTHON, SPARKGUARD, base_env, read_attempts, read_events, read_report, wait_for

CAP = 1300 * 1000 * 1000
MEM = "300M"


def ddp_env(**extra):
    return base_env(HF_TRAIN_DDP="1", HF_TRAIN_CAP_RANK="1", HF_TRAIN_CAP=str(CAP), **extra)


def job(out, batch=8, steps=8, extra=(), srun=()):
    return ["srun", "-N2", "-n2", "--ntasks-per-node", "1", *srun, PYTHON, HF_TRAIN, "--output_dir", out,
            "--per_device_train_batch_size", batch, "--max_seq_length", 512, "--max_steps", steps,
            "--warmup_steps", 4, "--save_steps", 2, "--logging_steps", 2, "--width", 8, *extra]


def sparkguard_in(bed, *args, env, timeout=300):
    return bed.run([SPARKGUARD, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_a_rank_oom_on_node2_relaunches_the_whole_job_one_rung_down(slurm_bed, tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard_in(slurm_bed, "run", "--run-dir", run, "--min-seq", 512, "--", *job(out), env=ddp_env())
    assert result.returncode == 0, result.stderr[-4000:]
    attempts = read_report(run)["attempts"]
    assert attempts[0]["outcome"] == "oom" and attempts[0]["oom_kind"] == "cpu-allocator"
    assert attempts[0]["node"] == "node2" and attempts[0]["rank"] == "1"
    morning = subprocess.run([SPARKGUARD, "report", run], capture_output=True, text=True)
    assert "OOM cpu-allocator while training on node2 (task 1)" in morning.stdout, morning.stdout
    assert "--kill-on-bad-exit=1" in attempts[0]["argv"]
    assert attempts[-1]["outcome"] == "succeeded" and attempts[-1]["rung"] == "smaller-batch"
    assert attempts[-1]["resumed_from"] and attempts[-1]["resumed_from"].startswith(str(out))
    ran = read_attempts(out)
    last = [r for r in ran if r["batch"] == 4]
    assert sorted((r["host"], r["rank"]) for r in last) == [("node1", 0), ("node2", 1)]  # both nodes, one rung down
    assert all(r["batch"] * r["accum"] == 8 and r["start_step"] > 0 for r in last)  # effective batch kept, resumed
    assert (out / "checkpoint-8" / "trainer_state.json").exists()


def test_a_kernel_oom_kill_in_slurms_memory_cgroup_relaunches_the_whole_job_one_rung_down(slurm_bed, tmp_path):
    """`srun --mem=300M`: task/cgroup (ConstrainRAMSpace, no swap allowed) caps each node's part of the job at
    300 MB and the kernel's OOM killer kills a rank in it; srun says "srun: error: NODE: task N: Out Of
    Memory", slurmstepd "Detected 1 oom-kill event(s) in StepId=J.0". Measured on the bed, the peak of a
    node's job cgroup (memory.max_usage_in_bytes, page cache included) at seq 512 with no limit: batch 8
    361-375 MB, batch 4 245-254 MB, batch 2 186-187 MB; with --mem, batch 8 dies after checkpoint-4 at
    280M-360M, batch 4 (accumulation 2) finishes at 250M-320M. Both ranks grow alike, so which node's
    rank the kernel kills first (often both) is the machine's choice, not the test's. sparkguard skips
    drop-caches after a cgroup's kill: it cannot raise the cgroup's limit (the kernel reclaims the cgroup's page cache before it
    kills in it), and with the page cache dropped, the ranks fault torch's libraries back in inside their
    300 MB and thrash before the kill: on the bed that retry of batch 8 took 10-71 s to die instead of 1 s."""
    if slurm_bed.no_memory_cgroups:
        pytest.skip(f"the Slurm test bed {slurm_bed.no_memory_cgroups}")
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard_in(slurm_bed, "run", "--run-dir", run, "--min-seq", 512, "--", *job(out, srun=(f"--mem={MEM}",)), env=base_env(HF_TRAIN_DDP="1"))
    assert result.returncode == 0, result.stderr[-4000:]
    assert "oom-kill event(s) in StepId=" in result.stderr or ": Out Of Memory" in result.stderr, result.stderr[-4000:]
    attempts = read_report(run)["attempts"]
    assert attempts[0]["outcome"] == "oom" and attempts[0]["oom_kind"] == "cgroup-oom-kill", attempts[0]
    assert "--kill-on-bad-exit=1" in attempts[0]["argv"]
    for attempt in attempts[:-1]:
        if attempt["node"] is not None:  # srun named the task it saw end first (it does not always)
            assert (attempt["node"], attempt["rank"]) in [("node1", "0"), ("node2", "1")], attempt
    if ": Out Of Memory" in result.stderr:  # srun's word was heard as the cause, not only slurmstepd's count
        assert any(": Out Of Memory)" in note for a in attempts[:-1] for note in a["notes"]), attempts
    # the killed rank's node saw the kernel's record: its sparkguard node said so, and kept its telemetry
    deaths = [json.loads(line).get("death") for host in ("node1", "node2")
              for line in (run / "nodes" / host / "attempts.jsonl").read_text().splitlines()]
    assert any(d and d["kind"] == "cgroup-oom-kill" and "Killed process" in d["evidence"] for d in deaths), deaths
    assert "sparkguard-node: node" in result.stderr and ": cgroup-oom-kill: " in result.stderr
    skipped = [e["rung"] for e in read_events(run) if e["event"] == "skip"]
    assert skipped[:2] == ["drop-caches", "shorter-packing"], skipped  # the cgroup's limit; the length's floor
    assert [a["rung"] for a in attempts] == [None, "smaller-batch"], \
        [{k: a.get(k) for k in ("outcome", "oom_kind", "rung", "node", "evidence", "notes")} for a in attempts]
    assert attempts[-1]["outcome"] == "succeeded"
    assert all(f"--mem={MEM}" in a["argv"] for a in attempts)  # srun's own options are never the trainer's
    assert attempts[-1]["resumed_from"] and attempts[-1]["resumed_from"].startswith(str(out))
    ran = read_attempts(out)
    assert sorted((r["host"], r["rank"]) for r in ran if r["batch"] == 8) == [("node1", 0), ("node2", 1)]
    last = [r for r in ran if r["batch"] == 4]
    assert sorted((r["host"], r["rank"]) for r in last) == [("node1", 0), ("node2", 1)]  # both nodes, one rung down
    assert all(r["batch"] * r["accum"] == 8 and r["start_step"] > 0 for r in last)  # effective batch kept, resumed
    assert (out / "checkpoint-8" / "trainer_state.json").exists()
    assert wait_for(lambda: slurm_bed.step_processes() == [], 15), slurm_bed.step_processes()


def test_a_failure_that_is_not_oom_on_one_rank_ends_the_run_with_its_status(slurm_bed, tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    env = base_env(HF_TRAIN_DDP="1", HF_TRAIN_FAIL_RANK="1")
    result = sparkguard_in(slurm_bed, "run", "--run-dir", run, "--", *job(out, batch=4), env=env)
    report = read_report(run)
    assert report["outcome"] == "failed" and len(report["attempts"]) == 1, result.stderr[-4000:]  # never relaunched
    if "node2: task 1: Exited with exit code 3" in result.stderr:
        assert result.returncode == 3, result.stderr[-4000:]  # srun itself returned 143, the terminated peer's
        assert report["attempts"][0]["node"] == "node2"
    else:
        # On a loaded machine gloo on node1 can see the peer gone before srun hears of task 1's end;
        # srun then reports only rank 0's exit and terminates the step: that is all anyone knows.
        assert "node1: task 0: Exited with exit code" in result.stderr and result.returncode != 0


def test_sigterm_cancels_the_step_on_both_nodes(slurm_bed, tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    proc = slurm_bed.popen([SPARKGUARD, "run", "--run-dir", run, "--grace", 10, "--",
                            *job(out, batch=4, steps=400, extra=("--step_sleep", 0.2))],
                           env=base_env(HF_TRAIN_DDP="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for(lambda: (out / "checkpoint-2").exists(), 60)
    assert len(slurm_bed.tasks()) >= 2
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    assert wait_for(lambda: slurm_bed.step_processes() == [], 15), slurm_bed.step_processes()
    assert time.monotonic() - started < 30
    assert read_report(run)["outcome"] == "interrupted"


def test_scancel_ends_the_run_as_interrupted_not_oom(slurm_bed, tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    proc = slurm_bed.popen([SPARKGUARD, "run", "--run-dir", run, "--",
                            *job(out, batch=4, steps=400, extra=("--step_sleep", 0.2))],
                           env=base_env(HF_TRAIN_DDP="1"), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for(lambda: (out / "checkpoint-2").exists(), 60)
    jobs = slurm_bed.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout.split()
    assert len(jobs) == 1, jobs
    slurm_bed.run(["scancel", jobs[0]], check=True)
    stderr = proc.communicate(timeout=60)[1].decode(errors="replace")
    report = read_report(run)
    assert report["outcome"] == "interrupted" and len(report["attempts"]) == 1, stderr[-4000:]  # never relaunched
    assert "CANCELLED" in report["attempts"][0]["evidence"]
    assert "--resume-run" in stderr
    assert wait_for(lambda: slurm_bed.step_processes() == [], 15), slurm_bed.step_processes()
