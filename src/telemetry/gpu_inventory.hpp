#pragma once
// A one-shot inventory of NVIDIA GPUs through nvidia-smi. Fields a driver reports as [N/A] or
// [Not Supported] (GB10 reports no memory.total/used: its memory is the unified pool) are empty.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace sg {

struct GpuInfo {
    int index = 0;
    std::string name;
    std::optional<std::string> uuid;
    std::optional<double> memory_total_mib;
    std::optional<double> memory_used_mib;
    std::optional<std::string> compute_cap;     // "12.1" on GB10
    std::optional<std::string> driver_version;
};

struct GpuInventory {
    std::vector<GpuInfo> gpus;
    std::string problem;  // why the list is empty: nvidia-smi missing, driver not loaded, ...
};

// The --query-gpu fields parse_gpu_query expects, in order.
const std::vector<std::string>& gpu_query_fields();

// Parses `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` output; `fields` may
// lack some of gpu_query_fields() (a driver that refused them): those values are empty.
Result<std::vector<GpuInfo>> parse_gpu_query(std::string_view csv,
                                             const std::vector<std::string>& fields = gpu_query_fields());

// Runs nvidia-smi (from PATH) once, leaving out fields an old driver refuses (an R470 driver does
// not know compute_cap); never throws: a missing tool or driver gives no GPUs and a problem.
GpuInventory probe_gpus(double timeout_seconds = 10);

// The CUDA version the driver supports: "CUDA Version : 13.0" in `nvidia-smi --version`, else
// in the header of `nvidia-smi -q` ("CUDA UMD Version" from R610 on).
Result<std::string> parse_cuda_version(std::string_view version_output);
Result<std::string> probe_cuda_version(double timeout_seconds = 10);

}  // namespace sg
