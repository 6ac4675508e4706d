#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "telemetry/thermal_csv.hpp"
#include "util/files.hpp"

using namespace sg;
using namespace sg::telemetry;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("sparkguard-thermal-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

ThermalRow sample_row() {
    ThermalRow row;
    row.timestamp = "2026-11-29T08:41:07.123+00:00";
    row.elapsed_s = 61.26;
    row.attempt = 2;
    row.rung = "drop-caches";
    row.step = 1200;
    row.gpu.temp_c = 71;
    row.gpu.power_w = 98.254;
    row.gpu.sm_clock_mhz = 2405;
    row.gpu.util_pct = 97;
    row.gpu.throttle = 0x4;
    MemInfo mem;
    mem.total = 128.5e9;
    mem.available = 61.3e9;
    mem.free = 20e9;
    mem.cached = 14.0e9;
    row.set_memory(mem);
    row.trainer_rss_gb = 42.1234;
    return row;
}

std::string read(const fs::path& path) { return *read_file(path); }

}  // namespace

TEST_CASE("the thermal.csv columns, in order", "[thermal_csv]") {
    CHECK(thermal_csv_header() ==
          "timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,gpu_sm_clock_mhz,"
          "gpu_util_pct,gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,mem_cached_gb,trainer_rss_gb");
}

TEST_CASE("a row: decimal GB, empty cells for what was not measured", "[thermal_csv]") {
    CHECK(format_thermal_row(sample_row()) ==
          "2026-11-29T08:41:07.123+00:00,61.3,2,drop-caches,1200,71,98.25,,2405,97,sw_power_cap,128.5,61.3,20,14,42.123");
    ThermalRow bare;
    bare.timestamp = "2026-11-29T08:41:07.123+00:00";
    bare.attempt = 1;
    CHECK(format_thermal_row(bare) == "2026-11-29T08:41:07.123+00:00,0,1,,,,,,,,,,,,,");
}

TEST_CASE("rows read back as written; bad cells name their column", "[thermal_csv]") {
    auto row = parse_thermal_row(format_thermal_row(sample_row()));
    REQUIRE(row);
    CHECK(row->attempt == 2);
    CHECK(row->rung == "drop-caches");
    CHECK(row->step == 1200);
    CHECK(row->gpu.power_w == 98.25);
    CHECK_FALSE(row->gpu.power_limit_w);
    CHECK(row->gpu.throttle == 4u);
    CHECK(row->mem_available_gb == 61.3);
    CHECK(format_thermal_row(*row) == format_thermal_row(sample_row()));

    auto short_row = parse_thermal_row("2026-11-29T08:41:07.123+00:00,1,1");
    REQUIRE_FALSE(short_row);
    CHECK_THAT(short_row.error().message, Catch::Contains("expected 16 columns, got 3"));
    auto bad_power = parse_thermal_row("t,1,1,,,41,lots,,,,,,,,,");
    REQUIRE_FALSE(bad_power);
    CHECK_THAT(bad_power.error().message, Catch::StartsWith("gpu_power_w: "));
    auto bad_reason = parse_thermal_row("t,1,1,,,41,,,,,warp_drive,,,,,");
    REQUIRE_FALSE(bad_reason);
    CHECK_THAT(bad_reason.error().message, Catch::Contains("gpu_throttle"));
}

TEST_CASE("the writer: header once, one line per row, on disk as soon as written", "[thermal_csv]") {
    TempDir dir;
    const fs::path path = dir.path / "thermal.csv";
    {
        auto writer = ThermalCsvWriter::open(path);
        REQUIRE(writer);
        CHECK(read(path) == thermal_csv_header() + "\n");
        REQUIRE(writer->write(sample_row()));
        CHECK(read(path) == thermal_csv_header() + "\n" + format_thermal_row(sample_row()) + "\n");  // not buffered
    }
    {
        auto again = ThermalCsvWriter::open(path);  // --resume-run appends
        REQUIRE(again);
        REQUIRE(again->write(sample_row()));
    }
    auto csv = parse_thermal_csv(read(path));
    REQUIRE(csv);
    CHECK(csv->rows.size() == 2);
    CHECK(csv->warnings.empty());
}

TEST_CASE("the writer closes a row torn by a crash and refuses a foreign file", "[thermal_csv]") {
    TempDir dir;
    const fs::path torn = dir.path / "thermal.csv";
    std::ofstream(torn) << thermal_csv_header() << "\n" << format_thermal_row(sample_row()) << "\n2026-11-29T08:4";
    {
        auto writer = ThermalCsvWriter::open(torn);
        REQUIRE(writer);
        REQUIRE(writer->write(sample_row()));
    }
    auto csv = parse_thermal_csv(read(torn), "thermal.csv");
    REQUIRE(csv);
    CHECK(csv->rows.size() == 2);
    REQUIRE(csv->warnings.size() == 1);
    CHECK_THAT(csv->warnings[0], Catch::StartsWith("thermal.csv:3: "));

    const fs::path foreign = dir.path / "other.csv";
    std::ofstream(foreign) << "time,temp\n1,2\n";
    auto refused = ThermalCsvWriter::open(foreign);
    REQUIRE_FALSE(refused);
    CHECK_THAT(refused.error().message, Catch::Contains("other.csv:1: the header is 'time,temp'"));
    CHECK(read(foreign) == "time,temp\n1,2\n");

    auto unwritable = ThermalCsvWriter::open(dir.path / "missing" / "thermal.csv");
    REQUIRE_FALSE(unwritable);
    CHECK_THAT(unwritable.error().message, Catch::Contains("No such file or directory"));
    CHECK_FALSE(parse_thermal_csv("time,temp\n"));
}
