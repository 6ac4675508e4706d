// Every real log in tests/data/logs against what its manifest entry says diagnose must answer.
#include <catch2/catch.hpp>

#include <set>

#include <nlohmann/json.hpp>

#include "oom/log_diagnosis.hpp"
#include "util/files.hpp"

using namespace sg;
using namespace sg::oom;
using nlohmann::json;

namespace {

const fs::path kLogs = fs::path(SPARKGUARD_TEST_DATA) / "logs";

json manifest() {
    auto text = read_file(kLogs / "manifest.json");
    REQUIRE(text);
    return json::parse(*text);
}

ExitStatus exit_of(const json& c) {
    return c.contains("exit") ? ExitStatus::from_number(c["exit"].get<int>()) : ExitStatus::unknown();
}

// diagnose's view: no kernel evidence, only the log.
KernelEvidence log_only() {
    KernelEvidence kernel;
    kernel.unavailable.push_back("diagnose reads only the log");
    return kernel;
}

void check(const std::string& file, const std::string& text, const json& c) {
    const LogDiagnosis d = diagnose_log(text, exit_of(c), log_only());
    INFO(file << " with " << exit_of(c).describe() << ": " << d.verdict.reason << " | evidence: " << d.verdict.evidence);
    CHECK(d.verdict.oom == c["oom"].get<bool>());
    if (c.contains("kind")) CHECK(kind_name(d.verdict.kind) == c["kind"].get<std::string>());
    if (c.contains("phase")) CHECK((d.verdict.phase ? std::string(phase_name(*d.verdict.phase)) : "null") == c["phase"].get<std::string>());
    if (c.contains("confidence"))
        CHECK((d.verdict.confidence ? std::string(confidence_name(*d.verdict.confidence)) : "null") == c["confidence"].get<std::string>());
    if (c.contains("line")) CHECK(d.verdict.evidence_line == c["line"].get<long long>());
    if (c.contains("last_step")) CHECK(d.last_step == c["last_step"].get<long long>());
    if (c.contains("total_steps")) CHECK(d.total_steps == c["total_steps"].get<long long>());
    if (!c["oom"].get<bool>()) CHECK(d.verdict.kind == Kind::none);
}

}  // namespace

TEST_CASE("every real log gets the verdict its manifest entry records", "[classifier][logs]") {
    const json m = manifest();
    REQUIRE(m["logs"].size() >= 40);
    for (const auto& entry : m["logs"]) {
        const std::string file = entry["file"];
        auto text = read_file(kLogs / file);
        REQUIRE(text);
        REQUIRE(!entry["source"].get<std::string>().empty());
        for (const auto& c : entry["cases"]) check(file, *text, c);
    }
}

TEST_CASE("every log file is in the manifest and cites its source", "[classifier][logs]") {
    const json m = manifest();
    std::set<std::string> listed;
    for (const auto& entry : m["logs"]) {
        listed.insert(entry["file"].get<std::string>());
        CHECK(entry["url"].get<std::string>().starts_with("https://github.com/"));
    }
    for (const auto& file : fs::directory_iterator(kLogs))
        if (file.path().extension() == ".log") CHECK(listed.count(file.path().filename().string()) == 1);
}

TEST_CASE("the real logs give the same verdicts when fed in odd-sized chunks", "[classifier][logs]") {
    const json m = manifest();
    for (const auto& entry : m["logs"]) {
        auto text = read_file(kLogs / entry["file"].get<std::string>());
        REQUIRE(text);
        const auto& c = entry["cases"][0];
        const LogDiagnosis whole = diagnose_log(*text, exit_of(c), log_only());
        LogDiagnoser pieces;
        for (size_t i = 0; i < text->size(); i += 7) pieces.chunk(std::string_view(*text).substr(i, 7));
        const LogDiagnosis chunked = pieces.finish(exit_of(c), log_only());
        INFO(entry["file"]);
        CHECK(chunked.verdict.oom == whole.verdict.oom);
        CHECK(chunked.verdict.kind == whole.verdict.kind);
        CHECK(chunked.verdict.evidence_line == whole.verdict.evidence_line);
        CHECK(chunked.last_step == whole.last_step);
    }
}
