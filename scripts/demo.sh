#!/usr/bin/env bash
# The main job on a built-in demo, no GPU needed: a real (small, CPU) PyTorch fine-tune whose
# address space is capped (prlimit --as), so it runs out of memory the way a big one does on a
# GPU. sparkguard recognises each death, walks the OOM ladder (drop caches, shorter packing,
# smaller batch), resumes from the last checkpoint, and the run finishes; then the report and its
# timeline picture (runs/demo/timeline.svg: open it in a browser).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
sparkguard="${BUILD_DIR:-$root/build}/src/sparkguard"

work=${DEMO_DIR:-$root/runs/demo}
rm -rf "$work" "$work-checkpoints"
export OPENBLAS_NUM_THREADS=1  # OpenBLAS threads can spin instead of failing under a cap
cap=1010000000                 # bytes of address space: 8x1024 and 8x512 do not fit, 4x512 does

echo "sparkguard demo: a PyTorch fine-tune capped at $((cap / 1000000)) MB of address space" >&2
set +e
"$sparkguard" run --run-dir "$work" --min-seq 512 --stall-timeout 2m --thermal-interval 1 -- \
  prlimit --as=$cap /usr/bin/python3 "$root/tests/trainers/hf_train.py" \
    --output_dir "$work-checkpoints" --per_device_train_batch_size 8 --max_seq_length 1024 \
    --warmup_steps 4 --max_steps 12 --save_steps 2 --logging_steps 2 --width 8 --step_sleep 0.3
status=$?
set -e
echo >&2
echo "sparkguard run exited $status. The morning read:" >&2
echo >&2
"$sparkguard" report "$work" --svg "$work/timeline.svg"
exit $status
