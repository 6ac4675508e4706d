#include "telemetry/thermal_csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::telemetry {
namespace {

constexpr double kGB = 1e9;
constexpr size_t kColumnCount = 16;

// Fixed decimals without the trailing zeros: 41 not 41.0, 98.25, 0.5.
std::string compact(double value, int decimals) {
    std::string text = fixed(value, decimals);
    if (text.find('.') == std::string::npos) return text;
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text == "-0" ? "0" : text;
}

std::string cell(const std::optional<double>& value, int decimals) {
    return value ? compact(*value, decimals) : "";
}

Result<std::optional<double>> optional_number(const std::vector<std::string>& cells, size_t column) {
    if (cells[column].empty()) return std::optional<double>();
    auto value = parse_double(cells[column]);
    if (!value) return make_error(thermal_csv_columns()[column] + ": " + value.error().message);
    return std::optional<double>(*value);
}

// Reads the numeric columns from `first` on into `targets`, in order.
Status read_numbers(const std::vector<std::string>& cells, size_t first,
                    std::initializer_list<std::optional<double>*> targets) {
    size_t column = first;
    for (auto* target : targets) {
        auto value = optional_number(cells, column++);
        if (!value) return value.error();
        *target = *value;
    }
    return Ok{};
}

Status check_existing(int fd, const std::filesystem::path& path, off_t size) {
    std::string head(4096, '\0');
    ssize_t n = ::pread(fd, head.data(), head.size(), 0);
    if (n < 0) return make_error(path.string() + ": " + errno_text(errno));
    head.resize(static_cast<size_t>(n));
    std::string first = head.substr(0, head.find('\n'));
    if (first != thermal_csv_header())
        return make_error(path.string() + ":1: the header is '" + first + "', not thermal.csv's '" + thermal_csv_header() + "'");
    char last = '\n';
    if (::pread(fd, &last, 1, size - 1) != 1) return make_error(path.string() + ": " + errno_text(errno));
    return last == '\n' ? Status(Ok{}) : write_all(fd, "\n", path);
}

}  // namespace

void ThermalRow::set_memory(const MemInfo& info) {
    mem_total_gb = info.total / kGB;
    mem_available_gb = info.available / kGB;
    mem_free_gb = info.free / kGB;
    mem_cached_gb = info.cached / kGB;
}

const std::vector<std::string>& thermal_csv_columns() {
    static const std::vector<std::string> columns = {
        "timestamp",        "elapsed_s",     "attempt",          "rung",         "step",          "gpu_temp_c",
        "gpu_power_w",      "gpu_power_limit_w", "gpu_sm_clock_mhz", "gpu_util_pct", "gpu_throttle", "mem_total_gb",
        "mem_available_gb", "mem_free_gb",   "mem_cached_gb",    "trainer_rss_gb"};
    return columns;
}

std::string thermal_csv_header() { return join(thermal_csv_columns(), ","); }

std::string format_thermal_row(const ThermalRow& r) {
    const std::vector<std::string> cells = {
        r.timestamp,
        compact(r.elapsed_s, 1),
        r.attempt > 0 ? std::to_string(r.attempt) : "",  // `sparkguard thermal` alone has no attempts
        r.rung,
        r.step ? std::to_string(*r.step) : "",
        cell(r.gpu.temp_c, 1),
        cell(r.gpu.power_w, 2),
        cell(r.gpu.power_limit_w, 2),
        cell(r.gpu.sm_clock_mhz, 0),
        cell(r.gpu.util_pct, 1),
        throttle_text(r.gpu.throttle),
        cell(r.mem_total_gb, 3),
        cell(r.mem_available_gb, 3),
        cell(r.mem_free_gb, 3),
        cell(r.mem_cached_gb, 3),
        cell(r.trainer_rss_gb, 3),
    };
    return join(cells, ",");
}

Result<ThermalRow> parse_thermal_row(std::string_view line) {
    auto cells = split(line, ',');
    if (cells.size() != kColumnCount)
        return make_error("expected " + std::to_string(kColumnCount) + " columns, got " + std::to_string(cells.size()));
    ThermalRow r;
    r.timestamp = cells[0];
    if (r.timestamp.empty()) return make_error("timestamp: empty");
    auto elapsed = parse_double(cells[1]);
    if (!elapsed) return make_error("elapsed_s: " + elapsed.error().message);
    r.elapsed_s = *elapsed;
    if (!cells[2].empty()) {
        auto attempt = parse_int(cells[2]);
        if (!attempt) return make_error("attempt: " + attempt.error().message);
        r.attempt = static_cast<int>(*attempt);
    }
    r.rung = cells[3];
    if (!cells[4].empty()) {
        auto step = parse_int(cells[4]);
        if (!step) return make_error("step: " + step.error().message);
        r.step = *step;
    }
    if (auto read = read_numbers(cells, 5, {&r.gpu.temp_c, &r.gpu.power_w, &r.gpu.power_limit_w, &r.gpu.sm_clock_mhz,
                                            &r.gpu.util_pct});
        !read)
        return read.error();
    r.gpu.throttle = parse_throttle_text(cells[10]);
    if (!cells[10].empty() && !r.gpu.throttle) return make_error("gpu_throttle: unknown reason in '" + cells[10] + "'");
    if (auto read = read_numbers(cells, 11, {&r.mem_total_gb, &r.mem_available_gb, &r.mem_free_gb, &r.mem_cached_gb,
                                             &r.trainer_rss_gb});
        !read)
        return read.error();
    return r;
}

Result<ThermalCsv> parse_thermal_csv(std::string_view text, std::string_view file_name) {
    auto lines = split(text, '\n');
    if (lines.empty() || lines[0] != thermal_csv_header())
        return make_error(std::string(file_name) + ":1: not a thermal.csv header: '" + (lines.empty() ? "" : lines[0]) + "'");
    ThermalCsv csv;
    for (size_t i = 1; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        auto row = parse_thermal_row(lines[i]);
        if (row) csv.rows.push_back(std::move(*row));
        else csv.skipped.push_back(std::string(file_name) + ":" + std::to_string(i + 1) + ": " + row.error().message);
    }
    return csv;
}

Result<ThermalCsvWriter> ThermalCsvWriter::open(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return make_error(path.string() + ": " + errno_text(errno));
    ThermalCsvWriter writer(path, fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return make_error(path.string() + ": " + errno_text(errno));
    Status ready = st.st_size == 0 ? write_all(fd, thermal_csv_header() + "\n", path) : check_existing(fd, path, st.st_size);
    if (!ready) return ready.error();
    return writer;
}

ThermalCsvWriter::ThermalCsvWriter(ThermalCsvWriter&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

ThermalCsvWriter& ThermalCsvWriter::operator=(ThermalCsvWriter&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
}

ThermalCsvWriter::~ThermalCsvWriter() {
    if (fd_ >= 0) ::close(fd_);
}

Status ThermalCsvWriter::write(const ThermalRow& row) {
    Status written = write_all(fd_, format_thermal_row(row) + "\n", path_);
    if (written && ::fdatasync(fd_) != 0) return make_error(path_.string() + ": fdatasync: " + errno_text(errno));
    return written;
}

}  // namespace sg::telemetry
