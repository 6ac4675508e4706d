"""The OOM ladder through the trainers people launch: Axolotl, LLaMA-Factory, torchtune, TRL and
Unsloth, each a stand-in (tests/trainers/bin) that parses its arguments and config the way the real
one does, resumes or ignores resume as it does, and dies of PyTorch's own allocator error when
batch x length is too big for an address-space cap.

What each stand-in ran with comes from its OUTPUT_DIR/attempts.jsonl, written by the trainer
itself: a rung is only "applied" if the trainer saw it, a resume only "claimed" if it happened.

Sizes: STANDIN_KB_PER_TOKEN=64 under CAP (1100 MiB) fits 4096 tokens a step (4x1024, 8x512) and
dies at 6144 and more, measured with
  prlimit --as=1153433600 tests/trainers/trl_sft.py --per_device_train_batch_size B --max_length L
(4x512, 8x512, 4x1024 ran; 6x1024 and 8x768 died). STANDIN_WARMUP_STEPS=4 makes the first four
steps a quarter as long, so a run that does not fit writes checkpoints before it dies.
"""
import json
import os
import time
from pathlib import Path

from conftest import PYTHON, SOURCE, TRAINERS, base_env, read_attempts, read_events, read_report, sparkguard

CAP = 1153433600
BIN = TRAINERS / "bin"


def env(**extra):
    e = base_env(**{"STANDIN_KB_PER_TOKEN": "64", "STANDIN_WARMUP_STEPS": "4", "STANDIN_STEP_SLEEP": "0.01",
                    "PYTHONPATH": str(TRAINERS / "py"), **extra})
    e["PATH"] = f"{BIN}:{e['PATH']}"
    return e


def run(tmp_path, *command, options=(), **extra_env):
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--min-seq", 512, *options, "--", *map(str, command),
                        cwd=tmp_path, env=env(**extra_env))
    return result, tmp_path / "run"


def capped(*command):
    return ["prlimit", f"--as={CAP}", *command]


def ran(output_dir):
    return [(r["batch"], r["accum"], r["seq"], r["start_step"]) for r in read_attempts(output_dir)]


def failure(result):
    return result.stderr.decode()[-4000:]


def test_axolotl_yaml_is_changed_in_a_copy_and_every_rung_reaches_the_trainer(tmp_path):
    out = tmp_path / "out"
    yaml = (f"base_model: tiny-test-model\nadapter: lora\nsequence_len: 1024\nsample_packing: true\n"
            f"micro_batch_size: 16\ngradient_accumulation_steps: 1\nmax_steps: 8\nsave_steps: 2\nlogging_steps: 2\n"
            f"output_dir: {out}\nresume_from_checkpoint:\n")
    cfg = tmp_path / "lora.yml"
    cfg.write_text(yaml)
    result, run_dir = run(tmp_path, *capped("axolotl", "train", cfg))
    assert result.returncode == 0, failure(result)
    report = read_report(run_dir)
    assert report["profile"] == "axolotl"
    assert report["config_sources"]["batch_size"] == f"{cfg}: micro_batch_size"
    assert report["config_sources"]["seq_len"] == f"{cfg}: sequence_len"
    attempts = report["attempts"]
    assert [a["rung"] for a in attempts] == [None, "drop-caches", "shorter-packing", "smaller-batch"]
    assert [a["outcome"] for a in attempts] == ["oom", "oom", "oom", "succeeded"]
    assert all(a["oom_kind"] == "cpu-allocator" for a in attempts[:3])
    # a resumed attempt that dies in its first step had begun training (its bar was drawn)
    assert [a["phase"] for a in attempts[:3]] == ["train", "train", "train"]
    # What axolotl itself ran with: the length and the batch changed, the effective batch kept,
    # each relaunch resumed from checkpoint-4.
    assert ran(out) == [(16, 1, 1024, 0), (16, 1, 1024, 4), (16, 1, 512, 4), (8, 2, 512, 4)]
    assert all(a["resumed_from"].endswith("checkpoint-4") for a in attempts[1:])
    assert cfg.read_text() == yaml  # the user's file is never modified
    copy = run_dir / "attempt-4" / "lora.yml"
    assert copy.is_file() and str(copy) in report["attempts"][3]["argv"]
    assert "resumed" in [e["event"] for e in read_events(run_dir)]
    # reproduce runs the final configuration: the kept copy, without the resume point
    assert str(run_dir / "final" / "lora.yml") in report["reproduce"]
    final = (run_dir / "final" / "lora.yml").read_text()
    assert "micro_batch_size: 8" in final and "gradient_accumulation_steps: 2" in final and "sequence_len: 512" in final


