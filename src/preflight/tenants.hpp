#pragma once
// G6: other tenants of the GPU and of the memory pool: what nvidia-smi lists as compute apps, and
// processes known to hold GPU memory (vLLM, Ollama, SGLang, TGI, llama.cpp, other trainers) found
// in /proc. On GB10 the driver cannot say what a process holds ([N/A]); RSS is still read.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace sg::preflight {

struct ComputeApp {
    pid_t pid = 0;
    std::string name;
    std::optional<double> used_mib;  // [N/A] on GB10
};

// `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader,nounits`.
Result<std::vector<ComputeApp>> parse_compute_apps(std::string_view csv);

// "vllm", "ollama", "sglang", "tgi", "triton", "llama.cpp", "trainer", or nullopt for a process
// that is none of them. `comm` is /proc/PID/comm, `argv` its command line.
std::optional<std::string> tenant_kind(std::string_view comm, const std::vector<std::string>& argv);

// The share of GPU memory a serving process caps itself at: vLLM's --gpu-memory-utilization,
// SGLang's --mem-fraction-static.
std::optional<double> memory_fraction(const std::vector<std::string>& argv);

struct Tenant {
    pid_t pid = 0;
    std::string kind;                   // tenant_kind(), or "gpu process" for a compute app of no known kind
    std::string command;                // the command line, shortened
    std::optional<double> rss_gb;         // none for a process outside this PID namespace
    std::optional<double> gpu_memory_gb;  // what the driver says it holds
    std::optional<double> memory_fraction;
    bool on_gpu = false;                // listed by nvidia-smi
};

// Reads /proc and (when there is a GPU) nvidia-smi once; sparkguard itself and its ancestors
// are left out. `problem` gets nvidia-smi's failure, if any.
std::vector<Tenant> find_tenants(bool query_gpu, std::string* problem);

}  // namespace sg::preflight
