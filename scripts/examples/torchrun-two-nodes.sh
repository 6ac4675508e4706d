#!/usr/bin/env bash
# Two DGX Sparks training one model with DDP over their ConnectX-7 link, each machine's part under
# its own sparkguard. Run it on both machines with the same rendezvous host:
#
#   spark1$ ./torchrun-two-nodes.sh 0 spark1
#   spark2$ ./torchrun-two-nodes.sh 1 spark1
#
# torchrun's c10d rendezvous on RENDEZVOUS_HOST:29500 pairs the two; the node rank only names
# each machine's run directory. DDP or FSDP only: tensor parallelism across two Sparks sends every
# layer's activations over the network, and preflight's G10 check fails a launch that asks for
# it (--tp, --tensor_parallel_size, ... wider than one machine), which stops this script (exit 3).
#
# Each sparkguard owns its machine's process tree (torchrun, its workers, their dataloader
# workers): an OOM on a local rank is an OOM of the run, recorded with its evidence, and a
# SIGTERM (Ctrl-C, a scheduler) stops the whole local tree. The OOM ladder is not coordinated
# between the machines, and a relaunch on one machine alone would wait at the rendezvous for
# ranks that have already gone: hence one attempt each (--max-attempts 1). After an OOM (exit 4)
# read both reports, plan a smaller configuration (sparkguard plan --fit) and start both again.
#
# This is the way without Slurm. For one OOM ladder over both machines (a relaunch one rung down
# on both, resumed from the shared checkpoint) run the job through Slurm with one sparkguard in
# front of srun: sparkguard-two-nodes.sbatch, next to this script.
set -euo pipefail

usage="usage: $0 NODE_RANK RENDEZVOUS_HOST"
node_rank=${1:?$usage}
rdzv_host=${2:?$usage}
rdzv_port=${RDZV_PORT:-29500}

export PYTHONUNBUFFERED=1
# NCCL over the ConnectX-7 interface (see `ip -br link`), for example:
# export NCCL_SOCKET_IFNAME=enp1s0f0np0

trainer=(torchrun --nnodes 2 --nproc-per-node 1
         --rdzv-backend c10d --rdzv-endpoint "$rdzv_host:$rdzv_port" --rdzv-id llama8b-ddp
         train.py --model_name_or_path meta-llama/Llama-3.1-8B --use_peft
         --per_device_train_batch_size 4 --gradient_accumulation_steps 4
         --max_seq_length 4096 --output_dir out/llama8b-ddp --save_steps 100)

sparkguard preflight --model meta-llama/Llama-3.1-8B --method lora \
    -o "env-report-node$node_rank.json" -- "${trainer[@]}"

exec sparkguard run --run-dir "runs/llama8b-ddp-node$node_rank" --max-attempts 1 --grace 60 \
    -- "${trainer[@]}"
