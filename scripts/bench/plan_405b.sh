#!/usr/bin/env bash
# Benchmark: `sparkguard plan` on a sharded Llama-3.1-405B-shaped checkpoint (191 shards, 1138
# tensors, 811 GB = 756 GiB apparent size) must read only the safetensors headers. The shards are sparse
# files: a real header, then a hole, so they cost no disk. Prints the median wall time of plan
# against two baselines measured in the same run: `sparkguard --version` (process start) and
# `cat` of every header (the I/O plan cannot avoid).
# Usage: scripts/bench/plan_405b.sh [path/to/sparkguard] [runs]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
binary=${1:-$root/build/src/sparkguard}
runs=${2:-15}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$work/model" <<'PY'
import json, os, struct, sys
out = sys.argv[1]
os.makedirs(out)
h, f, v, layers, kv = 16384, 53248, 128256, 126, 1024
json.dump({"model_type": "llama", "hidden_size": h, "num_hidden_layers": layers, "num_attention_heads": 128,
           "num_key_value_heads": 8, "intermediate_size": f, "vocab_size": v, "tie_word_embeddings": False,
           "max_position_embeddings": 131072}, open(f"{out}/config.json", "w"))
tensors = [("model.embed_tokens.weight", [v, h]), ("lm_head.weight", [v, h]), ("model.norm.weight", [h])]
for i in range(layers):
    p = f"model.layers.{i}."
    tensors += [(p + "self_attn.q_proj.weight", [h, h]), (p + "self_attn.k_proj.weight", [kv, h]),
                (p + "self_attn.v_proj.weight", [kv, h]), (p + "self_attn.o_proj.weight", [h, h]),
                (p + "mlp.gate_proj.weight", [f, h]), (p + "mlp.up_proj.weight", [f, h]),
                (p + "mlp.down_proj.weight", [h, f]), (p + "input_layernorm.weight", [h]),
                (p + "post_attention_layernorm.weight", [h])]
shards, weight_map = 191, {}
per = -(-len(tensors) // shards)
for s in range(shards):
    name = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
    header, offset = {}, 0
    for t, shape in tensors[s * per:(s + 1) * per]:
        size = 2
        for d in shape:
            size *= d
        header[t] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        weight_map[t] = name
        offset += size
    raw = json.dumps(header).encode()
    with open(f"{out}/{name}", "wb") as fh:
        fh.write(struct.pack("<Q", len(raw)) + raw)
        fh.truncate(8 + len(raw) + offset)  # sparse: the tensor data is a hole
json.dump({"metadata": {}, "weight_map": weight_map}, open(f"{out}/model.safetensors.index.json", "w"))
PY

echo "checkpoint: $(ls "$work/model"/*.safetensors | wc -l) shards, $(du -sh --apparent-size "$work/model" | cut -f1) apparent, $(du -sh "$work/model" | cut -f1) on disk"
median_ms() {  # median wall time of a command over $runs runs, in milliseconds
    local times=()
    for _ in $(seq "$runs"); do
        local start end
        start=$(date +%s%N)
        "$@" >/dev/null
        end=$(date +%s%N)
        times+=($(( (end - start) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}
headers() { for f in "$work/model"/*.safetensors; do head -c 65536 "$f"; done; }
export -f headers; export work
version=$(median_ms "$binary" --version)
cat_headers=$(median_ms bash -c headers)
plan=$(median_ms "$binary" plan --model "$work/model" --budget-gb 122 --json)
echo "sparkguard --version        ${version} ms"
echo "cat of the 191 headers      ${cat_headers} ms"
echo "sparkguard plan (405B)      ${plan} ms   ($(awk -v p="$plan" -v v="$version" 'BEGIN {printf "%.1f", p / v}')x --version)"
"$binary" plan --model "$work/model" --budget-gb 122 --json | /usr/bin/python3 -c \
    'import json,sys; d=json.load(sys.stdin); print("params_b", d["params_b"], "verdict", d["verdict"])'
