#!/usr/bin/python3
"""A real PyTorch training loop with Hugging Face Trainer-style flags, written for sparkguard's tests.

It trains a small model on synthetic tokens with real autograd and a real AdamW optimizer, so its
memory is real: activations grow with batch x sequence length, and under an address-space cap
(prlimit --as) PyTorch's own allocator fails with "DefaultCPUAllocator: can't allocate memory";
in a memory cgroup the kernel OOM-kills it. Like the Hugging Face Trainer it:
  - prints tqdm-style progress ("  5%|5  | 5/100 [...]") and log dicts ({'loss': ...}),
  - writes OUTPUT_DIR/checkpoint-N/ (model, optimizer, then trainer_state.json last),
  - on --resume_from_checkpoint PATH restores the model, optimizer and step, and takes
    train_batch_size from trainer_state.json over the command line (transformers >= 4.36 does).
Packing lengths vary: the first --warmup_steps steps use a quarter of --max_seq_length, the rest
use the full length, so a run that does not fit dies mid-training after writing checkpoints.
--load_in_4bit stands for QLoRA: each step also holds --qlora_overhead_mb of "dequantised" weight
copies (bitsandbytes dequantises each layer's weights per step), a transient bf16 LoRA lacks.
--reserve_kb_per_token reserves address space for batch x length tokens before the first matrix
multiplication (a framework's memory pool sized by the packing length): under a tight
address-space cap OpenBLAS then cannot map its work buffers and spins forever instead of failing.
Without it, one small matmul runs first, as every trainer in sparkguard's tests does.
--hang_at_step N sleeps forever at step N unless resumed (a hang without memory pressure).
Every attempt appends one JSON line to OUTPUT_DIR/attempts.jsonl saying what it ran with.
Under srun with HF_TRAIN_DDP=1 it is one rank of a real gloo DDP job (env:// rendezvous from
SLURM_PROCID, SLURM_NTASKS and SLURM_NODELIST; rank 0 writes the checkpoints), and with
HF_TRAIN_CAP_RANK=R HF_TRAIN_CAP=BYTES rank R re-executes itself under `prlimit --as=BYTES`.
"""
import argparse
import json
import os
import re
import socket
import sys
import time

import torch

torch.set_num_threads(1)


