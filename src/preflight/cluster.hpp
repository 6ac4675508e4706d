#pragma once
// G10: what the trainer's command, its environment and its config files say about machines and
// tensor parallelism. Pure: fed the argv, the environment and the text of config files.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sg::preflight {

struct ClusterSettings {
    std::optional<long long> nnodes;            // machines: --nnodes, NNODES, SLURM_NNODES, num_machines, ...
    std::optional<long long> world_size;        // WORLD_SIZE
    std::optional<long long> local_world_size;  // LOCAL_WORLD_SIZE, --nproc_per_node
    std::optional<long long> tensor_parallel;   // --tensor_parallel_size, --tp, tensor_model_parallel_size, ...
    std::vector<std::string> evidence;          // where each came from: "WORLD_SIZE=2", "--tp 2", "ds.yaml: tp_size: 2"
    // What shards weights, gradients and optimizer states across ranks ("--fsdp full_shard",
    // "accelerate.yaml: distributed_type: FSDP", "ds.json: \"stage\": 3"); empty: each rank a full replica.
    std::string sharded_by;
};

// A config file named on the command line: its path and its text.
using ConfigText = std::pair<std::string, std::string>;

ClusterSettings read_cluster_settings(const std::vector<std::string>& argv,
                                      const std::map<std::string, std::string>& env,
                                      const std::vector<ConfigText>& configs);

// The arguments that name config files worth reading (.yaml, .yml, .json, .toml, .cfg, .conf).
std::vector<std::string> config_file_arguments(const std::vector<std::string>& argv);

// How many machines the settings imply: nnodes when given, else WORLD_SIZE over the processes per
// machine (LOCAL_WORLD_SIZE, else one per GPU here).
long long machines(const ClusterSettings& settings, int local_gpus);

}  // namespace sg::preflight
