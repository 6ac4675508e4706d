#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/options.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"
#include "util/toml_file.hpp"

using namespace sg;

TEST_CASE("counts accept scale suffixes and scientific notation", "[util]") {
    CHECK(*parse_count("70e9") == Approx(70e9));
    CHECK(*parse_count("70B") == Approx(70e9));
    CHECK(*parse_count("7.6b") == Approx(7.6e9));
    CHECK(*parse_count("405M") == Approx(405e6));
    CHECK_FALSE(parse_count("-3B"));
    CHECK_FALSE(parse_count("seventy"));
    CHECK_FALSE(parse_count(""));
}

TEST_CASE("durations accept s, m, h", "[util]") {
    CHECK(*parse_duration("90s") == 90);
    CHECK(*parse_duration("15m") == 900);
    CHECK(*parse_duration("2h") == 7200);
    CHECK(*parse_duration("0") == 0);
    CHECK_FALSE(parse_duration("soon"));
    CHECK_FALSE(parse_duration("-5m"));
}

TEST_CASE("integers must be whole", "[util]") {
    CHECK(*parse_int("42") == 42);
    CHECK_FALSE(parse_int("42x"));
    CHECK_FALSE(parse_int(""));
    CHECK_FALSE(parse_int("99999999999999999999999"));
}

TEST_CASE("timestamps are RFC 3339 with milliseconds and offset", "[util]") {
    std::regex shape(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d)");
    CHECK(std::regex_match(rfc3339_now(), shape));
    setenv("TZ", "UTC", 1);
    tzset();
    CHECK(rfc3339(WallTime(std::chrono::milliseconds(1764405667123))) == "2025-11-29T08:41:07.123+00:00");
    setenv("TZ", "Asia/Kolkata", 1);
    tzset();
    CHECK(rfc3339(WallTime(std::chrono::milliseconds(1764405667123))) == "2025-11-29T14:11:07.123+05:30");
    unsetenv("TZ");
    tzset();
}

TEST_CASE("RFC 3339 timestamps parse back to the instant and the writer's offset", "[util]") {
    auto utc = parse_rfc3339("2025-11-29T08:41:07.123+00:00");
    REQUIRE(utc);
    CHECK(utc->epoch_s == Approx(1764405667.123));
    CHECK(utc->utc_offset_minutes == 0);
    auto kolkata = parse_rfc3339("2025-11-29T14:11:07.123+05:30");
    REQUIRE(kolkata);
    CHECK(kolkata->epoch_s == Approx(1764405667.123));
    CHECK(kolkata->utc_offset_minutes == 330);
    CHECK(parse_rfc3339("2025-11-29T03:41:07-05:00")->epoch_s == Approx(1764405667));
    CHECK(parse_rfc3339("2025-11-29T08:41:07.5Z")->epoch_s == Approx(1764405667.5));
    CHECK(parse_rfc3339("1970-01-01T00:00:00Z")->epoch_s == 0);
    CHECK(parse_rfc3339("2024-02-29T00:00:00Z")->epoch_s == Approx(1709164800));

    const auto now = std::chrono::system_clock::now();
    auto round_trip = parse_rfc3339(rfc3339(now));
    REQUIRE(round_trip);
    CHECK(std::abs(round_trip->epoch_s - std::chrono::duration<double>(now.time_since_epoch()).count()) < 0.002);

    for (const char* bad : {"", "2025-11-29", "2025-11-29T08:41:07", "2025-11-29T08:41:07+0000", "2025-13-01T00:00:00Z",
                            "2025-02-30T00:00:00Z", "2025-11-29T25:00:00Z", "2025-11-29T08:4", "garbage here at all",
                            "2025-11-29T08:41:07.123+00:00 trailing"}) {
        INFO(bad);
        auto parsed = parse_rfc3339(bad);
        REQUIRE_FALSE(parsed);
        CHECK_THAT(parsed.error().message, Catch::Contains("not an RFC 3339 timestamp"));
    }
}

