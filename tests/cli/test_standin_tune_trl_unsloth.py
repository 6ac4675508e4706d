"""The torchtune, TRL and Unsloth stand-ins (tests/trainers/bin/{tune,trl,unsloth,unsloth-cli.py},
tests/trainers/trl_sft.py, trl_sft_v07.py), run directly, without sparkguard: they must resolve their
configuration, fail, checkpoint and resume as the real trainers do, or sparkguard's tests prove nothing."""
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import PYTHON, TRAINERS, base_env

BIN = TRAINERS / "bin"
ALLOCATOR_ERROR = "DefaultCPUAllocator: can't allocate memory"


def launch(*argv, cwd, env=None, timeout=60):
    """Run one stand-in in its own session; kill the whole group if it outlives the test."""
    proc = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env or base_env(STANDIN_STEP_SLEEP="0"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def attempts(output_dir):
    path = Path(output_dir) / "attempts.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --- torchtune -----------------------------------------------------------------------------------

TUNE_CFG = """\
output_dir: {out}
batch_size: 2
gradient_accumulation_steps: 1
epochs: 1
max_steps_per_epoch: 2
resume_from_checkpoint: False
seed: 7
dtype: bf16
model:
  _component_: torchtune.models.llama3_1.qlora_llama3_1_8b
  lora_rank: 8
tokenizer:
  _component_: torchtune.models.llama3.llama3_tokenizer
  max_seq_len: 512
dataset:
  _component_: torchtune.datasets.alpaca_dataset
  packed: False
optimizer:
  _component_: torch.optim.AdamW
  lr: 3e-4
checkpointer:
  _component_: torchtune.training.FullModelHFCheckpointer
  output_dir: ${{output_dir}}
metric_logger:
  _component_: torchtune.training.metric_logging.StdoutLogger
"""


@pytest.fixture
def tune_cfg(tmp_path):
    out = tmp_path / "out"
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(TUNE_CFG.format(out=out))
    return cfg, out


def tune(tmp_path, *args, **kw):
    return launch(BIN / "tune", "run", *args, cwd=tmp_path, **kw)


def test_tune_overrides_win_components_and_deletes(tmp_path, tune_cfg):
    cfg, out = tune_cfg
    r = tune(tmp_path, "lora_finetune_single_device", "--config", cfg, "batch_size=4", "tokenizer.max_seq_len=256",
             "model=torchtune.models.llama3_1.lora_llama3_1_8b", "~dataset.packed")
    assert r.returncode == 0, r.stderr
    (a,) = attempts(out)
    assert (a["batch"], a["seq"], a["qlora"], a["packing"], a["trainer"]) == (4, 256, False, False, "torchtune")
    assert "_component_: torchtune.models.llama3_1.lora_llama3_1_8b" in r.stderr  # the resolved config it logged
    assert "packed" not in r.stderr.split("dataset:")[1].split("dtype:")[0]
    assert "output_dir: " + str(out) in r.stderr  # ${output_dir} resolved
    assert "1|2|Loss: " in r.stderr and "2/2 [" in r.stderr
    assert [line.split(" | ")[0] for line in r.stdout.splitlines() if line.startswith("Step ")] == ["Step 1", "Step 2"]
    assert "lr:0.0003 tokens_per_second_per_gpu:" in r.stdout
    # one epoch of one: the final checkpoint, and no recipe state
    assert (out / "epoch_0" / "adapter_model.pt").is_file() and not (out / "recipe_state").exists()


def test_tune_qlora_quantize_base_and_v02_seq_key(tmp_path, tune_cfg):
    cfg, out = tune_cfg
    r = tune(tmp_path, "lora_finetune_single_device", "--config", cfg, "model.quantize_base=False",
             "~tokenizer.max_seq_len", "dataset.max_seq_len=128")
    assert r.returncode == 0, r.stderr
    (a,) = attempts(out)
    assert (a["qlora"], a["seq"]) == (False, 128)


@pytest.mark.parametrize("args, message", [
    (["lora_finetune_single_device", "--config", "{cfg}", "output_dir=/a=b"],
     "ValueError: Command-line overrides must be in the form of key=value, got output_dir=/a=b"),
    (["lora_finetune_single_device", "--config", "{cfg}", "dataset.packed=True", "~tokenizer.max_seq_len"],
     "ValueError: PackedDataset requires a max_seq_len to be set on the tokenizer."),
    (["full_finetune_single_device", "--config", "{cfg}", "optimizer_in_bwd=True", "gradient_accumulation_steps=2"],
     "RuntimeError: Gradient accumulation is not supported with optimizer in bwd."),
    (["lora_finetune_single_device", "--config", "llama3_1/8B_lora_single_device"],
     "FileNotFoundError: [Errno 2] No such file or directory: "),  # OmegaConf.load reports the absolute path
    (["lora_finetune_single_device", "--config", "{cfg}", "resume_from_checkpoint=True"],
     "TypeError: join() argument must be str, bytes, or os.PathLike object, not 'NoneType'"),
    (["lora_finetune_single_device", "--config", "{cfg}", "--batch_size", "4"],
     "ValueError: Additional flag arguments not supported: ['--batch_size']"),
    (["lora_finetune_single_device", "batch_size=4"], "error: The '--config' argument is required."),
    (["--nproc_per_node", "2", "lora_finetune_single_device", "--config", "{cfg}"],
     "Recipe lora_finetune_single_device does not support distributed training.Please run without torchrun commands."),
])
def test_tune_real_errors(tmp_path, tune_cfg, args, message):
    cfg, out = tune_cfg
    r = tune(tmp_path, *[a.format(cfg=cfg) for a in args])
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert attempts(out) == []  # it died before training


def test_tune_resume_after_last_complete_epoch(tmp_path, tune_cfg):
    cfg, out = tune_cfg
    first = tune(tmp_path, "lora_finetune_single_device", "--config", cfg, "epochs=3")
    assert first.returncode == 0, first.stderr
    # epochs 0 and 1 were intermediate (recipe state written after epoch 1), epoch 2 final (no state)
    assert sorted(p.name for p in out.glob("epoch_*")) == ["epoch_0", "epoch_1", "epoch_2"]
    second = tune(tmp_path, "lora_finetune_single_device", "--config", cfg, "epochs=3", "resume_from_checkpoint=True",
                  "max_steps_per_epoch=3", "batch_size=1", "gradient_accumulation_steps=2")
    assert second.returncode == 0, second.stderr
    a = attempts(out)[-1]
    assert (a["start_step"], a["batch"], a["accum"]) == (4, 1, 2)  # 2 epochs x 2 steps (checkpoint's value)
    assert a["resumed_from"] == str(out / "recipe_state" / "recipe_state.pt")
    assert "using the checkpoint value: 2" in second.stderr
    assert "3|5|Loss: " in second.stderr and "3|6|Loss: " in second.stderr and "1|1|Loss" not in second.stderr


def test_tune_dies_with_the_allocator_error_under_prlimit(tmp_path, tune_cfg):
    cfg, out = tune_cfg
    r = launch("prlimit", "--as=3000000000", BIN / "tune", "run", "lora_finetune_single_device", "--config", cfg,
               "batch_size=64", "tokenizer.max_seq_len=4096", cwd=tmp_path)
    assert r.returncode == 1
    assert ALLOCATOR_ERROR in r.stderr
    assert attempts(out)[0]["batch"] == 64  # recorded before the first step


# --- trl sft ----------------------------------------------------------------------------------------

def trl_cfg(tmp_path, extra=""):
    cfg = tmp_path / "sft.yaml"
    cfg.write_text(f"model_name_or_path: Qwen/Qwen2-0.5B\ndataset_name: trl-lib/Capybara\n"
                   f"per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\noutput_dir: {tmp_path / 'out'}\n"
                   f"max_steps: 4\nsave_steps: 2\nuse_peft: true\n{extra}")
    return cfg


def test_trl_yaml_defaults_then_cli_flags_in_every_spelling(tmp_path):
    cfg = trl_cfg(tmp_path, "load_in_4bit: true\n")
    r = launch(BIN / "trl", "sft", "--config", cfg, "--per-device-train-batch-size", "2", "--max_length=256",
               "--gradient_accumulation_steps", "3", "--gradient_accumulation_steps", "5", "--load_in_4bit", "false",
               "--packing", "--logging-steps", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (a,) = attempts(tmp_path / "out")
    assert (a["batch"], a["accum"], a["seq"], a["qlora"], a["packing"], a["dtype"]) == (2, 5, 256, False, True, "float32")
    assert a["config_file"] == str(cfg)
    assert "'mean_token_accuracy': '0.5'" in r.stdout and "4/4 [" in r.stderr
    assert sorted(p.name for p in (tmp_path / "out").glob("checkpoint-*")) == ["checkpoint-2", "checkpoint-4"]


def test_trl_current_defaults(tmp_path):
    r = launch(BIN / "trl", "sft", "--dataset_name", "x", "--output_dir", tmp_path / "out", "--max_steps", "2",
               "--use_peft", "--load_in_4bit", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (a,) = attempts(tmp_path / "out")
    assert (a["batch"], a["accum"], a["seq"], a["qlora"], a["dtype"]) == (8, 1, 1024, True, "float32")


@pytest.mark.parametrize("args, yaml_extra, message", [
    (["--max_seq_length", "2048"], "", "Accelerate launch command: error: unrecognized arguments: --max_seq_length"),
    ([], "max_seq_length: 2048\n", "Accelerate launch command: error: unrecognized arguments: --max_seq_length"),
    (["--load_in_4bit", "--use_peft", "False"], "",
     "ValueError: You cannot perform fine-tuning on purely quantized models."),
    (["--load_in_4bit", "--load_in_8bit"], "", "ValueError: You can't use 8 bit and 4 bit precision at the same time"),
    (["--bf16"], "", "error: argument --bf16: expected one argument"),
])
def test_trl_real_errors(tmp_path, args, yaml_extra, message):
    cfg = trl_cfg(tmp_path, yaml_extra)
    r = launch(BIN / "trl", "sft", "--config", cfg, *args, cwd=tmp_path)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
    assert attempts(tmp_path / "out") == []


def test_trl_config_equals_path_is_not_a_config(tmp_path):
    r = launch(BIN / "trl", "sft", f"--config={trl_cfg(tmp_path)}", cwd=tmp_path)
    assert r.returncode == 2 and "unrecognized arguments: --config=" in r.stderr


def test_trl_ignores_resume_from_checkpoint(tmp_path):
    cfg = trl_cfg(tmp_path)
    first = launch(BIN / "trl", "sft", "--config", cfg, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = launch(BIN / "trl", "sft", "--config", cfg, "--resume_from_checkpoint", tmp_path / "out" / "checkpoint-2",
                    cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert [a["start_step"] for a in attempts(tmp_path / "out")] == [0, 0]
    assert attempts(tmp_path / "out")[1]["resumed_from"] is None


def test_trl_env_is_exported_and_the_child_dies_of_the_allocator(tmp_path):
    cfg = trl_cfg(tmp_path, "env:\n  STANDIN_KB_PER_TOKEN: 65536\n")  # 64 MiB a token: any batch is too big
    r = launch("prlimit", "--as=3000000000", BIN / "trl", "sft", "--config", cfg, "--max_length", "64", cwd=tmp_path)
    assert r.returncode == 1
    assert ALLOCATOR_ERROR in r.stderr
    assert "subprocess.CalledProcessError: Command '[" in r.stderr  # accelerate's launcher reports the child
    assert attempts(tmp_path / "out")[0]["seq"] == 64


# --- trl_sft.py (a user's copy of scripts/sft.py) and the TRL 0.7 example ---------------------------

def test_trl_sft_script_resumes_and_restores_the_checkpoint_batch_size(tmp_path):
    script = TRAINERS / "trl_sft.py"
    out = tmp_path / "out"
    first = launch(PYTHON, script, "--dataset_name", "x", "--output_dir", out, "--max_steps", "4", "--save_steps", "2",
                   "--per_device_train_batch_size", "4", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = launch(PYTHON, script, "--dataset_name", "x", "--output_dir", out, "--max_steps", "6", "--save_steps", "2",
                    "--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "2",
                    "--resume_from_checkpoint", out / "checkpoint-4", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    a = attempts(out)[-1]
    assert (a["start_step"], a["batch"], a["accum"]) == (4, 4, 2)  # train_batch_size from trainer_state.json
    assert "per_device_train_batch_size: 2 (from args) != 4 (from trainer_state.json)" in second.stderr
    assert json.loads((out / "checkpoint-6" / "trainer_state.json").read_text())["train_batch_size"] == 4


@pytest.mark.parametrize("args, message", [
    (["--dataset_name", "x", "--overwrite_output_dir"],
     "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--overwrite_output_dir']"),
    (["--dataset_name", "x", "--resume_from_checkpoint", "True"], "ValueError: Can't find a valid checkpoint at True"),
    (["--output_dir", "o"], "ValueError: Either `datasets` or `dataset_name` must be provided."),
])
def test_trl_sft_script_errors(tmp_path, args, message):
    r = launch(PYTHON, TRAINERS / "trl_sft.py", *args, cwd=tmp_path)
    assert r.returncode == 1 and message in r.stderr, r.stderr


def test_trl_sft_script_reads_a_json_file(tmp_path):
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"dataset_name": "x", "output_dir": str(tmp_path / "out"), "max_steps": 2,
                                "per_device_train_batch_size": 3, "max_length": 128}))
    r = launch(PYTHON, TRAINERS / "trl_sft.py", args, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (a,) = attempts(tmp_path / "out")
    assert (a["batch"], a["seq"], a["config_file"]) == (3, 128, str(args))


def test_trl_v07_example_flags_and_no_resume(tmp_path):
    script = TRAINERS / "trl_sft_v07.py"
    r = launch(PYTHON, script, "--batch_size", "2", "--seq_length", "128", "--load_in_4bit", "--use_peft",
               "--max_steps", "3", "--output_dir", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (a,) = attempts(tmp_path / "out")
    assert (a["batch"], a["accum"], a["seq"], a["qlora"]) == (2, 16, 128, True)
    assert "{'loss': 0.9" in r.stdout  # transformers 4.3x: raw floats
    bad = launch(PYTHON, script, "--resume_from_checkpoint", tmp_path / "out" / "checkpoint-3", cwd=tmp_path)
    assert bad.returncode == 1
    assert "Some specified arguments are not used by the HfArgumentParser: ['--resume_from_checkpoint'" in bad.stderr


# --- Unsloth -----------------------------------------------------------------------------------------

def test_unsloth_cli_defaults_flags_and_no_resume(tmp_path):
    out = tmp_path / "outputs"
    r = launch(BIN / "unsloth-cli.py", "--max_steps", "3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (a,) = attempts(out)
    assert (a["batch"], a["accum"], a["seq"], a["qlora"], a["packing"]) == (2, 4, 2048, False, False)
    assert "Total steps = 3" in r.stderr and "Batch size per device = 2 | Gradient accumulation steps = 4" in r.stderr
    assert [p.name for p in out.glob("checkpoint-*")] == ["checkpoint-3"]  # save_steps 500: the final save only
    r = launch(BIN / "unsloth-cli.py", "--max_steps", "2", "--load_in_4bit", "--per_device_train_batch_size", "1",
               "--max_seq_length", "512", "--packing", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (attempts(out)[-1]["qlora"], attempts(out)[-1]["seq"], attempts(out)[-1]["packing"]) == (True, 512, True)
    for bad, message in ((["--resume_from_checkpoint", "outputs/checkpoint-3"], "unrecognized arguments: --resume_from"),
                         (["--load_in_4bit", "False"], "unrecognized arguments: False")):
        r = launch(BIN / "unsloth-cli.py", *bad, cwd=tmp_path)
        assert r.returncode == 2 and message in r.stderr, r.stderr


def test_unsloth_train_yaml_then_flags(tmp_path):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"model: unsloth/Llama-3.2-1B\ndata:\n  dataset: yahma/alpaca-cleaned\ntraining:\n"
                   f"  max_seq_length: 512\n  batch_size: 4\n  max_steps: 3\n  output_dir: {tmp_path / 'out'}\n")
    r = launch(BIN / "unsloth", "train", "--config", cfg, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = launch(BIN / "unsloth", "train", "--config", cfg, "--batch-size", "2", "--gradient-accumulation-steps", "8",
               "--max-seq-length", "256", "--no-load-in-4bit", "--save-steps", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    first, second = attempts(tmp_path / "out")
    assert (first["batch"], first["accum"], first["seq"], first["qlora"]) == (4, 4, 512, True)  # load_in_4bit: True
    assert (second["batch"], second["accum"], second["seq"], second["qlora"]) == (2, 8, 256, False)
    assert sorted(p.name for p in (tmp_path / "out").glob("checkpoint-*")) == ["checkpoint-1", "checkpoint-2",
                                                                               "checkpoint-3"]
    assert "{'loss': '" in r.stdout and "3/3 [" not in r.stderr  # disable_tqdm: dicts only


@pytest.mark.parametrize("args, status, message", [
    (["--config", "{cfg}", "--resume-from-checkpoint", "x"], 2, "No such option: --resume-from-checkpoint"),
    (["--config", "{dir}/missing.yaml"], 2, "Error: Config file not found: {dir}/missing.yaml"),
    (["--dataset", "x"], 2, "Error: provide --model or set model in --config"),
])
def test_unsloth_train_errors(tmp_path, args, status, message):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("model: m\ndata:\n  dataset: d\n")
    r = launch(BIN / "unsloth", "train", *[a.format(cfg=cfg, dir=tmp_path) for a in args], cwd=tmp_path)
    assert r.returncode == status and message.format(dir=tmp_path) in r.stderr, r.stderr


def test_unsloth_train_reports_the_allocator_error(tmp_path):
    r = launch("prlimit", "--as=3000000000", BIN / "unsloth", "train", "--model", "m", "--dataset", "d",
               "--batch-size", "64", "--max-seq-length", "4096", "--output-dir", tmp_path / "out", cwd=tmp_path)
    assert r.returncode == 1
    assert ALLOCATOR_ERROR in r.stderr and "Training error: [enforce fail" in r.stderr