def test_axolotl_legacy_cli_overrides_are_rewritten_in_place_and_qlora_becomes_bf16_lora(tmp_path):
    out = tmp_path / "out"
    cfg = tmp_path / "qlora.yml"
    cfg.write_text(f"base_model: x\nadapter: qlora\nload_in_4bit: true\nsequence_len: 512\nmicro_batch_size: 2\n"
                   f"gradient_accumulation_steps: 2\nmax_steps: 6\nsave_steps: 2\noutput_dir: {out}\n")
    # accelerate's own --gradient_accumulation_steps is never the trainer's
    result, run_dir = run(tmp_path, *capped("accelerate", "launch", "--gradient_accumulation_steps", "3", "-m",
                                             "axolotl.cli.train", cfg, "--micro_batch_size=4"),
                          options=("--ladder", "bf16-lora"), STANDIN_QLORA_MB="512")
    assert result.returncode == 0, failure(result)
    attempts = read_report(run_dir)["attempts"]
    assert [a["rung"] for a in attempts] == [None, "bf16-lora"]
    assert "--micro_batch_size=4" in attempts[1]["argv"] and "3" in attempts[1]["argv"]
    runs = read_attempts(out)
    assert [(r["batch"], r["accum"], r["qlora"], r["adapter"]) for r in runs] == [(4, 2, True, "qlora"), (4, 2, False, "lora")]


def test_llamafactory_overrides_and_an_explicit_resume_past_overwrite_output_dir(tmp_path):
    out = tmp_path / "saves"
    cfg = tmp_path / "sft.yaml"
    cfg.write_text(f"model_name_or_path: tiny-test-model\nstage: sft\ndo_train: true\nfinetuning_type: lora\n"
                   f"dataset: identity\ncutoff_len: 1024\nper_device_train_batch_size: 2\n"
                   f"gradient_accumulation_steps: 1\nmax_steps: 8\nsave_steps: 2\nlogging_steps: 2\n"
                   f"output_dir: {out}\noverwrite_output_dir: true\n")
    result, run_dir = run(tmp_path, *capped("llamafactory-cli", "train", cfg, "per_device_train_batch_size=16"))
    assert result.returncode == 0, failure(result)
    report = read_report(run_dir)
    assert report["profile"] == "llamafactory"
    assert [a["rung"] for a in report["attempts"]] == [None, "drop-caches", "shorter-packing", "smaller-batch"]
    assert ran(out) == [(16, 1, 1024, 0), (16, 1, 1024, 4), (16, 1, 512, 4), (8, 2, 512, 4)]
    # the override stays where the user wrote it; overwrite_output_dir: true would have restarted
    # from scratch and deleted trainer_log.jsonl
    assert "per_device_train_batch_size=8" in report["attempts"][3]["argv"]
    assert (out / "trainer_log.jsonl").is_file()
    assert "overwrite_output_dir: false" in (run_dir / "attempt-2" / "sft.yaml").read_text()


