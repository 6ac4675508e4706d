"""The Axolotl, LLaMA-Factory and accelerate stand-ins (tests/trainers/bin) behave like the real entry points
as far as sparkguard can see: how the effective configuration is resolved (file, overrides, defaults,
validation), where checkpoints go, when a relaunch resumes and with which batch, and how an oversized
step dies under an address-space cap. Run directly, without sparkguard."""
import json
import os
import subprocess

import pytest

from conftest import TRAINERS, base_env, read_attempts

BIN = TRAINERS / "bin"
# Measured: with STANDIN_KB_PER_TOKEN=64 (the default) both stand-ins fit batch 4 x length 512 and die on
# 8 x 1024 (512 MiB of activations) between about 1000 and 1200 MiB of address space.
CAP = 1100 * 1024 * 1024


def env(**extra):
    e = base_env(STANDIN_STEP_SLEEP="0", **extra)
    e["PATH"] = f"{BIN}:{e['PATH']}"
    return e


def run(*args, cwd, cap=None, timeout=60, **extra):
    cmd = (["prlimit", f"--as={cap}"] if cap else []) + [str(a) for a in args]
    return subprocess.run(cmd, cwd=cwd, env=env(**extra), capture_output=True, text=True, timeout=timeout)


def write_yaml(path, text):
    path.write_text(text)
    return path


def last(output_dir):
    return read_attempts(output_dir)[-1]


def checkpoints(output_dir):
    return sorted(int(p.name.split("-")[1]) for p in output_dir.glob("checkpoint-*"))


# --- Axolotl -------------------------------------------------------------------------------------

AXOLOTL_QLORA = """\
base_model: NousResearch/Llama-3.2-1B
adapter: qlora
load_in_4bit: true
micro_batch_size: 2
gradient_accumulation_steps: 3
sample_packing: true
lora_model_dir:
resume_from_checkpoint:
"""


