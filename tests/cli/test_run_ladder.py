"""The OOM ladder with a real PyTorch trainer: real allocator failures under an address-space
cap, real kernel OOM kills in a memory cgroup, relaunches that resume from checkpoints.

The thresholds come from measuring hf_train.py --width 8 (VmPeak, VmHWM in KiB):
  8x1024: 1285552 / 718212   8x512: 1048976 / 481888   4x512: 934272 / 367136   8x256: 935936 / 369000
so an address-space cap of 1010e6 bytes fails 8x1024 and 8x512 and fits 4x512 and 8x256. In a
memory cgroup the kernel reclaims file pages before it kills, so the limit is set by measurement
(tests/trainers/hf_train.py in_cgroup, 3 steps): at 300 MiB 8x1024 and 8x512 are killed (also at
260 and 340), 8x256 runs (also at 260).
"""
import os
import shutil

import pytest

from conftest import HF_TRAIN, PYTHON, TRAINERS, read_attempts, read_events, read_report, sparkguard

CAP = 1010 * 1000 * 1000


def trainer_args(out, batch=8, seq=1024, extra=()):
    return [HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", batch, "--max_seq_length", seq,
            "--warmup_steps", 4, "--max_steps", 8, "--save_steps", 2, "--logging_steps", 2, "--width", 8, *extra]


def capped(out, **kwargs):
    return ["prlimit", f"--as={CAP}", PYTHON, *trainer_args(out, **kwargs)]


