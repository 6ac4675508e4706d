#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "report/run_events.hpp"
#include "report/run_summary.hpp"
#include "report/summary_text.hpp"
#include "report/timeline.hpp"
#include "report/timeline_svg.hpp"
#include "report/train_log_steps.hpp"
#include "telemetry/thermal_csv.hpp"
#include "util/strings.hpp"
#include "util/xml.hpp"

using namespace sg;
using Catch::Contains;
using telemetry::ThermalRow;

namespace {

constexpr double kStart = 1764451200;  // 2025-11-29T22:20:00+01:00
const std::string kHeader =
    "timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,gpu_sm_clock_mhz,gpu_util_pct,"
    "gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,mem_cached_gb,trainer_rss_gb\n";

// "2025-11-29T22:20:00.000+01:00" plus `seconds`.
std::string stamp(double seconds) {
    const double t = kStart + seconds + 3600;
    const auto whole = static_cast<std::time_t>(t);
    std::tm tm{};
    gmtime_r(&whole, &tm);
    char out[48];
    std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%S", &tm);
    return std::string(out) + "." + std::to_string(1000 + static_cast<int>((t - static_cast<double>(whole)) * 1000)).substr(1) + "+01:00";
}

std::string thermal_row(double seconds, int attempt, double temp, double power, double available) {
    return stamp(seconds) + "," + fixed(seconds, 1) + "," + std::to_string(attempt) + ",,," + fixed(temp, 1) + "," +
           fixed(power, 2) + ",240,2400,97,none,121.7," + fixed(available, 2) + ",40,3.1,30.5\n";
}

// thermal.csv read as `sparkguard report` reads it.
Result<telemetry::ThermalCsv> read_thermal_csv(std::string_view text, std::string_view file_name = "thermal.csv") {
    return telemetry::parse_thermal_csv(text, file_name, telemetry::Timestamps::rfc3339);
}

std::string event(double seconds, const std::string& name, const std::string& fields = "") {
    return "{\"time\":\"" + stamp(seconds) + "\",\"event\":\"" + name + "\"" + (fields.empty() ? "" : "," + fields) + "}\n";
}

AttemptRecord attempt(int n, std::optional<Rung> rung, double from, double to, std::string outcome) {
    AttemptRecord a;
    a.n = n;
    a.rung = rung;
    a.config.batch_size = n < 3 ? 8 : 4;
    a.config.grad_accum = n < 3 ? 1 : 2;
    a.config.seq_len = 1024;
    a.started = stamp(from);
    a.ended = stamp(to);
    a.outcome = std::move(outcome);
    a.exit_code = a.outcome == "succeeded" ? 0 : 137;
    if (a.outcome == "oom") {
        a.oom_kind = "kernel-oom-kill";
        a.phase = "train";
        a.evidence = "Out of memory: Killed process 4242 (python3)";
    }
    a.last_step = 100 * n;
    a.measured = {{"peak_pool_used_gb", 100.0 + n}, {"peak_trainer_rss_gb", 60.0}};
    return a;
}

// A three-attempt night: two kernel OOM kills, then success; GB10-like thermal.csv.
RunInputs night(double hours, int samples) {
    RunInputs in;
    in.run_dir = "runs/2025-11-29-train";
    const double span = hours * 3600;
    in.report.outcome = "succeeded";
    in.report.exit_code = 0;
    in.report.summary = "succeeded on attempt 3";
    in.report.started = stamp(0);
    in.report.ended = stamp(span);
    in.report.attempts = {attempt(1, std::nullopt, 0, span * 0.1, "oom"), attempt(2, Rung::drop_caches, span * 0.1, span * 0.2, "oom"),
                          attempt(3, Rung::smaller_batch, span * 0.2, span, "succeeded")};
    in.report.final_config = in.report.attempts.back().config;
    in.report.reproduce = "python train.py --per_device_train_batch_size 4 --gradient_accumulation_steps 2";
    in.report.plan = {{"peak_gb", 98.5}, {"train_peak_gb", 91.0}, {"budget_gb", 115.0}, {"verdict", "fits"}};
    in.has_events = in.has_thermal = in.has_train_log = true;
    std::string events = event(0, "launch", "\"attempt\":1") +
                         event(span * 0.1, "oom", "\"attempt\":1,\"kind\":\"kernel-oom-kill\",\"phase\":\"train\",\"evidence\":\"Killed process 4242\"") +
                         event(span * 0.1 + 1, "rung", "\"rung\":\"drop-caches\",\"change\":\"drop the page cache\"") +
                         event(span * 0.2, "oom", "\"attempt\":2,\"kind\":\"kernel-oom-kill\",\"phase\":\"train\",\"evidence\":\"<b>&amp;\"") +
                         event(span * 0.2 + 1, "rung", "\"rung\":\"smaller-batch\",\"change\":\"batch 8 -> 4\"") +
                         event(span * 0.2 + 2, "resume", "\"attempt\":3,\"checkpoint\":\"out/checkpoint-200\",\"step\":200") +
                         event(span * 0.6, "power-cap", "\"cap_w\":100,\"message\":\"power held near the dgx-spark sustained cap of ~100 W\"") +
                         event(span * 0.7, "throttle", "\"attempt\":3,\"temp_c\":84.6,\"power_w\":99.1,\"slowdown\":1.6") +
                         event(span, "end", "\"outcome\":\"succeeded\",\"exit_code\":0,\"summary\":\"succeeded on attempt 3\"");
    in.events = parse_run_events(events)->events;
    std::string csv = kHeader;
    for (int i = 0; i < samples; ++i) {
        const double t = span * i / samples;
        const int n = t < span * 0.1 ? 1 : t < span * 0.2 ? 2 : 3;
        csv += thermal_row(t, n, 45 + 40 * t / span, 98 + (i % 7) * 0.5, 121.7 - 60 - (i % 13));
    }
    in.thermal = read_thermal_csv(csv)->rows;
    for (int i = 0; i < samples; i += 10) {
        const double t = span * i / samples;
        const int n = t < span * 0.1 ? 1 : t < span * 0.2 ? 2 : 3;
        in.steps.push_back({kStart + t, i / 10, n});
    }
    return in;
}

// Forty minutes of a GB10 sampled every 30 s: at the ~100 W cap from 10 min; from 20 min the steps
// take 1.6 times as long and it runs 8 C hotter, back to speed at 30 min.
std::string spark_thermal_csv() {
    std::string csv = kHeader;
    double steps = 0;
    for (int t = 0; t <= 2400; t += 30) {
        const bool slow = t >= 1200 && t < 1800;
        const double power = t < 600 ? 60 : slow ? 99 : 98;
        const double temp = t < 600 ? 55 : slow ? 70 : 62;
        csv += stamp(t) + "," + std::to_string(t) + ",1,," + std::to_string(static_cast<long long>(steps)) + "," +
               fixed(temp, 1) + "," + fixed(power, 2) + ",240,2400,97,sw_power_cap,121.7,60,40,3.1,30.5\n";
        steps += 30 / (slow ? 3.2 : 2.0);
    }
    return csv;
}

size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("events.jsonl reads back; a torn line is a warning, anything else names file, line and field", "[report]") {
    const std::string good = event(0, "launch", "\"attempt\":1,\"pid\":42") + event(5, "exit", "\"attempt\":1,\"exit_code\":0");
    auto parsed = parse_run_events(good);
    REQUIRE(parsed);
    REQUIRE(parsed->events.size() == 2);
    CHECK(parsed->events[0].name == "launch");
    CHECK(parsed->events[0].fields["pid"] == 42);
    CHECK(parsed->events[1].time.epoch_s == Approx(kStart + 5));
    CHECK(parsed->events[1].time.utc_offset_minutes == 60);
    CHECK(parsed->warnings.empty());

    auto torn_last = parse_run_events(good + "{\"time\":\"2025-11-29T22:2");
    REQUIRE(torn_last);
    CHECK(torn_last->events.size() == 2);
    REQUIRE(torn_last->warnings.size() == 1);
    CHECK_THAT(torn_last->warnings[0], Contains("events.jsonl:3: torn line"));

    // A crash cut line 2, then --resume-run appended the next record to it.
    auto torn_middle = parse_run_events(event(0, "launch") + "{\"time\":\"2025-11-29T22:2" + event(9, "resume-run") + event(10, "launch"));
    REQUIRE(torn_middle);
    CHECK(torn_middle->events.size() == 3);
    CHECK(torn_middle->events[1].name == "resume-run");
    CHECK(torn_middle->warnings.size() == 1);

    auto garbage = parse_run_events(good + "not json at all\n" + good);
    REQUIRE_FALSE(garbage);
    CHECK(garbage.error().message == "events.jsonl:3: not JSON");
    auto no_time = parse_run_events("{\"event\":\"launch\"}\n", "run/events.jsonl");
    REQUIRE_FALSE(no_time);
    CHECK(no_time.error().message == "run/events.jsonl:1: field 'time': missing or not a string");
    auto bad_time = parse_run_events("{\"time\":\"yesterday\",\"event\":\"launch\"}\n");
    REQUIRE_FALSE(bad_time);
    CHECK_THAT(bad_time.error().message, Contains("events.jsonl:1: field 'time': not an RFC 3339 timestamp: 'yesterday'"));
    CHECK_FALSE(parse_run_events("[1,2]\n"));
    CHECK(parse_run_events("")->events.empty());
}

TEST_CASE("thermal.csv reads by column name; empty and [N/A] cells are absent values", "[report]") {
    const std::string no_gpu = stamp(30) + ",30,1,,12,,,,,,,121.7,80.5,40,3.1,30.5\n";
    const std::string na = stamp(60) + ",60,1,,13,[N/A],[N/A],[N/A],[N/A],[N/A],,121.7,80.5,40,3.1,30.5\n";
    auto parsed = read_thermal_csv(kHeader + thermal_row(0, 1, 41.5, 98.25, 90) + no_gpu + na);
    REQUIRE(parsed);
    REQUIRE(parsed->rows.size() == 3);
    const ThermalRow& first = parsed->rows[0];
    CHECK(first.gpu.temp_c == 41.5);
    CHECK(first.gpu.power_w == 98.25);
    CHECK(first.gpu.power_limit_w == 240);
    CHECK(first.attempt == 1);
    CHECK(first.gpu.throttle == 0u);  // "none"
    CHECK(*first.pool_used_gb() == Approx(121.7 - 90));
    CHECK_FALSE(parsed->rows[1].gpu.temp_c);
    CHECK(parsed->rows[1].step == 12);
    CHECK_FALSE(parsed->rows[2].gpu.power_w);
    CHECK(parsed->warnings.empty());

    // Other column orders and extra columns still read.
    auto reordered = read_thermal_csv("gpu_temp_c,timestamp,future_column\n55," + stamp(0) + ",x\n");
    REQUIRE(reordered);
    CHECK(reordered->rows[0].gpu.temp_c == 55);
    CHECK_FALSE(reordered->rows[0].pool_used_gb());

    CHECK(read_thermal_csv("")->rows.empty());
    CHECK(read_thermal_csv(kHeader)->rows.empty());
}

TEST_CASE("thermal.csv: torn rows are warnings, bad values name the line and the column", "[report]") {
    const std::string row = thermal_row(0, 1, 41.5, 98.25, 90);
    auto torn_last = read_thermal_csv(kHeader + row + row.substr(0, 40));
    REQUIRE(torn_last);
    CHECK(torn_last->rows.size() == 1);
    REQUIRE(torn_last->warnings.size() == 1);
    CHECK(torn_last->warnings[0] == "thermal.csv:3: torn line ignored (the run was stopped while writing it)");

    // The sampler closes a torn row before it appends, so a short row can sit mid-file.
    auto torn_middle = read_thermal_csv(kHeader + row + row.substr(0, 40) + "\n" + row);
    REQUIRE(torn_middle);
    CHECK(torn_middle->rows.size() == 2);
    CHECK(torn_middle->warnings.size() == 1);

    std::string bad = row;
    bad.replace(bad.find("41.5"), 4, "hot!");
    auto malformed = read_thermal_csv(kHeader + row + bad + row, "run/thermal.csv");
    REQUIRE_FALSE(malformed);
    CHECK(malformed.error().message == "run/thermal.csv:3: field 'gpu_temp_c': not a number: 'hot!'");
    auto bad_time = read_thermal_csv(kHeader + "noon" + row.substr(row.find(',')));
    REQUIRE_FALSE(bad_time);
    CHECK_THAT(bad_time.error().message, Contains("thermal.csv:2: field 'timestamp'"));
    auto too_wide = read_thermal_csv(kHeader + row.substr(0, row.size() - 1) + ",1,2\n");
    REQUIRE_FALSE(too_wide);
    CHECK_THAT(too_wide.error().message, Contains("thermal.csv:2: 18 cells for 16 columns"));
    auto no_header = read_thermal_csv(row);
    REQUIRE_FALSE(no_header);
    CHECK_THAT(no_header.error().message, Contains("thermal.csv:1: field 'timestamp': no such column"));
}

TEST_CASE("train.log gives each attempt's step changes with their times", "[report]") {
    TrainLogSteps steps({kStart, kStart + 100});
    const std::vector<std::string> lines = {
        stamp(0) + " sparkguard attempt 1: batch 8, seq_len 1024",
        stamp(1) + " stderr Loading checkpoint shards: 100%|##########| 4/4 [00:10<00:00,  2.50s/it]",
        stamp(10) + " stderr  12%|#2        | 1/8 [00:01<00:08,  1.00s/it]",
        stamp(10) + " stderr  25%|##5       | 2/8 [00:02<00:07,  1.00s/it]",
        stamp(20) + " stdout {'loss': 2.5, 'learning_rate': 1e-05, 'epoch': 0.1}",
        stamp(30) + " stderr+  38%|###7      | 3/8 [00:03<00:06,  1.00s/it] and a line that went on",
        stamp(100) + " sparkguard attempt 2 (rung smaller-batch)",
        stamp(110) + " stderr  62%|######2   | 5/8 [00:01<00:02,  1.00s/it]",
        stamp(111) + " stderr ",
    };
    for (size_t i = 0; i < lines.size(); ++i) REQUIRE(steps.line(lines[i], i + 1, false));
    REQUIRE(steps.points().size() == 4);
    CHECK(steps.points()[0].step == 1);
    CHECK(steps.points()[1].step == 2);
    CHECK(steps.points()[2].step == 3);
    CHECK(steps.points()[2].time == Approx(kStart + 30));
    CHECK(steps.points()[3].attempt == 2);
    CHECK(steps.points()[3].step == 5);
    CHECK(steps.last_time()->epoch_s == Approx(kStart + 111));
    CHECK(steps.lines() == lines.size());

    CHECK(steps.line(stamp(112).substr(0, 16), 10, true));
    CHECK(steps.warnings() == std::vector<std::string>{"train.log:10: torn line ignored (the run was stopped while writing it)"});
    CHECK(steps.line(stamp(113).substr(0, 16) + stamp(113) + " stderr  75%|#######5  | 6/8 [00:01<00:01,  1.00s/it]", 11, false));
    CHECK(steps.points().back().step == 6);

    auto bad_tag = steps.line(stamp(120) + " stdin hello", 12, false);
    REQUIRE_FALSE(bad_tag);
    CHECK_THAT(bad_tag.error().message, Contains("train.log:12: field 'tag'"));
    auto bad_stamp = steps.line("hello world", 13, false);
    REQUIRE_FALSE(bad_stamp);
    CHECK_THAT(bad_stamp.error().message, Contains("train.log:13: field 'timestamp'"));
}

TEST_CASE("step rate is steps per minute over a window, one segment per attempt", "[report]") {
    std::vector<StepPoint> points;
    for (int i = 0; i <= 60; ++i) points.push_back({kStart + i * 2.0, i, 1});           // 30 steps/min
    for (int i = 0; i <= 30; ++i) points.push_back({kStart + 200 + i * 6.0, 40 + i, 2});  // 10 steps/min
    const Series rate = step_rate(points, 30);
    REQUIRE(rate.size() == 2);
    CHECK(rate[0].size() == 60);
    CHECK(rate[0].back().value == Approx(30));
    CHECK(rate[1].back().value == Approx(10));
    CHECK(rate[1].front().time == Approx(kStart + 206));
    CHECK(step_rate({}, 30).empty());
}

TEST_CASE("the summary joins report.json, events and thermal.csv", "[report]") {
    RunInputs in = night(10, 600);
    const RunSummary s = summarize(in);
    CHECK(s.outcome == "succeeded");
    CHECK(s.utc_offset_minutes == 60);
    CHECK(*s.duration_s() == Approx(36000));
    REQUIRE(s.attempts.size() == 3);
    CHECK(*s.attempts[0].duration_s() == Approx(3600));
    CHECK(s.attempts[2].resumed_at == 200);
    CHECK(s.memory.peak_used_gb == 103);  // attempt 3's measurement beats thermal.csv's 72 GB
    CHECK(s.memory.peak_attempt == 3);
    CHECK(s.memory.estimate_gb == 98.5);
    CHECK(s.memory.pool_total_gb == 121.7);
    REQUIRE(s.telemetry);
    CHECK(s.telemetry->source == "thermal.csv");
    CHECK(*s.telemetry->peak_temp_c == Approx(45 + 40 * 599.0 / 600).epsilon(0.001));
    CHECK(s.telemetry->throttle_episodes == 1);
    CHECK(s.telemetry->cap_w == 100);  // the power-cap event's, not the driver's 240 W limit
    CHECK_THAT(s.telemetry->power_cap_message, Contains("sustained cap"));
    CHECK(s.missing.empty());

    in.telemetry = {{"rows", 600}, {"peak_temp_c", 86.5}, {"cap_w", 100}, {"seconds_at_cap", 21000}, {"throttle_episodes", 2},
                    {"seconds_throttled", 1800}, {"mean_power_w", "not a number"}};
    const RunSummary recorded = summarize(in);
    CHECK(recorded.telemetry->source == "report.json");
    CHECK(recorded.telemetry->peak_temp_c == 86.5);
    CHECK(recorded.telemetry->throttle_episodes == 2);
    CHECK_FALSE(recorded.telemetry->mean_power_w);

    const auto json = to_json(recorded);
    CHECK(json["attempts"][1]["rung"] == "drop-caches");
    CHECK(json["attempts"][2]["resumed_at_step"] == 200);
    CHECK(json["memory"]["estimate_peak_gb"] == 98.5);
    CHECK(json["telemetry"]["seconds_at_cap"] == 21000);
    CHECK(json["started"] == "2025-11-29 22:20:00");
}

TEST_CASE("without report.json's telemetry, thermal.csv alone gives the time at the cap and throttling", "[report]") {
    RunInputs in;
    in.run_dir = "runs/2025-11-29-spark";
    in.report.outcome = "succeeded";
    in.report.started = stamp(0);
    in.report.ended = stamp(2400);
    in.has_thermal = true;
    in.thermal = read_thermal_csv(spark_thermal_csv())->rows;
    in.platform = "dgx-spark";  // env-report.json's
    const RunSummary s = summarize(in);
    REQUIRE(s.telemetry);
    CHECK(s.telemetry->source == "thermal.csv");
    CHECK(s.telemetry->cap_w == 100);           // the platform's sustained cap, not the driver's 240 W
    CHECK(s.telemetry->seconds_at_cap == 1800);  // 10 min to 40 min
    CHECK(s.telemetry->throttle_episodes == 1);
    CHECK(*s.telemetry->seconds_throttled >= 500);
    CHECK(s.telemetry->peak_temp_c == 70);
    CHECK(*s.telemetry->peak_temp_at == Approx(kStart + 1200));
    CHECK(to_json(s)["telemetry"]["seconds_at_cap"] == 1800);
    const std::string words = std::regex_replace(format_summary_text(s), std::regex("\\s+"), " ");
    CHECK_THAT(words, Contains("cap 100 W, 30m00s at the cap"));
    CHECK_THAT(words, Contains("throttle 1 episode, 9m00s throttled"));

    // Without env-report.json the power-cap event names the platform; without either, the cap is
    // the driver's limit, which this run never came near.
    in.platform.clear();
    const RunSummary host = summarize(in);
    CHECK(host.telemetry->cap_w == 240);
    CHECK(host.telemetry->seconds_at_cap == 0);
    CHECK(host.telemetry->throttle_episodes == 0);
    in.events = parse_run_events(event(720, "power-cap", "\"platform\":\"dgx-spark\",\"cap_w\":100,\"message\":\"power held\""))->events;
    const RunSummary named = summarize(in);
    CHECK(named.telemetry->seconds_at_cap == 1800);
    CHECK(named.telemetry->throttle_episodes == 1);
}

TEST_CASE("a run without telemetry or events says what is missing", "[report]") {
    RunInputs in = night(0.05, 0);
    in.thermal.clear();
    in.events.clear();
    in.has_thermal = in.has_events = false;
    in.steps.clear();
    in.report.plan = nullptr;
    in.report.attempts[2].ended.clear();
    in.report.attempts[2].outcome = "running";
    in.report.outcome = "running";
    in.report.ended.clear();
    in.log_last = Timestamp{kStart + 170, 60};
    const RunSummary s = summarize(in);
    CHECK_FALSE(s.telemetry);
    CHECK_FALSE(s.end_recorded);
    CHECK(*s.end == Approx(kStart + 170));
    CHECK_FALSE(s.attempts[2].end_recorded);
    CHECK(*s.attempts[2].duration_s() == Approx(170 - 36));
    REQUIRE(s.missing.size() == 4);
    CHECK_THAT(s.missing[0], Contains("thermal.csv: absent"));
    CHECK_THAT(s.missing[1], Contains("events.jsonl: absent"));
    CHECK_THAT(s.missing[2], Contains("no step rate"));
    CHECK_THAT(s.missing[3], Contains("no pre-launch estimate"));
    const std::string text = format_summary_text(s);
    CHECK_THAT(text, Contains("no end recorded"));

    // Markers come from report.json: two OOMs, two rungs, no end.
    const Timeline t = build_timeline(in, s);
    CHECK(std::count_if(t.markers.begin(), t.markers.end(), [](const Marker& m) { return m.kind == MarkerKind::oom; }) == 2);
    CHECK(std::count_if(t.markers.begin(), t.markers.end(), [](const Marker& m) { return m.kind == MarkerKind::rung; }) == 2);
    CHECK(std::none_of(t.markers.begin(), t.markers.end(), [](const Marker& m) { return m.kind == MarkerKind::end; }));
    const std::string svg = render_timeline_svg(t);
    CHECK_THAT(svg, Contains("no thermal.csv in this run directory"));
    CHECK_THAT(svg, Contains("peak per attempt"));
    CHECK_THAT(svg, Contains("no training step recognised in train.log"));
}

TEST_CASE("the text summary reads in ten seconds and fits 80 columns", "[report]") {
    const RunSummary s = summarize(night(10, 600));
    const std::string text = format_summary_text(s);
    CHECK_THAT(text, Contains("outcome   succeeded (exit 0): succeeded on attempt 3"));
    CHECK_THAT(text, Contains("2025-11-29 22:20:00 \xE2\x86\x92 2025-11-30 08:20:00 (UTC+01:00), 10h00m"));
    CHECK_THAT(text, Contains("  1  as given         batch 8, seq 1024\n     1h00m, step 100: OOM kernel-oom-kill while training:"));
    CHECK_THAT(text, Contains("  3  smaller-batch    batch 4\xC3\x97" "2, seq 1024\n     8h00m, steps 200\xE2\x86\x92" "300: succeeded\n"));
    CHECK_THAT(text, Contains("reproduce python train.py --per_device_train_batch_size 4"));
    CHECK_THAT(text, Contains("estimate 98.5 GB peak (training 91.0 GB): measured 105% of it"));
    CHECK_THAT(text, Contains("budget 115.0 GB (fits)"));
    CHECK_THAT(text, Contains("throttle  1 episode"));
    for (const auto& line : split(text, '\n')) {
        if (line.rfind("reproduce", 0) == 0) continue;
        INFO(line);
        CHECK(std::count_if(line.begin(), line.end(), [](char c) { return (c & 0xC0) != 0x80; }) <= 80);
    }
}

TEST_CASE("an attempt that srun ended names the node and task that ended first", "[report]") {
    RunInputs in = night(10, 600);
    in.report.attempts[0].node = "node2";
    in.report.attempts[0].rank = "1";
    const std::string text = format_summary_text(summarize(in));
    CHECK_THAT(text, Contains("step 100: OOM kernel-oom-kill while training on node2 (task 1):"));
}

TEST_CASE("the timeline marks what happened where it happened", "[report]") {
    const RunInputs in = night(10, 600);
    const RunSummary s = summarize(in);
    const Timeline t = build_timeline(in, s);
    CHECK(t.start == Approx(kStart));
    CHECK(t.end == Approx(kStart + 36000));
    REQUIRE(t.attempts.size() == 3);
    CHECK(t.attempts[1].rung == "drop-caches");
    CHECK(t.markers.size() == 7);  // 2 OOMs, 2 rungs, power cap, throttle, end
    CHECK(t.temp_c.size() == 3);   // one segment per attempt
    CHECK(t.estimate_gb == 98.5);
    CHECK(t.thermal_note.empty());

    const std::string svg = render_timeline_svg(t);
    CHECK(count(svg, "<title>OOM kernel-oom-kill") == 2);
    CHECK(count(svg, "stroke=\"#e03131\" stroke-width=\"2\"") == 3);  // two OOMs and the key's sample
    CHECK_THAT(svg, Contains("<title>throttle: step time \xC3\x97" "1.60, 85 \xC2\xB0" "C, 99 W</title>"));
    CHECK_THAT(svg, Contains(">1 \xC2\xB7 as given</text>"));  // an hour of ten is too narrow for more
    CHECK_THAT(svg, Contains(">attempt 3 \xC2\xB7 smaller-batch</text>"));
    CHECK_THAT(svg, Contains("&lt;b&gt;&amp;amp;"));  // the evidence, escaped
    CHECK_THAT(svg, Contains("estimate 98.5 GB"));
    CHECK_THAT(svg, Contains(">23:00</text>"));
    CHECK_THAT(svg, Contains(">11-30</text>"));  // midnight shows the date
    CHECK_THAT(svg, Contains(">+1h40m</text>"));
}

TEST_CASE("a ten-hour run of 36000 samples stays small", "[report]") {
    const RunInputs in = night(10, 36000);
    const std::string svg = render_timeline_svg(build_timeline(in, summarize(in)));
    CHECK(svg.size() < 250 * 1024);
    std::regex points_attr("points=\"([^\"]*)\"");
    size_t most = 0;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), points_attr); it != std::sregex_iterator(); ++it)
        most = std::max(most, static_cast<size_t>(std::count((*it)[1].first, (*it)[1].second, ' ') + 1));
    CHECK(most <= 2 * 1200);  // at most two points per pixel column
    CHECK(most > 100);
}

TEST_CASE("a two-minute run gets second ticks, a night gets hours", "[report]") {
    CHECK(tick_step(120, 11) == 15);
    CHECK(tick_step(36000, 11) == 3600);
    CHECK(tick_step(5, 11) == 1);
    CHECK(tick_step(86400 * 30, 11) == 86400 * 3);
    const RunInputs in = night(2.0 / 60, 120);
    const std::string svg = render_timeline_svg(build_timeline(in, summarize(in)));
    CHECK_THAT(svg, Contains(">22:20:15</text>"));
    CHECK_THAT(svg, Contains(">+15s</text>"));
}

TEST_CASE("text from logs is escaped for XML", "[report]") {
    CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
    CHECK(xml_escape("bad \xFF byte\x01") == "bad \xEF\xBF\xBD byte\xEF\xBF\xBD");
    CHECK(xml_escape("\xEF\xBF\xBE\xEF\xBF\xBF ok") == "\xEF\xBF\xBD\xEF\xBF\xBD ok");
    CHECK(xml_escape("\x1B[31mred\x1B[0m") == "red");
}
