"""`sparkguard run -- srun ...` on a real two-node Slurm (slurm_bed.py): a real gloo DDP job whose rank
on node2 dies of a real allocator OOM under `prlimit --as` once the warm-up steps (a quarter of the length) are checkpointed, a failure that is not OOM on one rank,
SIGTERM to sparkguard, and scancel (interrupted, not OOM). Measured on the bed (hf_train.py --width 8, seq 512, DDP): under an
address-space cap of 1300e6 bytes batch 8 fails and batch 4 runs."""
import os
import signal
import subprocess
import time

from conftest import HF_TRAIN, PYTHON, SPARKGUARD, base_env, read_attempts, read_report, wait_for

CAP = 1300 * 1000 * 1000


def ddp_env(**extra):
    return base_env(HF_TRAIN_DDP="1", HF_TRAIN_CAP_RANK="1", HF_TRAIN_CAP=str(CAP), **extra)


def job(out, batch=8, steps=8, extra=()):
    return ["srun", "-N2", "-n2", "--ntasks-per-node", "1", PYTHON, HF_TRAIN, "--output_dir", out,
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
    assert "--kill-on-bad-exit=1" in attempts[0]["argv"]
    assert attempts[-1]["outcome"] == "succeeded" and attempts[-1]["rung"] == "smaller-batch"
    assert attempts[-1]["resumed_from"] and attempts[-1]["resumed_from"].startswith(str(out))
    ran = read_attempts(out)
    last = [r for r in ran if r["batch"] == 4]
    assert sorted((r["host"], r["rank"]) for r in last) == [("node1", 0), ("node2", 1)]  # both nodes, one rung down
    assert all(r["batch"] * r["accum"] == 8 and r["start_step"] > 0 for r in last)  # effective batch kept, resumed
    assert (out / "checkpoint-8" / "trainer_state.json").exists()


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