def test_allocator_oom_walks_the_ladder_in_order_and_resumes(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--min-seq", 512, "--", *capped(out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    report = read_report(run)
    attempts = report["attempts"]
    assert [a["rung"] for a in attempts] == [None, "drop-caches", "shorter-packing", "smaller-batch"]
    assert [a["outcome"] for a in attempts] == ["oom", "oom", "oom", "succeeded"]
    assert all(a["oom_kind"] == "cpu-allocator" and a["phase"] == "train" for a in attempts[:3])
    assert "can't allocate memory" in attempts[0]["evidence"]
    configs = [(a["config"]["batch_size"], a["config"]["grad_accum"], a["config"]["seq_len"]) for a in attempts]
    assert configs == [(8, 1, 1024), (8, 1, 1024), (8, 1, 512), (4, 2, 512)]
    assert attempts[3]["skipped_rungs"][0]["rung"] == "shorter-packing" and "floor" in attempts[3]["skipped_rungs"][0]["why"]
    assert attempts[1]["config"]["drop_caches"] and attempts[3]["config"]["drop_caches"]

    # What the trainer itself ran with: the effective batch kept, every relaunch resumed from
    # the newest checkpoint, and the smaller batch honoured although it resumed from a checkpoint
    # whose trainer_state.json said 8.
    ran = read_attempts(out)
    assert [(r["batch"] * r["accum"], r["start_step"]) for r in ran] == [(8, 0), (8, 4), (8, 4), (8, 4)]
    assert ran[3]["batch"] == 4 and ran[3]["resumed_from"].endswith("checkpoint-4")
    assert attempts[3]["resumed_from"].endswith("checkpoint-4")
    assert (out / "checkpoint-4" / "trainer_state.json.sparkguard-orig").exists()
    assert (out / "checkpoint-8" / "trainer_state.json").exists()
    assert "--gradient_accumulation_steps 2" in report["reproduce"] and "--per_device_train_batch_size 4" in report["reproduce"]
    assert "--resume_from_checkpoint" not in report["reproduce"]
    events = [e["event"] for e in read_events(run)]
    assert events.count("oom") == 3 and events.count("rung") == 3 and events.count("resume") == 3


def test_kernel_oom_kill_in_a_memory_cgroup_is_recognised_and_laddered(tmp_path, memory_cgroup):
    cgroup, set_limit = memory_cgroup
    set_limit(300 * 1024 * 1024)
    run, out = tmp_path / "run", tmp_path / "out"
    command = [TRAINERS / "in_cgroup", cgroup, PYTHON, *trainer_args(out)]
    # Right at a cgroup's limit the kernel may reclaim (thrash) for a long time before it kills:
    # the stall watchdog turns that into a memory-stall OOM, which the ladder treats the same.
    result = sparkguard("run", "--run-dir", run, "--min-seq", 256, "--stall-timeout", "20s", "--", *command, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [a["outcome"] for a in attempts] == ["oom", "oom", "succeeded"]
    assert [a["config"]["seq_len"] for a in attempts] == [1024, 512, 256]
    assert attempts[0]["exit_code"] == 137
    assert attempts[0]["oom_kind"] == "cgroup-oom-kill"
    assert attempts[1]["oom_kind"] in ("cgroup-oom-kill", "memory-stall")
    assert "Killed process" in attempts[0]["evidence"] or "oom_kill" in attempts[0]["evidence"]
    # Dropping the host's page cache cannot help a death at the cgroup's own limit: skipped, with why.
    skips = [e for e in read_events(run) if e["event"] == "skip"]
    assert skips[0]["rung"] == "drop-caches" and "cgroup's memory limit" in skips[0]["why"]
    assert not any(a["config"]["drop_caches"] for a in attempts)
    ran = read_attempts(out)
    assert [(r["batch"] * r["accum"], r["start_step"]) for r in ran] == [(8, 0), (8, 4), (8, 4)]


def test_the_ladder_runs_out_with_exit_4_and_says_what_is_left(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--ladder", "shorter-packing", "--min-seq", 512, "--",
                        *capped(out), cwd=tmp_path)
    assert result.returncode == 4, result.stderr.decode()[-3000:]
    report = read_report(run)
    assert report["outcome"] == "oom-exhausted" and report["exit_code"] == 4
    assert [a["config"]["seq_len"] for a in report["attempts"]] == [1024, 512]
    assert "floor" in report["skipped_at_end"][0]["why"]
    assert b"What is left" in result.stderr


def test_max_attempts_bounds_the_run(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--max-attempts", 2, "--", *capped(out), cwd=tmp_path)
    assert result.returncode == 4
    assert len(read_report(run)["attempts"]) == 2


def test_qlora_becomes_bf16_lora_when_the_ladder_reaches_it(tmp_path):
    run, out = tmp_path / "run", tmp_path / "out"
    qlora = ["--load_in_4bit", "--bnb_4bit_quant_type", "nf4", "--model_name_or_path", "acme/tiny"]
    result = sparkguard("run", "--run-dir", run, "--ladder", "bf16-lora", "--",
                        *capped(out, batch=4, seq=512, extra=qlora), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    attempts = read_report(run)["attempts"]
    assert [a["rung"] for a in attempts] == [None, "bf16-lora"]
    assert attempts[0]["config"]["method"] == "qlora" and attempts[1]["config"]["method"] == "lora"
    assert "--load_in_4bit" not in attempts[1]["argv"] and "--bnb_4bit_quant_type" not in attempts[1]["argv"]
    assert [r["qlora"] for r in read_attempts(out)] == [True, False]


def test_a_prequantised_model_needs_its_bf16_original(tmp_path):
    qlora = ["--load_in_4bit", "--model_name_or_path", "acme/tiny-bnb-4bit"]
    run, out = tmp_path / "run", tmp_path / "out"
    result = sparkguard("run", "--run-dir", run, "--ladder", "bf16-lora", "--",
                        *capped(out, batch=4, seq=512, extra=qlora), cwd=tmp_path)
    assert result.returncode == 4
    assert "--bf16-model" in read_report(run)["skipped_at_end"][0]["why"]

    run2, out2 = tmp_path / "run2", tmp_path / "out2"
    result = sparkguard("run", "--run-dir", run2, "--ladder", "bf16-lora", "--bf16-model", "acme/tiny", "--",
                        *capped(out2, batch=4, seq=512, extra=qlora), cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    argv = read_report(run2)["attempts"][1]["argv"]
    assert argv[argv.index("--model_name_or_path") + 1] == "acme/tiny"
