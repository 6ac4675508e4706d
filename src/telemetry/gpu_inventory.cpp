#include "telemetry/gpu_inventory.hpp"

#include <algorithm>

#include "supervise/capture.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

using telemetry::smi_number;
using telemetry::smi_text;

// The value of `name` in a row, or empty when the driver refused the field.
std::string_view cell(const std::vector<std::string>& cells, const std::vector<std::string>& fields, std::string_view name) {
    auto it = std::find(fields.begin(), fields.end(), name);
    return it == fields.end() ? std::string_view() : std::string_view(cells[static_cast<size_t>(it - fields.begin())]);
}

Result<GpuInfo> parse_line(const std::string& line, const std::vector<std::string>& fields) {
    auto cells = split(line, ',');
    if (cells.size() != fields.size())
        return make_error("nvidia-smi: expected " + std::to_string(fields.size()) + " fields, got " +
                          std::to_string(cells.size()) + " in '" + line + "'");
    auto index = parse_int(trim(cell(cells, fields, "index")));
    if (!index) return make_error("nvidia-smi: bad GPU index in '" + line + "'");
    GpuInfo gpu;
    gpu.index = static_cast<int>(*index);
    gpu.name = std::string(trim(cell(cells, fields, "name")));
    gpu.uuid = smi_text(cell(cells, fields, "uuid"));
    gpu.memory_total_mib = smi_number(cell(cells, fields, "memory.total"));
    gpu.memory_used_mib = smi_number(cell(cells, fields, "memory.used"));
    gpu.compute_cap = smi_text(cell(cells, fields, "compute_cap"));
    gpu.driver_version = smi_text(cell(cells, fields, "driver_version"));
    return gpu;
}

std::vector<telemetry::SmiField> inventory_fields() {
    std::vector<telemetry::SmiField> fields;
    for (const auto& name : gpu_query_fields()) fields.push_back({name, {name}, name == "index" || name == "name"});
    return fields;
}

}  // namespace

const std::vector<std::string>& gpu_query_fields() {
    static const std::vector<std::string> fields = {"index", "name", "uuid", "memory.total", "memory.used",
                                                    "compute_cap", "driver_version"};
    return fields;
}

Result<std::vector<GpuInfo>> parse_gpu_query(std::string_view csv, const std::vector<std::string>& fields) {
    std::vector<GpuInfo> gpus;
    for (const auto& line : split(csv, '\n')) {
        if (trim(line).empty()) continue;
        auto gpu = parse_line(line, fields);
        if (!gpu) return gpu.error();
        gpus.push_back(std::move(*gpu));
    }
    return gpus;
}

GpuInventory probe_gpus(double timeout_seconds) {
    GpuInventory inventory;
    auto answer = telemetry::query_gpus(inventory_fields(), timeout_seconds);
    if (!answer) {
        inventory.problem = answer.error().message;
        return inventory;
    }
    auto gpus = parse_gpu_query(answer->csv, answer->names);
    if (!gpus) inventory.problem = gpus.error().message;
    else inventory.gpus = std::move(*gpus);
    return inventory;
}

Result<std::string> parse_cuda_version(std::string_view version_output) {
    // "CUDA Version        : 13.0"; drivers from R610 on say "CUDA UMD Version".
    for (const auto& line : split(version_output, '\n')) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string_view label = trim(std::string_view(line).substr(0, colon));
        if (label == "CUDA Version" || label == "CUDA UMD Version") {
            std::string_view value = trim(std::string_view(line).substr(colon + 1));
            if (!value.empty()) return std::string(value);
        }
    }
    return make_error("nvidia-smi: no \"CUDA Version\" line");
}

Result<std::string> probe_cuda_version(double timeout_seconds) {
    // R610's --version has no CUDA line; the header of -q has it in every generation.
    Error last = make_error("nvidia-smi: no CUDA version");
    for (const auto& args : {std::vector<std::string>{"nvidia-smi", "--version"},
                             std::vector<std::string>{"nvidia-smi", "-q", "-d", "COMPUTE"}}) {
        auto run = capture_output(args, timeout_seconds);
        if (!run) return make_error("nvidia-smi: " + run.error().message);
        if (run->timed_out || run->exit_code != 0)
            return make_error(join(args, " ") + " exited " + std::to_string(run->exit_code));
        auto version = parse_cuda_version(run->out);
        if (version) return version;
        last = version.error();
    }
    return last;
}

}  // namespace sg
