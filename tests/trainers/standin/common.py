"""What every stand-in trainer shares: a real PyTorch allocation per step, checkpoints in the
trainer's layout, progress lines in its format, and one JSON line per launch saying what it ran.

A stand-in resolves its configuration the way the real trainer does (its own module), then calls
train(). Each step allocates and touches batch x seq x $STANDIN_KB_PER_TOKEN KiB (default 64) of
activations, plus $STANDIN_QLORA_MB MiB (default 0) of dequantised weights when it runs QLoRA, so
under `prlimit --as=...` a configuration that is too big dies with PyTorch's own
"DefaultCPUAllocator: can't allocate memory", exactly as the real trainer would. The first
$STANDIN_WARMUP_STEPS steps (default 0) use a quarter of the length, as packed batches that
fill up, so a run that does not fit dies mid-training after writing checkpoints.

OUTPUT_DIR/attempts.jsonl gets one line per launch:
  {"trainer", "pid", "batch", "accum", "seq", "packing", "qlora", "dtype", "start_step",
   "resumed_from", "argv", "config_file"}
batch is what the trainer really ran with (a resumed HF trainer takes train_batch_size from
trainer_state.json), start_step the step it resumed at (0: from scratch).
"""
import json
import os
import re
import sys
import time

import torch

torch.set_num_threads(1)


def kib_per_token():
    return int(os.environ.get("STANDIN_KB_PER_TOKEN", "64"))


def qlora_mib():
    return int(os.environ.get("STANDIN_QLORA_MB", "0"))


def record_attempt(output_dir, **fields):
    os.makedirs(output_dir, exist_ok=True)
    fields = {"pid": os.getpid(), "argv": sys.argv, **fields}
    with open(os.path.join(output_dir, "attempts.jsonl"), "a") as f:
        f.write(json.dumps(fields) + "\n")


# --- Hugging Face layout: OUTPUT_DIR/checkpoint-N/ with trainer_state.json written last ---------

def hf_checkpoints(output_dir):
    """(step, path) of every complete checkpoint-N, oldest first (transformers' get_last_checkpoint
    takes the largest N; trainer_state.json missing means the save was cut short)."""
    found = []
    if os.path.isdir(output_dir):
        for name in os.listdir(output_dir):
            m = re.fullmatch(r"checkpoint-(\d+)", name)
            path = os.path.join(output_dir, name)
            if m and os.path.isfile(os.path.join(path, "trainer_state.json")):
                found.append((int(m.group(1)), path))
    return sorted(found)


def last_hf_checkpoint(output_dir):
    found = hf_checkpoints(output_dir)
    return found[-1][1] if found else None


def load_hf_state(checkpoint):
    """Raises as Trainer.train does for a path that is not a checkpoint."""
    state_file = os.path.join(checkpoint, "trainer_state.json")
    if not os.path.isfile(state_file):
        raise ValueError(f"Can't find a valid checkpoint at {checkpoint}")
    with open(state_file) as f:
        return json.load(f)


def save_hf_checkpoint(output_dir, step, max_steps, batch, save_steps, logging_steps, loss):
    path = os.path.join(output_dir, f"checkpoint-{step}")
    os.makedirs(path, exist_ok=True)
    torch.save({"step": step}, os.path.join(path, "optimizer.pt"))
    state = {"global_step": step, "max_steps": max_steps, "train_batch_size": batch, "save_steps": save_steps,
             "logging_steps": logging_steps, "eval_steps": None, "log_history": [{"step": step, "loss": loss}]}
    tmp = os.path.join(path, "trainer_state.json.tmp")
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, os.path.join(path, "trainer_state.json"))


# --- torchtune layout: OUTPUT_DIR/epoch_N/ and OUTPUT_DIR/recipe_state/recipe_state.pt ---------

def torchtune_last_epoch(output_dir):
    """The epoch the newest complete torchtune checkpoint ends, or None."""
    state = os.path.join(output_dir, "recipe_state", "recipe_state.pt")
    if not os.path.isfile(state):
        return None
    return int(torch.load(state)["epochs_run"])


def save_torchtune_checkpoint(output_dir, epoch, global_step):
    epoch_dir = os.path.join(output_dir, f"epoch_{epoch - 1}")
    os.makedirs(epoch_dir, exist_ok=True)
    torch.save({"lora": torch.zeros(4)}, os.path.join(epoch_dir, "adapter_model.pt"))
    os.makedirs(os.path.join(output_dir, "recipe_state"), exist_ok=True)
    tmp = os.path.join(output_dir, "recipe_state", "recipe_state.pt.tmp")
    torch.save({"epochs_run": epoch, "global_step": global_step}, tmp)
    os.replace(tmp, os.path.join(output_dir, "recipe_state", "recipe_state.pt"))


# --- the step ---------------------------------------------------------------------------------

def warm_up_blas():
    """OpenBLAS maps its work buffers at its first call: do it before memory gets tight."""
    torch.ones(64, 64) @ torch.ones(64, 64)


def step_memory(batch, seq, qlora, step=None):
    """Activations for batch x seq tokens (and dequantised weights for QLoRA), touched."""
    if step is not None and step <= int(os.environ.get("STANDIN_WARMUP_STEPS", "0")):
        seq = max(8, seq // 4)
    floats = batch * seq * kib_per_token() * 256
    activations = torch.ones(floats)
    scratch = torch.ones(qlora_mib() * (1 << 18)) if qlora and qlora_mib() else None
    loss = float(activations[:1024].sum().item()) / 1024.0 / (1 + 0.01 * batch)
    del activations, scratch
    return loss


def hf_progress(step, total, started):
    rate = step / max(time.time() - started, 1e-6)
    bar = "#" * (10 * step // total)
    sys.stderr.write(f"\r{100 * step // total:3d}%|{bar:<10}| {step}/{total} [00:00<00:00, {rate:.2f}it/s]")
    sys.stderr.flush()


def step_sleep():
    time.sleep(float(os.environ.get("STANDIN_STEP_SLEEP", "0.02")))
