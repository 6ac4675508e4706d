#include "telemetry/thermal_csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <utility>
#include <variant>

#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/record_lines.hpp"
#include "util/strings.hpp"

namespace sg::telemetry {
namespace {

constexpr double kGB = 1e9;
constexpr size_t kColumnCount = 16;  // thermal_csv_columns()
constexpr size_t kTimestamp = 0;

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

using Cells = std::vector<std::string>;

// Where each of thermal.csv's columns sits in a file's header; one the file lacks reads as empty.
class ColumnMap {
public:
    explicit ColumnMap(const Cells& header) : width_(header.size()) {
        for (size_t c = 0; c < kColumnCount; ++c)
            at_[c] = static_cast<size_t>(std::find(header.begin(), header.end(), thermal_csv_columns()[c]) - header.begin());
    }
    bool has(size_t c) const { return at_[c] < width_; }
    size_t width() const { return width_; }
    // The cell under column `c` of a row of width() cells; empty when the file lacks the column.
    std::string_view cell(const Cells& row, size_t c) const { return has(c) ? std::string_view(row[at_[c]]) : std::string_view(); }

private:
    std::array<size_t, kColumnCount> at_{};
    size_t width_;
};

Cells cells_of(std::string_view line) {
    Cells cells = split(line, ',');
    for (auto& cell : cells) cell = std::string(trim(cell));
    return cells;
}

// What a driver or sampler writes for a value it does not have.
bool absent(std::string_view cell) { return cell.empty() || cell == "[N/A]" || cell == "[Not Supported]"; }

Status read_into(std::string_view cell, std::string& into) {
    into = std::string(cell);
    return Ok{};
}

template <class Number, class Parse>
Status read_number(std::string_view cell, std::optional<Number>& into, Parse parse) {
    auto value = parse(cell);
    if (!value) return value.error();
    into = static_cast<Number>(*value);
    return Ok{};
}

Status read_into(std::string_view cell, std::optional<double>& into) { return read_number(cell, into, parse_double); }
Status read_into(std::string_view cell, std::optional<long long>& into) { return read_number(cell, into, parse_int); }

Status read_into(std::string_view cell, std::optional<std::uint64_t>& into) {
    into = parse_throttle_text(cell);
    return into ? Status(Ok{}) : make_error("unknown reason in '" + std::string(cell) + "'");
}

// The timestamp must be there, and RFC 3339 when `timestamps` says so.
Status read_time(ThermalRow& row, Timestamps timestamps) {
    auto time = parse_rfc3339(row.timestamp);
    if (time) row.time = *time;
    else if (timestamps == Timestamps::rfc3339) return time.error();
    else if (row.timestamp.empty()) return make_error("empty");
    return Ok{};
}

// One row's cells through `columns`; `fail(column, why)` makes the error for a cell that does not read.
template <class Fail>
Result<ThermalRow> read_row(const ColumnMap& columns, const Cells& cells, Timestamps timestamps, const Fail& fail) {
    ThermalRow r;
    std::optional<double> elapsed;
    std::optional<long long> attempt;
    using Target = std::variant<std::string*, std::optional<double>*, std::optional<long long>*, std::optional<std::uint64_t>*>;
    const std::array<Target, kColumnCount> targets = {  // in the columns' order
        &r.timestamp, &elapsed, &attempt, &r.rung, &r.step,
        &r.gpu.temp_c, &r.gpu.power_w, &r.gpu.power_limit_w, &r.gpu.sm_clock_mhz, &r.gpu.util_pct, &r.gpu.throttle,
        &r.mem_total_gb, &r.mem_available_gb, &r.mem_free_gb, &r.mem_cached_gb, &r.trainer_rss_gb};
    for (size_t c = 0; c < kColumnCount; ++c) {
        const std::string_view cell = columns.cell(cells, c);
        if (absent(cell)) continue;
        if (Status read = std::visit([&](auto* into) { return read_into(cell, *into); }, targets[c]); !read)
            return fail(thermal_csv_columns()[c], read.error().message);
    }
    if (Status time = read_time(r, timestamps); !time) return fail(thermal_csv_columns()[kTimestamp], time.error().message);
    r.elapsed_s = elapsed.value_or(0);
    r.attempt = static_cast<int>(attempt.value_or(0));
    return r;
}

// parse_thermal_csv's state: the header once read, the rows and warnings so far, the first error.
class CsvReader {
public:
    CsvReader(std::string_view file_name, Timestamps timestamps) : file_name_(file_name), timestamps_(timestamps) {}

    // False to stop at an error.
    bool read(const RecordLine& line) {
        const Cells cells = cells_of(line.text);
        if (!columns_) return header(line, cells);
        if (cells.size() > columns_->width()) {
            const std::string counts = std::to_string(cells.size()) + " cells for " + std::to_string(columns_->width());
            return stop(error_at(line, "", counts + " columns"));
        }
        if (cells.size() < columns_->width()) return torn(line);
        auto row = read_row(*columns_, cells, timestamps_,
                            [&](std::string_view column, std::string_view why) { return error_at(line, column, why); });
        if (!row) return line.unterminated_last ? torn(line) : stop(row.error());
        out_.rows.push_back(std::move(*row));
        return true;
    }

    Result<ThermalCsv> result() && {
        if (error_) return *error_;
        return std::move(out_);
    }

private:
    bool header(const RecordLine& line, const Cells& cells) {
        columns_.emplace(cells);
        if (columns_->has(kTimestamp)) return true;
        if (line.unterminated_last) return torn(line);  // the sampler died writing its header
        return stop(error_at(line, "timestamp", "no such column in the header (not a thermal.csv?)"));
    }
    bool torn(const RecordLine& line) {
        out_.warnings.push_back(torn_warning(file_name_, line.number));
        return true;
    }
    bool stop(Error error) {
        error_ = std::move(error);
        return false;
    }
    Error error_at(const RecordLine& line, std::string_view column, std::string_view why) const {
        return make_error(line_error(file_name_, line.number, column, why));
    }

    std::string_view file_name_;
    Timestamps timestamps_;
    std::optional<ColumnMap> columns_;
    ThermalCsv out_;
    std::optional<Error> error_;
};

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

std::optional<double> ThermalRow::pool_used_gb() const {
    if (!mem_total_gb || !mem_available_gb) return std::nullopt;
    return *mem_total_gb - *mem_available_gb;
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
    const Cells cells = cells_of(line);
    if (cells.size() != kColumnCount)
        return make_error("expected " + std::to_string(kColumnCount) + " columns, got " + std::to_string(cells.size()));
    static const ColumnMap in_order(thermal_csv_columns());
    return read_row(in_order, cells, Timestamps::any_text, [](std::string_view column, std::string_view why) {
        return make_error(std::string(column) + ": " + std::string(why));
    });
}

Result<ThermalCsv> parse_thermal_csv(std::string_view text, std::string_view file_name, Timestamps timestamps) {
    CsvReader reader(file_name, timestamps);
    for_each_record_line(text, [&](const RecordLine& line) { return reader.read(line); });
    return std::move(reader).result();
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