def test_axolotl_overrides_defaults_layout_and_output(tmp_path):
    cfg = write_yaml(tmp_path / "qlora.yml", AXOLOTL_QLORA)
    r = run("axolotl", "train", cfg, "--micro-batch-size", "4", "--no-sample-packing", "--micro_batch_size", "9",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "model-out"  # output_dir default
    a = last(out)
    # CLI over YAML; the underscore spelling is not an axolotl option: it goes to the launcher, not the config
    assert (a["batch"], a["accum"], a["packing"], a["qlora"]) == (4, 3, False, True)
    assert a["seq"] == 512 and a["start_step"] == 0 and a["resumed_from"] is None  # sequence_len default
    assert a["trainer"] == "axolotl" and a["base_model"] == "NousResearch/Llama-3.2-1B"
    assert "'--micro_batch_size', '9'" in r.stderr
    assert checkpoints(out) == [2, 4, 6, 8]  # stand-in defaults: max_steps 8, save_steps 2
    state = json.loads((out / "checkpoint-8" / "trainer_state.json").read_text())
    assert state["global_step"] == 8 and state["train_batch_size"] == 4
    assert (out / "adapter_model.safetensors").exists()
    assert "] [INFO] [axolotl.train] Starting trainer..." in r.stdout
    assert "8/8 [" in r.stderr.replace("\r", "\n")  # HF tqdm bar on stderr
    assert "{'loss': '" in r.stdout  # log dicts on stdout, newer transformers' string format
    assert "Starting trainer..." in (out / "debug.log").read_text()


@pytest.mark.parametrize("yaml_text, args, message", [
    ("micro_batch_size: 2\ngradient_accumulation_steps: 4\nbatch_size: 16\n", [],
     "please set only one of gradient_accumulation_steps or batch_size"),
    ("micro_batch_size: 2\n", [], "At least two of micro_batch_size, gradient_accumulation_steps, batch_size must be set"),
    (AXOLOTL_QLORA, ["--no-load-in-4bit"], "Require cfg.load_in_4bit to be True for qlora"),
    ("micro_batch_size: 1\ngradient_accumulation_steps: 1\nload_in_4bit: true\n", [],
     "load_in_8bit and load_in_4bit are not supported without setting an adapter for training."),
])
def test_axolotl_validation_errors(tmp_path, yaml_text, args, message):
    cfg = write_yaml(tmp_path / "c.yml", yaml_text + f"output_dir: {tmp_path / 'out'}\n")
    r = run("axolotl", "train", cfg, *args, cwd=tmp_path)
    assert r.returncode == 1
    assert "pydantic_core._pydantic_core.ValidationError: 1 validation error for AxolotlConfigWCapabilities" in r.stderr
    assert message in r.stderr
    assert not (tmp_path / "out" / "attempts.jsonl").exists()


def test_axolotl_total_batch_size_leaves_accumulation_at_its_default(tmp_path):
    # batch_size + micro_batch_size: pydantic fills gradient_accumulation_steps=1 before normalize_config,
    # so `batch_size // micro_batch_size` never applies (axolotl@067b021c8 schemas/training.py, utils/config).
    cfg = write_yaml(tmp_path / "c.yml", f"micro_batch_size: 4\nbatch_size: 16\nmax_steps: 1\noutput_dir: {tmp_path / 'o'}\n")
    r = run("axolotl", "train", cfg, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(tmp_path / "o")
    assert (a["batch"], a["accum"], a["batch_size_total"]) == (4, 1, 16)


def test_axolotl_resume_rules(tmp_path):
    out = tmp_path / "out"
    cfg = write_yaml(tmp_path / "c.yml", AXOLOTL_QLORA + f"output_dir: {out}\nmax_steps: 4\nsave_steps: 2\n")
    assert run("axolotl", "train", cfg, cwd=tmp_path).returncode == 0
    assert checkpoints(out) == [2, 4]
    # without resume_from_checkpoint or auto_resume_from_checkpoints, existing checkpoints are ignored
    r = run("axolotl", "train", cfg, "--max-steps", "2", cwd=tmp_path)
    assert r.returncode == 0 and last(out)["start_step"] == 0
    assert "Starting trainer" in (out / "debug.log").read_text()  # truncated: only this run
    assert (out / "debug.log").read_text().count("Starting trainer") == 2  # console copy + file-only line
    # auto-resume: the largest checkpoint-N, and the batch the checkpoint was trained with
    r = run("axolotl", "train", cfg, "--auto-resume-from-checkpoints", "--max-steps", "6", "--micro-batch-size", "1",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(out)
    assert (a["start_step"], a["batch"], a["resumed_from"]) == (4, 2, str(out / "checkpoint-4"))
    assert f"Using auto-resume functionality to resume from checkpoint at {out / 'checkpoint-4'}" in r.stdout
    assert "per_device_train_batch_size: 1 (from args) != 2 (from trainer_state.json)" in r.stderr
    assert (out / "debug.log").read_text().count("Starting trainer") == 4  # appended on resume
    # the explicit path wins over auto-resume
    r = run("axolotl", "train", cfg, "--auto-resume-from-checkpoints", "--resume-from-checkpoint",
            out / "checkpoint-2", "--max-steps", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (last(out)["start_step"], last(out)["resumed_from"]) == (2, str(out / "checkpoint-2"))
    # determine_last_checkpoint does not check completeness: a cut-short save is picked, and fails
    (out / "checkpoint-10").mkdir()
    r = run("axolotl", "train", cfg, "--auto-resume-from-checkpoints", "--max-steps", "12", cwd=tmp_path)
    assert r.returncode == 1
    assert f"ValueError: Can't find a valid checkpoint at {out / 'checkpoint-10'}" in r.stderr


def test_axolotl_legacy_entry_through_accelerate(tmp_path):
    out = tmp_path / "out"
    cfg = write_yaml(tmp_path / "c.yml", AXOLOTL_QLORA + f"output_dir: {out}\nmax_steps: 2\n")
    r = run("accelerate", "launch", "--num_processes", "2", "--gradient_accumulation_steps", "7", "--mixed_precision",
            "bf16", "-m", "axolotl.cli.train", cfg, "--micro_batch_size=3", "--sequence-len=128",
            "--sample_packing=False", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(out)
    # fire: YAML names with underscores (dashes accepted too); accelerate keeps its own options
    assert (a["batch"], a["seq"], a["packing"], a["accum"]) == (3, 128, False, 3)
    assert a["argv"][1:] == [str(cfg), "--micro_batch_size=3", "--sequence-len=128", "--sample_packing=False"]


def test_axolotl_allocator_error_under_address_space_cap(tmp_path):
    cfg = write_yaml(tmp_path / "c.yml", f"micro_batch_size: 8\ngradient_accumulation_steps: 1\nsequence_len: 1024\n"
                                         f"max_steps: 2\noutput_dir: {tmp_path / 'big'}\n")
    r = run("axolotl", "train", cfg, cwd=tmp_path, cap=CAP)
    assert r.returncode == 1
    assert "DefaultCPUAllocator: can't allocate memory" in r.stderr
    assert len(read_attempts(tmp_path / "big")) == 1  # recorded before the first step
    r = run("axolotl", "train", cfg, "--micro-batch-size", "4", "--sequence-len", "512", "--output-dir",
            tmp_path / "small", cwd=tmp_path, cap=CAP)
    assert r.returncode == 0, r.stderr[-2000:]


# --- LLaMA-Factory -------------------------------------------------------------------------------

LF = """\
model_name_or_path: Qwen/Qwen3-0.6B
stage: sft
do_train: true
finetuning_type: lora
quantization_bit: 4
dataset: alpaca_en_demo
per_device_train_batch_size: 2
gradient_accumulation_steps: 2
overwrite_output_dir: false
resume_from_checkpoint: null
save_steps: 2
logging_steps: 1
bf16: true
"""


def lf_yaml(tmp_path, out, extra=""):
    return write_yaml(tmp_path / "lf.yaml", LF + f"output_dir: {out}\n" + extra)


def test_llamafactory_overrides_and_defaults(tmp_path):
    out = tmp_path / "out"
    cfg = lf_yaml(tmp_path, out, "max_steps: 2\n")
    r = run("llamafactory-cli", "train", cfg, "per_device_train_batch_size=4", "quantization_bit=null", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(out)
    assert (a["batch"], a["accum"], a["seq"], a["packing"], a["qlora"], a["dtype"]) == (4, 2, 2048, False, False, "bf16")
    assert a["trainer"] == "llamafactory" and a["config_file"] == str(cfg)
    assert checkpoints(out) == [2]
    logs = [json.loads(line) for line in (out / "trainer_log.jsonl").read_text().splitlines()]
    assert [x["current_steps"] for x in logs] == [1, 2, 2] and logs[0]["total_steps"] == 2 and "loss" in logs[0]
    assert "[INFO|trainer.py:" in r.stderr and ">> ***** Running training *****" in r.stderr
    # stage pt packs by default (packing None -> stage == "pt"); max_steps unset -> stand-in's 8
    r = run("llamafactory-cli", "train", cfg, "stage=pt", "max_steps=null", "save_steps=4", f"output_dir={tmp_path / 'pt'}",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert last(tmp_path / "pt")["packing"] is True and checkpoints(tmp_path / "pt") == [4, 8]


def test_llamafactory_rejects_unknown_keys(tmp_path):
    out = tmp_path / "out"
    cfg = lf_yaml(tmp_path, out, "max_steps: 1\n")
    r = run("llamafactory-cli", "train", cfg, "--max_steps", "6", cwd=tmp_path)
    assert r.returncode == 1
    assert "ValueError: Some keys are not used by the HfArgumentParser: ['--max_steps', '6']" in r.stderr
    bad = write_yaml(tmp_path / "bad.yaml", cfg.read_text() + "max_seq_length: 1024\n")
    r = run("llamafactory-cli", "train", bad, cwd=tmp_path)
    assert r.returncode == 1 and "Some keys are not used by the HfArgumentParser: ['max_seq_length']" in r.stderr
    r = run("llamafactory-cli", "train", "--model_name_or_path", "m", "--bogus", "1", cwd=tmp_path)
    assert r.returncode == 1
    assert "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--bogus', '1']" in r.stderr
    r = run("llamafactory-cli", "train", bad, cwd=tmp_path, ALLOW_EXTRA_ARGS="1")
    assert r.returncode == 0, r.stderr
    assert len(read_attempts(out)) == 1


def test_llamafactory_flags_without_yaml(tmp_path):
    out = tmp_path / "out"
    r = run("llamafactory-cli", "train", "--model_name_or_path", "m", "--do_train", "--dataset", "d", "--output_dir", out,
            "--per-device-train-batch-size", "2", "--cutoff_len", "256", "--max_steps", "2", "--save_steps", "1",
            "--quantization_bit", "4", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(out)
    assert (a["batch"], a["accum"], a["seq"], a["qlora"], a["config_file"]) == (2, 1, 256, True, None)
    assert checkpoints(out) == [1, 2]


def test_llamafactory_resume_rules(tmp_path):
    out = tmp_path / "out"
    cfg = lf_yaml(tmp_path, out, "max_steps: 4\n")
    assert run("llamafactory-cli", "train", cfg, cwd=tmp_path).returncode == 0
    assert checkpoints(out) == [2, 4]
    # output_dir exists, do_train, overwrite_output_dir false: get_last_checkpoint, batch from trainer_state.json
    r = run("llamafactory-cli", "train", cfg, "max_steps=6", "per_device_train_batch_size=1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    a = last(out)
    assert (a["start_step"], a["batch"], a["resumed_from"]) == (4, 2, str(out / "checkpoint-4"))
    assert f"llamafactory.hparams.parser:626 >> Resuming training from {out / 'checkpoint-4'}." in r.stdout
    assert [json.loads(x)["current_steps"] for x in (out / "trainer_log.jsonl").read_text().splitlines()][-3:] == [5, 6, 6]
    # an explicit path wins
    r = run("llamafactory-cli", "train", cfg, f"resume_from_checkpoint={out / 'checkpoint-2'}", "max_steps=3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert last(out)["start_step"] == 2
    # overwrite_output_dir: starts over and deletes trainer_log.jsonl first
    r = run("llamafactory-cli", "train", cfg, "overwrite_output_dir=true", "max_steps=2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert last(out)["start_step"] == 0 and "Previous trainer log in this folder will be deleted." in r.stdout
    assert [json.loads(x)["current_steps"] for x in (out / "trainer_log.jsonl").read_text().splitlines()] == [1, 2, 2]
    # weights but no checkpoint-N: the real refusal
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "adapter_model.safetensors").write_bytes(b"x")
    r = run("llamafactory-cli", "train", cfg, f"output_dir={lone}", cwd=tmp_path)
    assert r.returncode == 1
    assert ("ValueError: Output directory already exists and is not empty. Please set `overwrite_output_dir`."
            in r.stderr)
    # get_last_checkpoint does not check completeness either
    (out / "checkpoint-9").mkdir()
    r = run("llamafactory-cli", "train", cfg, "max_steps=12", cwd=tmp_path)
    assert r.returncode == 1 and f"Can't find a valid checkpoint at {out / 'checkpoint-9'}" in r.stderr


def test_llamafactory_quantization_needs_lora_and_allocator_error(tmp_path):
    out = tmp_path / "out"
    cfg = lf_yaml(tmp_path, out, "max_steps: 2\n")
    r = run("llamafactory-cli", "train", cfg, "finetuning_type=full", cwd=tmp_path)
    assert r.returncode == 1 and "ValueError: Quantization is only compatible with the LoRA or OFT method." in r.stderr
    r = run("llamafactory-cli", "train", cfg, "per_device_train_batch_size=8", "cutoff_len=1024", cwd=tmp_path, cap=CAP)
    assert r.returncode == 1 and "DefaultCPUAllocator: can't allocate memory" in r.stderr
    assert len(read_attempts(out)) == 1
    r = run("llamafactory-cli", "train", cfg, "per_device_train_batch_size=4", "cutoff_len=512",
            "overwrite_output_dir=true", cwd=tmp_path, cap=CAP)
    assert r.returncode == 0, r.stderr[-2000:]
