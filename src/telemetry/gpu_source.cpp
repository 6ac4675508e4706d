#include "telemetry/gpu_source.hpp"

namespace sg::telemetry {

GpuSource probe_gpu_source(const std::string& nvml_library, double smi_timeout_seconds) {
    GpuSource source;
    auto nvml = Nvml::open(nvml_library);
    if (nvml) {
        source.nvml = std::move(*nvml);
        source.first = source.nvml->sample();
        return source;
    }
    source.notes.push_back(nvml.error().message);
    SmiProbe probe = probe_smi_sampling(smi_timeout_seconds);
    source.notes.insert(source.notes.end(), probe.notes.begin(), probe.notes.end());
    source.first = std::move(probe.first);
    if (probe.query) source.smi = std::move(probe.query);
    else source.reason = probe.problem;
    return source;
}

}  // namespace sg::telemetry