TEST_CASE("option tables parse long, short, inline and repeated options", "[util]") {
    const std::vector<OptionSpec> specs = {
        {"batch", "N", "batch size"}, {"json", "", "JSON output"}, {"output", "FILE", "where", 'o'},
        {"grad-ckpt", "", "on"}, {"no-grad-ckpt", "", "off"}, {"tag", "T", "tags", 0, true}};
    std::vector<std::string> args = {"--batch=4", "-o", "x.json", "--json", "--no-grad-ckpt", "pos",
                                     "--tag", "a", "--tag", "b", "--", "python", "--batch", "9"};
    auto parsed = parse_args(specs, args);
    CHECK(*parsed.get_int("batch", 1, 100) == 4);
    CHECK(*parsed.get("output") == "x.json");
    CHECK(parsed.has("json"));
    CHECK(parsed.get_switch("grad-ckpt") == false);
    CHECK(parsed.all("tag") == std::vector<std::string>{"a", "b"});
    CHECK(parsed.positionals() == std::vector<std::string>{"pos"});
    CHECK(parsed.rest() == std::vector<std::string>{"python", "--batch", "9"});

    CHECK_THROWS_WITH(parse_args(specs, std::vector<std::string>{"--bacth", "3"}),
                      Catch::Contains("--bacth") && Catch::Contains("unknown option"));
    CHECK_THROWS_WITH(parse_args(specs, std::vector<std::string>{"--batch"}), Catch::Contains("needs a value"));
    CHECK_THROWS_WITH(parse_args(specs, std::vector<std::string>{"--batch", "1", "--batch", "2"}),
                      Catch::Contains("more than once"));
    auto bad = parse_args(specs, std::vector<std::string>{"--batch", "0"});
    CHECK_THROWS_WITH(bad.get_int("batch", 1, 100), Catch::Contains("--batch") && Catch::Contains("between 1"));
    auto stop = parse_args(specs, std::vector<std::string>{"--json", "python", "--batch", "2"}, true);
    CHECK(stop.rest() == std::vector<std::string>{"python", "--batch", "2"});
    CHECK_FALSE(stop.has("batch"));
}

TEST_CASE("help lists every option", "[util]") {
    const std::vector<OptionSpec> specs = {{"batch", "N", "batch size"}, {"output", "FILE", "where", 'o'}};
    std::string help = format_help("sparkguard x [OPTIONS]", "Does x.", specs);
    CHECK_THAT(help, Catch::Contains("--batch N") && Catch::Contains("-o, --output FILE") &&
                         Catch::Contains("--help"));
}

TEST_CASE("atomic writes replace whole files", "[util]") {
    auto dir = fs::temp_directory_path() / ("sg-util-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    REQUIRE(write_file_atomic(dir / "a.json", "first"));
    REQUIRE(write_file_atomic(dir / "a.json", "second"));
    CHECK(*read_file(dir / "a.json") == "second");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
    auto missing = write_file_atomic(dir / "no" / "such" / "x", "y");
    REQUIRE_FALSE(missing);
    CHECK_THAT(missing.error().message, Catch::Contains("no/such"));
    fs::remove_all(dir);
}

TEST_CASE("TOML errors name file, line and column", "[util]") {
    auto dir = fs::temp_directory_path() / ("sg-toml-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "bad.toml") << "a = 1\nb = = 2\n";
    CHECK_THROWS_WITH(parse_toml_file(dir / "bad.toml"), Catch::Contains("bad.toml:2:"));
    std::ofstream(dir / "typo.toml") << "name = \"x\"\nbatchsize = 3\n";
    auto table = parse_toml_file(dir / "typo.toml");
    CHECK_THROWS_WITH(reject_unknown_keys(dir / "typo.toml", table, {"name", "batch_size"}),
                      Catch::Contains("typo.toml:2:1") && Catch::Contains("batchsize") &&
                          Catch::Contains("did you mean 'batch_size'"));
    fs::remove_all(dir);
}

TEST_CASE("shell quoting leaves plain words alone", "[util]") {
    CHECK(shell_quote("--batch=4") == "--batch=4");
    CHECK(shell_quote("it's here") == "'it'\\''s here'");
    CHECK(edit_distance("llama-3-8b", "llama-3.1-8b") == 2);
}
