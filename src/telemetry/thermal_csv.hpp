#pragma once
// thermal.csv: one row per sampling interval, joinable on `timestamp` with train.log.
//
//   timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,
//   gpu_sm_clock_mhz,gpu_util_pct,gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,
//   mem_cached_gb,trainer_rss_gb
//
// timestamp is RFC 3339 from util/clock.hpp (the train.log clock); GPU columns aggregate all GPUs
// (see GpuAggregate); memory columns are /proc/meminfo (MemTotal, MemAvailable, MemFree, Cached)
// and the trainer tree's RSS in decimal GB. An absent value is an empty cell.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/gpu_sample.hpp"
#include "telemetry/meminfo.hpp"
#include "util/clock.hpp"
#include "util/result.hpp"

namespace sg::telemetry {

struct ThermalRow {
    std::string timestamp;          // rfc3339_now() when the sample was taken
    std::optional<Timestamp> time;  // the timestamp read back, when it is RFC 3339; the writer leaves it
    double elapsed_s = 0;           // since the run began
    int attempt = 0;                // 0 (an empty cell): no attempt, as in `sparkguard thermal`
    std::string rung;               // the rung that produced this attempt's configuration; empty for the first
    std::optional<long long> step;
    GpuAggregate gpu;
    std::optional<double> mem_total_gb;
    std::optional<double> mem_available_gb;
    std::optional<double> mem_free_gb;
    std::optional<double> mem_cached_gb;
    std::optional<double> trainer_rss_gb;

    // Fills the four mem_* columns from a /proc/meminfo reading (bytes to decimal GB).
    void set_memory(const MemInfo& info);
    // The pool in use: total minus available, when both were measured.
    std::optional<double> pool_used_gb() const;
};

const std::vector<std::string>& thermal_csv_columns();
std::string thermal_csv_header();  // the columns joined by ',', no newline

// One row, no newline. Numbers carry at most their useful decimals ("41", "98.25", "61.3").
std::string format_thermal_row(const ThermalRow& row);

// What a timestamp read back must be: any text to replay rows through the throttle detector (it
// counts elapsed_s), RFC 3339 to place them in time (`sparkguard report`).
enum class Timestamps { any_text, rfc3339 };

// The inverse of format_thermal_row: exactly thermal.csv's columns, read by the rules of
// parse_thermal_csv; errors name the column and the bad value.
Result<ThermalRow> parse_thermal_row(std::string_view line);

struct ThermalCsv {
    std::vector<ThermalRow> rows;
    std::vector<std::string> warnings;  // "FILE:LINE: torn line ignored ..." (util/record_lines.hpp)
};
// A whole file's text, read back tolerantly. Columns are found by the header's names, so an older
// or newer file with other columns still reads; an empty cell, [N/A] or [Not Supported] is an
// absent value (attempt 0, elapsed_s 0). A row with fewer cells than the header (the writer closes
// a torn row before appending) and a torn last line are warnings. The error names the file, the
// line and the column: no header with a `timestamp` column, a row with more cells than the header,
// a value that does not parse.
Result<ThermalCsv> parse_thermal_csv(std::string_view text, std::string_view file_name = "thermal.csv",
                                     Timestamps timestamps = Timestamps::any_text);

// Appends rows to thermal.csv. Each row is one write(2) then fdatasync(2): no stdio buffer, so a
// machine that hangs or loses power keeps every row sampled before it.
class ThermalCsvWriter {
public:
    // Opens for appending (--resume-run continues the file). A new or empty file gets the header;
    // an existing one must start with it (error naming FILE:1 otherwise); a last line left without
    // its newline is closed first so the next row starts on a line of its own.
    static Result<ThermalCsvWriter> open(const std::filesystem::path& path);
    ThermalCsvWriter(ThermalCsvWriter&& other) noexcept;
    ThermalCsvWriter& operator=(ThermalCsvWriter&& other) noexcept;
    ~ThermalCsvWriter();

    Status write(const ThermalRow& row);
    const std::filesystem::path& path() const { return path_; }

private:
    ThermalCsvWriter(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
    std::filesystem::path path_;
    int fd_ = -1;
};

}  // namespace sg::telemetry