def test_torchtune_overrides_a_copied_config_and_resumes_by_epoch(tmp_path):
    out = tmp_path / "tt"
    cfg = tmp_path / "lora.yaml"
    cfg.write_text(f"output_dir: {out}\nmodel:\n  _component_: torchtune.models.llama3_2.lora_llama3_2_1b\n"
                   f"tokenizer:\n  _component_: torchtune.models.llama3.llama3_tokenizer\n  max_seq_len: 1024\n"
                   f"checkpointer:\n  _component_: torchtune.training.FullModelHFCheckpointer\n"
                   f"  output_dir: ${{output_dir}}\nbatch_size: 4\ngradient_accumulation_steps: 1\nepochs: 3\n"
                   f"max_steps_per_epoch: 2\nresume_from_checkpoint: False\ndataset:\n  packed: False\n")
    # Two short steps fit, so epoch_0 is saved before the third step dies.
    result, run_dir = run(tmp_path, *capped("tune", "run", "lora_finetune_single_device", "--config", cfg, "batch_size=16"),
                          options=("--ladder", "smaller-batch"), STANDIN_WARMUP_STEPS="2")
    assert result.returncode == 0, failure(result)
    report = read_report(run_dir)
    assert report["profile"] == "torchtune"
    attempts = report["attempts"]
    assert [a["rung"] for a in attempts] == [None, "smaller-batch", "smaller-batch"]
    assert [a["phase"] for a in attempts[:2]] == ["train", "train"]
    assert ran(out) == [(16, 1, 1024, 0), (8, 2, 1024, 2), (4, 4, 1024, 2)]
    assert all(a["resumed_from"].endswith("epoch_0") for a in attempts[1:])
    assert attempts[2]["argv"][-1] == "batch_size=4"  # the user's override, rewritten where it stands
    copy = (run_dir / "attempt-3" / "lora.yaml").read_text()
    assert "gradient_accumulation_steps: 4" in copy and "resume_from_checkpoint: true" in copy
    # attempt 2 died in its first step, before any progress line: its resume stays unconfirmed
    resumed = [(e["attempt"], e["first_epoch"]) for e in read_events(run_dir) if e["event"] == "resumed"]
    assert resumed == [(3, 2)]
    assert any("not confirmed" in n for n in attempts[1]["notes"])


def test_trl_sft_cannot_resume_and_sparkguard_does_not_claim_it_did(tmp_path):
    out = tmp_path / "out"
    result, run_dir = run(tmp_path, *capped("trl", "sft", "--model_name_or_path", "m", "--dataset_name", "d",
                                             "--per_device_train_batch_size", "16", "--max_length", "1024",
                                             "--max_steps", "8", "--save_steps", "2", "--output_dir", out))
    assert result.returncode == 0, failure(result)
    report = read_report(run_dir)
    assert report["profile"] == "trl"
    attempts = report["attempts"]
    assert [a["rung"] for a in attempts] == [None, "drop-caches", "shorter-packing", "smaller-batch"]
    assert all(a["resumed_from"] is None for a in attempts)
    assert all(any("restarts from step 0" in n for n in a["notes"]) for a in attempts[1:])
    assert [r["start_step"] for r in read_attempts(out)] == [0, 0, 0, 0]
    assert ran(out)[-1][:2] == (8, 2)


def test_a_resume_the_trainer_ignored_is_reported_as_not_resumed(tmp_path):
    # The hf profile believes --resume_from_checkpoint works; `trl sft` parses it and ignores it.
    out = tmp_path / "out"
    result, run_dir = run(tmp_path, *capped("trl", "sft", "--model_name_or_path", "m", "--dataset_name", "d",
                                             "--per_device_train_batch_size", "16", "--max_length", "1024",
                                             "--max_steps", "8", "--save_steps", "2", "--output_dir", out),
                          options=("--profile", "hf", "--ladder", "smaller-batch"))
    assert result.returncode == 0, failure(result)
    attempts = read_report(run_dir)["attempts"]
    assert any("--resume_from_checkpoint" in a["argv"] for a in attempts[1:])
    assert all(a["resumed_from"] is None for a in attempts)
    assert attempts[1]["resume_requested"].endswith("checkpoint-4")
    assert any("did not resume: restarted at step 1" in n for n in attempts[1]["notes"])
    events = read_events(run_dir)
    assert "resume-failed" in [e["event"] for e in events]
    assert "did not resume: restarted at step 1" in result.stderr.decode()


def test_a_flag_the_trainer_refuses_stops_the_ladder_as_sparkguards_rewrite(tmp_path):
    # TRL 0.7's sft.py has --batch_size, not --per_device_train_batch_size; forcing the hf profile
    # makes sparkguard add the flag that script does not take.
    out = tmp_path / "out"
    result, run_dir = run(tmp_path, *capped(PYTHON, TRAINERS / "trl_sft_v07.py", "--model_name", "m",
                                             "--batch_size", "16", "--seq_length", "1024", "--max_steps", "8",
                                             "--output_dir", out),
                          options=("--profile", "hf", "--ladder", "smaller-batch"))
    report = read_report(run_dir)
    assert report["outcome"] == "rewrite-refused", failure(result)
    assert result.returncode == report["exit_code"] != 0
    assert "not used by the HfArgumentParser" in report["attempts"][-1]["evidence"]
    assert "--per_device_train_batch_size" in report["attempts"][-1]["evidence"]
    assert "refused sparkguard's rewrite" in result.stderr.decode()


