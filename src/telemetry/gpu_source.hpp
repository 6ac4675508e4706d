#pragma once
// Which GPU telemetry this machine has, decided once before the first launch: NVML when the
// driver's library loads, else the nvidia-smi sampling child, else none (the memory columns of
// thermal.csv still work; the GPU columns stay empty).
//
//   GpuSource gpu = probe_gpu_source();
//   if (gpu.nvml)      on each tick: aggregate(gpu.nvml->sample())
//   else if (gpu.smi)  spawn smi_loop_argv(*gpu.smi, ms); feed lines to parse_smi_line
//   else               spdlog::warn("no GPU telemetry: {}", gpu.reason)

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvml.hpp"

namespace sg::telemetry {

struct GpuSource {
    std::unique_ptr<Nvml> nvml;
    std::optional<SmiQuery> smi;
    std::vector<GpuSample> first;     // one reading taken while probing (preflight's "now")
    std::string reason;               // why neither source is there; empty when one is
    std::vector<std::string> notes;   // why NVML was passed over, fields left out, ...

    bool any() const { return nvml || smi; }
    std::string_view kind() const { return nvml ? "nvml" : smi ? "nvidia-smi" : "none"; }
};

// Never throws. `nvml_library` defaults to default_nvml_library().
GpuSource probe_gpu_source(const std::string& nvml_library = default_nvml_library(),
                           double smi_timeout_seconds = 10);

}  // namespace sg::telemetry
