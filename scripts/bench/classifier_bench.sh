#!/usr/bin/env bash
# Times the OOM classifier and step tracker over a large generated training log, against tools
# that read the same file in the same run (tee, wc -l, grep -c), and prints the ratios.
# The classifier runs on every output line of a trainer, so it must keep up with a log flood.
#
#   scripts/bench/classifier_bench.sh [MEGABYTES] [MIX]     # defaults: 200 realistic
#   MIX: realistic (mostly log lines, some progress bars and memory reports)
#        progress  (every line a tqdm bar or a Hugging Face log dict: the step tracker's worst case)
#        memory    (every line mentions memory: the classifier's prefilter always fires)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
sparkguard=${SPARKGUARD:-$root/build/src/sparkguard}
megabytes=${1:-200}
mix=${2:-realistic}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log=$work/train.log

/usr/bin/python3 - "$log" "$megabytes" "$mix" <<'PY'
import random, sys
path, megabytes, mix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rng = random.Random(1)
def bar(step, total=120000):
    pct = step * 100 // total
    return f"{pct:3d}%|{'█' * (pct // 10):<10}| {step}/{total} [1:02:03<3:04:05,  {rng.uniform(1, 5):.2f}s/it]"
def logdict(step):
    return f"{{'loss': {rng.uniform(0.5, 2.5):.4f}, 'grad_norm': {rng.uniform(0.1, 9):.6f}, 'learning_rate': 1.9e-05, 'epoch': {step / 40000:.2f}}}"
plain = [
    "[INFO|trainer.py:2078] 2024-06-01 16:22:16,125 >> ***** Running evaluation *****",
    "[2024-01-16 02:14:43,936] [INFO] [utils.py:792:see_memory_usage] MA 5.63 GB         Max_MA 5.93 GB         CA 6.32 GB         Max_CA 6 GB",
    "[2024-01-16 02:14:43,937] [INFO] [utils.py:799:see_memory_usage] CPU Virtual Memory:  used = 2.49 GB, percent = 4.5%",
    "/usr/lib/python3/dist-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
    "wandb: WARNING Step only supports monotonically increasing values, use define_metric to set a custom x axis.",
    "  File \"/opt/conda/lib/python3.10/site-packages/transformers/trainer.py\", line 1859, in train",
    "Epoch 1, batch 164100, train_loss[loss=2.413, ArTop10Accuracy=0.7735, over 4777.00 frames. ], batch size: 17, lr: 8.73e-03",
    "ins-7df6eojsifuykig9:3018453:3024011 [2] NCCL INFO Channel 01 : 2[1040] -> 0[1020] via SHM/direct/direct",
    "sample 48213: <|im_start|>user Summarise the following passage about the history of the printing press in Europe.",
    "",
]
memory = [
    "[2024-01-16 02:14:43,937] [INFO] [utils.py:799:see_memory_usage] CPU Virtual Memory:  used = 2.49 GB, percent = 4.5%",
    "GPU memory usage after model load: 7.235GB (+10.830GB cache, +1.837GB misc)",
    "UserWarning: Memory efficient kernel not used because: (Triggered internally at sdp_utils.cpp:415.)",
]
target = megabytes * 1024 * 1024
written, step = 0, 0
with open(path, "w") as out:
    lines = []
    while written < target:
        if mix == "progress":
            step += 1
            line = bar(step) if step % 10 else logdict(step)
        elif mix == "memory":
            line = rng.choice(memory)
        else:
            r = rng.random()
            if r < 0.05:
                step += 1
                line = bar(step)
            elif r < 0.06:
                line = logdict(step)
            else:
                line = rng.choice(plain)
        lines.append(line)
        written += len(line.encode()) + 1
        if len(lines) == 10000:
            out.write("\n".join(lines) + "\n")
            lines = []
    lines.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 119.70 GiB of which 1.02 GiB is free.")
    out.write("\n".join(lines) + "\n")
PY

# Best of three wall-clock runs of a command, in seconds.
best_of_3() {
    local best=""
    for _ in 1 2 3; do
        local start end
        start=$(date +%s.%N)
        "$@" >/dev/null
        end=$(date +%s.%N)
        best=$(/usr/bin/python3 -c "a='$best'; b=$end-$start; print(b if not a else min(float(a), b))")
    done
    printf '%.3f' "$best"
}

cat "$log" >/dev/null  # warm the page cache for every contender alike
bytes=$(stat -c %s "$log")
lines=$(wc -l <"$log")
verdict=$("$sparkguard" diagnose "$log" --exit-code 1 --json)
t_sg=$(best_of_3 "$sparkguard" diagnose "$log" --exit-code 1)
t_tee=$(best_of_3 sh -c "cat '$log' | tee '$work/copy.log'")
t_wc=$(best_of_3 wc -l "$log")
t_grep=$(best_of_3 grep -c 'out of memory' "$log")

echo "log: $mix mix, $((bytes / 1048576)) MiB, $lines lines"
echo "verdict: $verdict"
/usr/bin/python3 - "$bytes" "$t_sg" "$t_tee" "$t_wc" "$t_grep" <<'PY'
import sys
size, sg, tee, wc, grep = int(sys.argv[1]), *map(float, sys.argv[2:])
mib = size / 1048576
for name, t in (("sparkguard diagnose", sg), ("cat | tee FILE", tee), ("wc -l", wc), ("grep -c", grep)):
    print(f"  {name:20s} {t:7.3f} s  {mib / t:8.0f} MiB/s")
print(f"ratio sparkguard/tee {sg / tee:.2f}  sparkguard/wc -l {sg / wc:.2f}  sparkguard/grep -c {sg / grep:.2f}")
PY