def test_unsloth_cli_drops_load_in_4bit_and_never_gets_a_resume_flag(tmp_path):
    out = tmp_path / "out"
    result, run_dir = run(tmp_path, *capped(PYTHON, BIN / "unsloth-cli.py", "--model_name", "unsloth/llama-3-8b",
                                             "--load_in_4bit", "--per_device_train_batch_size", "2",
                                             "--max_seq_length", "512", "--max_steps", "4", "--output_dir", out),
                          options=("--ladder", "bf16-lora"), STANDIN_QLORA_MB="640", STANDIN_WARMUP_STEPS="0")
    assert result.returncode == 0, failure(result)
    report = read_report(run_dir)
    assert report["profile"] == "unsloth-cli"
    assert "--load_in_4bit" not in report["attempts"][1]["argv"]
    assert not any(a.startswith("--resume") for a in report["attempts"][1]["argv"])
    assert [r["qlora"] for r in read_attempts(out)] == [True, False]


def test_no_rung_reaches_a_wrapper_script_and_sparkguard_says_so_before_launch(tmp_path):
    out = tmp_path / "out"
    script = tmp_path / "train.sh"
    script.write_text(f"#!/bin/sh\nexec prlimit --as=1010000000 {PYTHON} {TRAINERS / 'hf_train.py'} --output_dir {out} "
                      f"--per_device_train_batch_size 8 --max_seq_length 1024 --width 8 --max_steps 4 --save_steps 2\n")
    result, run_dir = run(tmp_path, "bash", script, options=("--ladder", "shorter-packing,smaller-batch"))
    assert result.returncode == 4, failure(result)
    stderr = result.stderr.decode()
    assert "no rung of the OOM ladder can change what this trainer runs" in stderr
    report = read_report(run_dir)
    assert report["profile"] == "generic"
    assert len(report["attempts"]) == 1  # no relaunch of the same configuration
    skipped = {s["rung"]: s["why"] for s in report["skipped_at_end"]}
    assert "train.sh has none" in skipped["smaller-batch"]
    assert "ladder-unreachable" in [e["event"] for e in read_events(run_dir)]


def test_a_wrapper_script_that_reads_sparkguard_variables_gets_the_rungs(tmp_path):
    out = tmp_path / "out"
    script = tmp_path / "train.sh"
    script.write_text(f"#!/bin/sh\nexec prlimit --as={CAP} {PYTHON} {TRAINERS / 'trl_sft.py'} --output_dir {out} "
                      f"--dataset_name d --max_steps 6 --save_steps 2 --max_length 1024 "
                      f"--per_device_train_batch_size ${{SPARKGUARD_BATCH_SIZE:-16}} "
                      f"--gradient_accumulation_steps ${{SPARKGUARD_GRAD_ACCUM:-1}}\n")
    result, run_dir = run(tmp_path, "bash", script, options=("--batch", 16, "--grad-accum", 1, "--ladder", "smaller-batch"))
    assert result.returncode == 0, failure(result)
    assert [(r[0], r[1]) for r in ran(out)] == [(16, 1), (8, 2), (4, 4)]


def test_a_checkpoint_left_by_an_earlier_run_is_not_a_resume_point(tmp_path):
    out = tmp_path / "out"
    stale = out / "checkpoint-20"
    stale.mkdir(parents=True)
    (stale / "trainer_state.json").write_text(json.dumps({"global_step": 20, "train_batch_size": 16}))
    week_ago = time.time() - 7 * 86400
    os.utime(stale / "trainer_state.json", (week_ago, week_ago))
    result, run_dir = run(tmp_path, *capped(PYTHON, TRAINERS / "trl_sft.py", "--dataset_name", "d",
                                             "--per_device_train_batch_size", "16", "--max_length", "1024",
                                             "--max_steps", "8", "--save_steps", "2", "--output_dir", out),
                          options=("--ladder", "smaller-batch"))
    assert result.returncode == 0, failure(result)
    attempts = read_report(run_dir)["attempts"]
    assert attempts[1]["resumed_from"].endswith("checkpoint-4")
    assert any("checkpoint-20 was written before this run started" in n for n in attempts[1]["notes"])
