#include "telemetry/gpu_inventory.hpp"

#include "supervise/capture.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

std::optional<std::string> text_value(std::string_view raw) {
    std::string_view value = trim(raw);
    if (value.empty() || value == "N/A" || value == "[N/A]" || value == "[Not Supported]" ||
        value == "[Unknown Error]" || value == "[Insufficient Permissions]")
        return std::nullopt;
    return std::string(value);
}

std::optional<double> number_value(std::string_view raw) {
    auto text = text_value(raw);
    if (!text) return std::nullopt;
    auto number = parse_double(*text);
    return number ? std::optional<double>(*number) : std::nullopt;
}

Result<GpuInfo> parse_line(const std::string& line) {
    auto cells = split(line, ',');
    if (cells.size() != gpu_query_fields().size())
        return make_error("nvidia-smi: expected " + std::to_string(gpu_query_fields().size()) + " fields, got " +
                          std::to_string(cells.size()) + " in '" + line + "'");
    auto index = parse_int(trim(cells[0]));
    if (!index) return make_error("nvidia-smi: bad GPU index in '" + line + "'");
    GpuInfo gpu;
    gpu.index = static_cast<int>(*index);
    gpu.name = std::string(trim(cells[1]));
    gpu.uuid = text_value(cells[2]);
    gpu.memory_total_mib = number_value(cells[3]);
    gpu.memory_used_mib = number_value(cells[4]);
    gpu.compute_cap = text_value(cells[5]);
    gpu.driver_version = text_value(cells[6]);
    return gpu;
}

std::string first_line(std::string_view text) {
    text = trim(text);
    return std::string(text.substr(0, text.find('\n')));
}

}  // namespace

const std::vector<std::string>& gpu_query_fields() {
    static const std::vector<std::string> fields = {"index", "name", "uuid", "memory.total", "memory.used",
                                                    "compute_cap", "driver_version"};
    return fields;
}

Result<std::vector<GpuInfo>> parse_gpu_query(std::string_view csv) {
    std::vector<GpuInfo> gpus;
    for (const auto& line : split(csv, '\n')) {
        if (trim(line).empty()) continue;
        auto gpu = parse_line(line);
        if (!gpu) return gpu.error();
        gpus.push_back(std::move(*gpu));
    }
    return gpus;
}

GpuInventory probe_gpus(double timeout_seconds) {
    GpuInventory inventory;
    auto run = capture_output({"nvidia-smi", "--query-gpu=" + join(gpu_query_fields(), ","),
                               "--format=csv,noheader,nounits"},
                              timeout_seconds);
    if (!run) {
        inventory.problem = "nvidia-smi: " + run.error().message;
        return inventory;
    }
    if (run->timed_out || run->exit_code != 0) {
        inventory.problem = "nvidia-smi exited " + std::to_string(run->exit_code) + ": " +
                            first_line(run->out.empty() ? run->err : run->out);
        return inventory;
    }
    auto gpus = parse_gpu_query(run->out);
    if (!gpus) inventory.problem = gpus.error().message;
    else inventory.gpus = std::move(*gpus);
    return inventory;
}

}  // namespace sg
