#include "preflight/cluster.hpp"

#include <algorithm>
#include <regex>
#include <string_view>

#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::preflight {
namespace {

// Flags that set tensor parallelism in vLLM, SGLang, Megatron, NeMo, DeepSpeed and TRL-style scripts.
const std::vector<std::string> kTensorParallelFlags = {
    "--tensor_parallel_size", "--tensor-parallel-size", "--tensor_model_parallel_size",
    "--tensor-model-parallel-size", "--tensor_parallel_degree", "--tensor-parallel-degree",
    "--tp", "--tp_size", "--tp-size"};
// torchrun, accelerate launch, deepspeed.
const std::vector<std::string> kNodeFlags = {"--nnodes", "--num_machines", "--num-machines", "--num_nodes", "--num-nodes"};
const std::vector<std::string> kLocalFlags = {"--nproc_per_node", "--nproc-per-node", "--num_processes", "--num-processes"};
const std::vector<std::string> kTensorParallelKeys = {"tensor_model_parallel_size", "tensor_parallel_size",
                                                      "tensor_parallel_degree", "tp_size"};
const std::vector<std::string> kNodeKeys = {"num_machines", "num_nodes", "nnodes"};

// "2" -> 2; torchrun's elastic "1:4" -> 4 (the most machines it may span).
std::optional<long long> count_value(std::string_view text) {
    if (auto colon = text.find(':'); colon != std::string_view::npos) text = text.substr(colon + 1);
    auto value = parse_int(trim(text));
    return value && *value > 0 ? std::optional<long long>(*value) : std::nullopt;
}

void keep_max(std::optional<long long>& slot, long long value) {
    if (!slot || value > *slot) slot = value;
}

// --flag VALUE and --flag=VALUE.
void scan_flags(const std::vector<std::string>& argv, const std::vector<std::string>& flags,
                std::optional<long long>& slot, std::vector<std::string>& evidence) {
    for (size_t i = 0; i < argv.size(); ++i)
        for (const auto& flag : flags) {
            std::optional<std::string> text;
            if (argv[i] == flag && i + 1 < argv.size()) text = argv[i + 1];
            else if (argv[i].rfind(flag + "=", 0) == 0) text = argv[i].substr(flag.size() + 1);
            if (!text) continue;
            if (auto value = count_value(*text)) {
                keep_max(slot, *value);
                evidence.push_back(flag + " " + *text);
            }
        }
}

// Hydra/NeMo overrides: model.tensor_model_parallel_size=2, trainer.num_nodes=2.
void scan_overrides(const std::vector<std::string>& argv, const std::vector<std::string>& keys,
                    std::optional<long long>& slot, std::vector<std::string>& evidence) {
    for (const auto& arg : argv) {
        if (arg.rfind("-", 0) == 0) continue;
        auto eq = arg.find('=');
        if (eq == std::string::npos) continue;
        std::string key = arg.substr(0, eq);
        key = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
        if (auto value = count_value(arg.substr(eq + 1))) {
            keep_max(slot, *value);
            evidence.push_back(arg);
        }
    }
}

// key: N, key = N, "key": N in YAML, TOML, JSON or INI text.
void scan_config(const ConfigText& config, const std::vector<std::string>& keys, std::optional<long long>& slot,
                 std::vector<std::string>& evidence) {
    static const std::regex kKeyValue(R"re(["']?([A-Za-z_][A-Za-z0-9_.]*)["']?\s*[:=]\s*["']?([0-9]+)\b)re");
    for (const auto& line : split(config.second, '\n')) {
        std::smatch match;
        if (!std::regex_search(line, match, kKeyValue)) continue;
        std::string key = match[1];
        key = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
        if (auto value = count_value(match[2].str())) {
            keep_max(slot, *value);
            evidence.push_back(config.first + ": " + std::string(trim(line)));
        }
    }
}

void scan_env(const std::map<std::string, std::string>& env, const std::vector<std::string>& names,
              std::optional<long long>& slot, std::vector<std::string>& evidence) {
    for (const auto& name : names) {
        auto it = env.find(name);
        if (it == env.end()) continue;
        if (auto value = count_value(it->second)) {
            keep_max(slot, *value);
            evidence.push_back(name + "=" + it->second);
        }
    }
}

// FSDP (full sharding) or DeepSpeed ZeRO-3: what says the states are sharded across ranks.
std::string sharding_evidence(const std::vector<std::string>& argv, const std::vector<ConfigText>& configs) {
    for (size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        const std::string next = i + 1 < argv.size() ? argv[i + 1] : "";
        if (a == "--use_fsdp" || a == "--use-fsdp") return a;
        if ((a == "--fsdp" && next.find("shard") != std::string::npos) || (a.starts_with("--fsdp=") && a.find("shard") != std::string::npos))
            return a == "--fsdp" ? a + " " + next : a;
        if ((a == "--zero_stage" || a == "--zero-stage") && next == "3") return a + " 3";
        if (a == "--zero_stage=3" || a == "--zero-stage=3") return a;
    }
    static const std::regex fsdp(R"re(^\s*(distributed_type:\s*['"]?FSDP|fsdp_sharding_strategy:\s*['"]?(1|FULL_SHARD|HYBRID_SHARD)|fsdp:\s*\S*shard|-\s*['"]?full_shard)|"?(zero_stage|stage)"?\s*[:=]\s*3\b)re",
                                  std::regex::icase);
    for (const auto& [path, text] : configs)
        for (const auto& line : split(text, '\n'))
            if (std::regex_search(line, fsdp)) return path + ": " + std::string(trim(line));
    return "";
}

}  // namespace

ClusterSettings read_cluster_settings(const std::vector<std::string>& argv,
                                      const std::map<std::string, std::string>& env,
                                      const std::vector<ConfigText>& configs) {
    ClusterSettings s;
    scan_env(env, {"NNODES", "PET_NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"}, s.nnodes, s.evidence);
    scan_env(env, {"WORLD_SIZE"}, s.world_size, s.evidence);
    scan_env(env, {"LOCAL_WORLD_SIZE"}, s.local_world_size, s.evidence);
    scan_flags(argv, kNodeFlags, s.nnodes, s.evidence);
    scan_flags(argv, kLocalFlags, s.local_world_size, s.evidence);
    scan_flags(argv, kTensorParallelFlags, s.tensor_parallel, s.evidence);
    scan_overrides(argv, kTensorParallelKeys, s.tensor_parallel, s.evidence);
    scan_overrides(argv, kNodeKeys, s.nnodes, s.evidence);
    for (const auto& config : configs) {
        scan_config(config, kTensorParallelKeys, s.tensor_parallel, s.evidence);
        scan_config(config, kNodeKeys, s.nnodes, s.evidence);
    }
    s.sharded_by = sharding_evidence(argv, configs);
    return s;
}

std::vector<std::string> config_file_arguments(const std::vector<std::string>& argv) {
    static const std::vector<std::string> kExtensions = {".yaml", ".yml", ".json", ".toml", ".cfg", ".conf"};
    std::vector<std::string> files;
    for (const auto& arg : argv) {
        std::string path = arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos ? arg.substr(arg.find('=') + 1) : arg;
        for (const auto& ext : kExtensions)
            if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) {
                files.push_back(path);
                break;
            }
    }
    return files;
}

long long machines(const ClusterSettings& settings, int local_gpus) {
    if (settings.nnodes) return *settings.nnodes;
    if (!settings.world_size) return 1;
    const long long per_machine = settings.local_world_size ? *settings.local_world_size : std::max(local_gpus, 1);
    return (*settings.world_size + per_machine - 1) / per_machine;
}

}  // namespace sg::preflight