def str2bool(text):
    return str(text).lower() in ("1", "true", "yes", "t", "y")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="tiny")
    p.add_argument("--output_dir", required=True)
    p.add_argument("--per_device_train_batch_size", type=int, default=8)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--max_seq_length", type=int, default=1024)
    p.add_argument("--max_steps", type=int, default=40)
    p.add_argument("--save_steps", type=int, default=10)
    p.add_argument("--logging_steps", type=int, default=5)
    p.add_argument("--eval_steps", type=int, default=None)  # only written to trainer_state.json
    p.add_argument("--warmup_steps", type=int, default=0)
    p.add_argument("--learning_rate", type=float, default=1e-3)
    p.add_argument("--resume_from_checkpoint", default=None)
    p.add_argument("--load_in_4bit", nargs="?", const="true", default="false")
    p.add_argument("--bnb_4bit_quant_type", default="nf4")
    p.add_argument("--use_peft", nargs="?", const="true", default="false")
    p.add_argument("--qlora_overhead_mb", type=int, default=128)
    p.add_argument("--width", type=int, default=16, help="activation expansion: memory per token")
    p.add_argument("--step_sleep", type=float, default=0.0)
    p.add_argument("--reserve_kb_per_token", type=int, default=0)
    p.add_argument("--hang_at_step", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


class Block(torch.nn.Module):
    """A residual block whose saved activations are `width` times its hidden size per token."""

    def __init__(self, hidden, width):
        super().__init__()
        self.up = torch.nn.Linear(hidden, hidden)
        self.down = torch.nn.Linear(hidden, hidden)
        self.width = width

    def forward(self, x):
        h = self.up(x).repeat(1, 1, self.width)
        h = torch.nn.functional.silu(h) * torch.sigmoid(h)
        h = h.view(*x.shape[:2], self.width, -1).mean(dim=2)
        return x + self.down(h)


class TinyLM(torch.nn.Module):
    def __init__(self, vocab=256, hidden=64, layers=4, width=16):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(Block(hidden, width) for _ in range(layers))
        self.head = torch.nn.Linear(hidden, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def batch_for(step, batch, seq, vocab=256):
    g = torch.Generator().manual_seed(1000 + step)
    return torch.randint(0, vocab, (batch, seq + 1), generator=g)


def save_checkpoint(args, model, optimizer, step, batch, loss):
    path = os.path.join(args.output_dir, f"checkpoint-{step}")
    os.makedirs(path, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(path, "model.pt"))
    torch.save(optimizer.state_dict(), os.path.join(path, "optimizer.pt"))
    state = {"global_step": step, "max_steps": args.max_steps, "train_batch_size": batch,
             "save_steps": args.save_steps, "logging_steps": args.logging_steps, "eval_steps": args.eval_steps,
             "log_history": [{"step": step, "loss": loss}]}
    with open(os.path.join(path, "trainer_state.json.tmp"), "w") as f:
        json.dump(state, f)
    os.replace(os.path.join(path, "trainer_state.json.tmp"), os.path.join(path, "trainer_state.json"))


def progress(step, total, started):
    rate = step / max(time.time() - started, 1e-6)
    bar = "#" * (10 * step // total)
    sys.stderr.write(f"\r{100 * step // total:3d}%|{bar:<10}| {step}/{total} [00:00<00:00, {rate:.2f}it/s]")
    sys.stderr.flush()


def cap_this_rank():
    """prlimit --as on one rank only: that rank runs again under the cap."""
    rank, cap = os.environ.get("HF_TRAIN_CAP_RANK"), os.environ.get("HF_TRAIN_CAP")
    if rank is None or os.environ.get("SLURM_PROCID") != rank or os.environ.get("HF_TRAIN_CAPPED"):
        return
    os.environ["HF_TRAIN_CAPPED"] = "1"
    os.execvp("prlimit", ["prlimit", f"--as={cap}", sys.executable, *sys.argv])


def init_distributed():
    """The rank under srun with HF_TRAIN_DDP=1 (gloo, env:// rendezvous on the first node), else None."""
    if os.environ.get("HF_TRAIN_DDP") != "1" or int(os.environ.get("SLURM_NTASKS", "1")) < 2:
        return None
    m = re.match(r"([^\[,]+)(?:\[(\d+))?", os.environ["SLURM_NODELIST"])
    os.environ.update(MASTER_ADDR=m.group(1) + (m.group(2) or ""), MASTER_PORT=os.environ.get("HF_TRAIN_PORT", "29533"),
                      RANK=os.environ["SLURM_PROCID"], WORLD_SIZE=os.environ["SLURM_NTASKS"])
    torch.distributed.init_process_group("gloo", init_method="env://")
    return int(os.environ["RANK"])


def main():
    cap_this_rank()
    args = parse_args()
    rank = init_distributed()
    qlora = str2bool(args.load_in_4bit)
    reserved = None
    if args.reserve_kb_per_token:
        tokens = args.per_device_train_batch_size * args.max_seq_length
        print(f"reserving {tokens * args.reserve_kb_per_token // 1024} MiB for {tokens} tokens", flush=True)
        reserved = torch.empty(tokens * args.reserve_kb_per_token * 256)  # address space, never touched
    else:  # OpenBLAS maps its work buffers at its first call; do it before memory gets tight
        torch.ones(64, 64) @ torch.ones(64, 64)
    torch.manual_seed(args.seed)
    model = TinyLM(width=args.width)
    if rank is not None:
        model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    batch = args.per_device_train_batch_size
    start = 0
    if args.resume_from_checkpoint:
        path = args.resume_from_checkpoint
        with open(os.path.join(path, "trainer_state.json")) as f:
            state = json.load(f)
        model.load_state_dict(torch.load(os.path.join(path, "model.pt")))
        optimizer.load_state_dict(torch.load(os.path.join(path, "optimizer.pt")))
        start = state["global_step"]
        batch = state.get("train_batch_size") or batch
        print(f"Continuing training from checkpoint, will skip to saved global_step {start}", flush=True)
    os.makedirs(args.output_dir, exist_ok=True)
    with open(os.path.join(args.output_dir, "attempts.jsonl"), "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "rank": rank, "host": socket.gethostname(), "batch": batch, "accum": args.gradient_accumulation_steps,
                            "seq": args.max_seq_length, "qlora": qlora, "start_step": start,
                            "resumed_from": args.resume_from_checkpoint}) + "\n")
    print(f"***** Running training *****\n  Instantaneous batch size per device = {batch}\n"
          f"  Gradient Accumulation steps = {args.gradient_accumulation_steps}\n"
          f"  Total optimization steps = {args.max_steps}", flush=True)
    started = time.time()
    loss_value = 0.0
    for step in range(start + 1, args.max_steps + 1):
        seq = args.max_seq_length if step > args.warmup_steps else max(8, args.max_seq_length // 4)
        for micro in range(args.gradient_accumulation_steps):
            tokens = batch_for(step * 100 + micro + 7919 * (rank or 0), batch, seq)
            if qlora:  # dequantised weight copies, alive through the step
                scratch = torch.ones(args.qlora_overhead_mb * (1 << 18))
            logits = model(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))
            (loss / args.gradient_accumulation_steps).backward()
            if qlora:
                del scratch
            loss_value = loss.item()
        if rank is not None and os.environ.get("HF_TRAIN_FAIL_RANK") == str(rank) and step == start + 2:
            print(f"ValueError: rank {rank}: a malformed row in the dataset shard", flush=True)
            sys.exit(3)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        progress(step, args.max_steps, started)
        if step % args.logging_steps == 0:
            sys.stderr.write("\n")
            print({"loss": round(loss_value, 4), "learning_rate": args.learning_rate,
                   "epoch": round(step / args.max_steps, 2)}, flush=True)
        if (step % args.save_steps == 0 or step == args.max_steps) and not rank:
            save_checkpoint(args, model, optimizer, step, batch, loss_value)
        if args.step_sleep:
            time.sleep(args.step_sleep)
        if step == args.hang_at_step and start == 0:
            print(f"step {step}: waiting on a collective that never completes", flush=True)
            while True:
                time.sleep(60)
    sys.stderr.write("\n")
    print({"train_runtime": round(time.time() - started, 3), "train_loss": round(loss_value, 4)}, flush=True)
    if rank is not None:  # torch 1.13's gloo can hang at interpreter exit: leave after a last barrier
        torch.distributed.barrier()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


if __name__ == "__main__":
    main()
