#include "report/thermal_samples.hpp"

#include <algorithm>
#include <array>

#include "util/record_lines.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {
namespace {

using Cells = std::vector<std::string>;
using Number = std::optional<double> ThermalSample::*;

struct NumberColumn {
    std::string_view name;
    Number field;
};

constexpr std::array kNumberColumns = {
    NumberColumn{"gpu_temp_c", &ThermalSample::temp_c},
    NumberColumn{"gpu_power_w", &ThermalSample::power_w},
    NumberColumn{"gpu_power_limit_w", &ThermalSample::power_limit_w},
    NumberColumn{"mem_total_gb", &ThermalSample::mem_total_gb},
    NumberColumn{"mem_available_gb", &ThermalSample::mem_available_gb},
    NumberColumn{"trainer_rss_gb", &ThermalSample::trainer_rss_gb},
};

class Header {
public:
    explicit Header(const Cells& names) : names_(names) {}
    // The cell under `name`, empty when the column is absent.
    std::string_view cell(const Cells& row, std::string_view name) const {
        auto it = std::find(names_.begin(), names_.end(), name);
        return it == names_.end() ? std::string_view() : std::string_view(row[static_cast<size_t>(it - names_.begin())]);
    }
    bool has(std::string_view name) const { return std::find(names_.begin(), names_.end(), name) != names_.end(); }
    size_t size() const { return names_.size(); }

private:
    Cells names_;
};

bool absent(std::string_view cell) { return cell.empty() || cell == "[N/A]" || cell == "[Not Supported]"; }

// A row's cells into a sample; the error names the file, the line and the column.
Result<ThermalSample> sample_from(const Header& header, const Cells& row, std::string_view file_name, size_t number) {
    const auto fail = [&](std::string_view column, const Error& e) { return make_error(line_error(file_name, number, column, e.message)); };
    ThermalSample s;
    auto time = parse_rfc3339(header.cell(row, "timestamp"));
    if (!time) return fail("timestamp", time.error());
    s.time = *time;
    for (const auto& column : kNumberColumns) {
        const std::string_view cell = header.cell(row, column.name);
        if (absent(cell)) continue;
        auto value = parse_double(cell);
        if (!value) return fail(column.name, value.error());
        s.*column.field = *value;
    }
    for (const auto name : {"attempt", "step"}) {
        const std::string_view cell = header.cell(row, name);
        if (absent(cell)) continue;
        auto value = parse_int(cell);
        if (!value) return fail(name, value.error());
        if (std::string_view(name) == "attempt") s.attempt = static_cast<int>(*value);
        else s.step = *value;
    }
    s.throttle = std::string(header.cell(row, "gpu_throttle"));
    return s;
}

}  // namespace

std::optional<double> ThermalSample::pool_used_gb() const {
    if (!mem_total_gb || !mem_available_gb) return std::nullopt;
    return *mem_total_gb - *mem_available_gb;
}

Result<ThermalSamples> parse_thermal_samples(std::string_view text, std::string_view file_name) {
    ThermalSamples out;
    std::optional<Header> header;
    std::optional<Error> error;
    for_each_record_line(text, [&](const RecordLine& line) {
        Cells cells = split(line.text, ',');
        for (auto& cell : cells) cell = std::string(trim(cell));
        if (!header) {
            header.emplace(cells);
            if (header->has("timestamp")) return true;
            if (line.unterminated_last) {  // the sampler died writing its header
                out.warnings.push_back(torn_warning(file_name, line.number));
                return true;
            }
            error = Error{line_error(file_name, line.number, "timestamp", "no such column in the header (not a thermal.csv?)")};
            return false;
        }
        if (cells.size() > header->size()) {
            error = Error{line_error(file_name, line.number, "", std::to_string(cells.size()) + " cells for " +
                                                                     std::to_string(header->size()) + " columns")};
            return false;
        }
        if (cells.size() < header->size()) {
            out.warnings.push_back(torn_warning(file_name, line.number));
            return true;
        }
        auto sample = sample_from(*header, cells, file_name, line.number);
        if (sample) out.samples.push_back(std::move(*sample));
        else if (line.unterminated_last) out.warnings.push_back(torn_warning(file_name, line.number));
        else error = sample.error();
        return sample.ok() || line.unterminated_last;
    });
    if (error) return *error;
    return out;
}

}  // namespace sg
