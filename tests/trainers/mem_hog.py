#!/usr/bin/env python3
"""A stand-in trainer that eats the memory pool the way a runaway fine-tune on unified memory does:
each step maps and touches (MAP_POPULATE) batch x --gb-per-sample GB of anonymous memory in 256 MB
chunks, as fast as the kernel can hand them out, holds it for --hold-seconds (a step's compute), then
frees it. After every chunk it appends the
system's MemAvailable to OUTPUT_DIR/available.jsonl, so that a test knows how low the pool went
while this process lived. Exits 0 after --steps steps.

  mem_hog.py --batch 8 --gb-per-sample 1.5 --steps 3 --output_dir out
"""
import argparse
import ctypes
import json
import mmap
import os
import sys
import time

CHUNK = 256 * 1024 * 1024


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def name_this_process():
    """comm "mem_hog", so that a benchmark's earlyoom --prefer can tell it from other Pythons."""
    try:
        ctypes.CDLL(None).prctl(15, b"mem_hog", 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def main():
    name_this_process()
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--gb-per-sample", type=float, required=True)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--hold-seconds", type=float, default=0.0)
    parser.add_argument("--output_dir", required=True)
    args = parser.parse_args()
    os.makedirs(args.output_dir, exist_ok=True)
    record = open(os.path.join(args.output_dir, "available.jsonl"), "a", buffering=1)
    attempt = os.environ.get("SPARKGUARD_ATTEMPT", "0")
    chunks = max(1, round(args.batch * args.gb_per_sample * 1e9 / CHUNK))
    print(f"batch {args.batch} x accum {args.grad_accum}: {chunks} chunks of 256 MB a step", flush=True)
    for step in range(1, args.steps + 1):
        held = []
        for _ in range(chunks):
            held.append(mmap.mmap(-1, CHUNK, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE))
            record.write(json.dumps({"attempt": attempt, "pid": os.getpid(), "available": mem_available()}) + "\n")
        time.sleep(args.hold_seconds)
        for chunk in held:
            chunk.close()
        print(f"step {step}/{args.steps}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
