#include "report/run_dir_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "report/run_dir.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"

namespace sg {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kChunk = 1 << 20;
constexpr size_t kMaxLine = 1 << 20;  // longer train.log lines are read up to here (the step is near the start)

void check_directory(const fs::path& dir) {
    std::error_code ec;
    const auto status = fs::status(dir, ec);
    if (!fs::exists(status)) throw UsageError(dir.string(), "no such run directory");
    if (!fs::is_directory(status)) throw UsageError(dir.string(), "not a directory (give the run directory)");
    if (::access(dir.c_str(), R_OK | X_OK) != 0) throw UsageError(dir.string(), "cannot read: " + errno_text(errno));
}

std::string read_or_throw(const fs::path& path) {
    auto text = read_file(path);
    if (!text) throw UsageError("cannot read " + text.error().message);
    return std::move(*text);
}

void read_report(const fs::path& path, RunInputs& in) {
    if (!fs::exists(path))
        throw UsageError(path.string(), "missing: not a sparkguard run directory, or sparkguard stopped before writing it");
    json document;
    try {
        document = json::parse(read_or_throw(path));
    } catch (const json::parse_error& e) {
        throw UsageError(path.string(), std::string("not JSON: ") + e.what());
    }
    try {
        in.report = report_from_json(document);
    } catch (const Failure& e) {
        throw UsageError(path.string(), std::string("not a sparkguard report: ") + e.what());
    }
    if (document.contains("telemetry")) in.telemetry = document["telemetry"];
}

template <class Parsed>
Parsed parsed_or_throw(Result<Parsed> parsed) {
    if (!parsed) throw UsageError(parsed.error().message);
    return std::move(*parsed);
}

void read_events(const fs::path& path, RunInputs& in) {
    if (!(in.has_events = fs::exists(path))) return;
    RunEvents events = parsed_or_throw(parse_run_events(read_or_throw(path), path.string()));
    in.events = std::move(events.events);
    in.warnings.insert(in.warnings.end(), events.warnings.begin(), events.warnings.end());
}

void read_thermal(const fs::path& path, RunInputs& in) {
    if (!(in.has_thermal = fs::exists(path))) return;
    telemetry::ThermalCsv csv = parsed_or_throw(
        telemetry::parse_thermal_csv(read_or_throw(path), path.string(), telemetry::Timestamps::rfc3339));
    in.thermal = std::move(csv.rows);
    in.warnings.insert(in.warnings.end(), csv.warnings.begin(), csv.warnings.end());
}

// The platform names the power-cap rules thermal.csv is judged by; only a summary read back from
// thermal.csv needs it, so a file without one is a warning.
void read_platform(const fs::path& path, RunInputs& in) {
    if (!fs::exists(path)) return;
    const json env = json::parse(read_or_throw(path), nullptr, false);
    if (env.is_object() && env.contains("platform") && env["platform"].is_string()) in.platform = env["platform"].get<std::string>();
    else in.warnings.push_back(path.string() + ": no \"platform\": thermal.csv is judged by the power-cap event's or the driver's limit");
}

std::vector<double> attempt_starts(const RunReport& report) {
    std::vector<double> starts;
    for (const auto& a : report.attempts)
        if (auto t = parse_rfc3339(a.started)) starts.push_back(std::max(t->epoch_s, starts.empty() ? t->epoch_s : starts.back()));
    return starts;
}

// The file's descriptor, closed on every way out.
class ReadFd {
public:
    explicit ReadFd(const fs::path& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        if (fd_ < 0) throw UsageError(path.string(), "cannot read: " + errno_text(errno));
    }
    ReadFd(const ReadFd&) = delete;
    ReadFd& operator=(const ReadFd&) = delete;
    ~ReadFd() { ::close(fd_); }
    int get() const { return fd_; }

private:
    int fd_;
};

// Feeds train.log to `steps` a chunk at a time: the file can be far larger than memory wants.
void stream_train_log(const fs::path& path, TrainLogSteps& steps) {
    const ReadFd fd(path);
    std::vector<char> buffer(kChunk);
    std::string line;
    size_t number = 0;
    auto deliver = [&](bool unterminated) {
        ++number;
        if (line.find_first_not_of(" \t") != std::string::npos)
            if (Status fed = steps.line(line, number, unterminated); !fed) throw UsageError(fed.error().message);
        line.clear();
    };
    for (;;) {
        const ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw UsageError(path.string(), "cannot read: " + errno_text(errno));
        if (n == 0) break;
        std::string_view data(buffer.data(), static_cast<size_t>(n));
        for (size_t end; (end = data.find('\n')) != std::string_view::npos; data.remove_prefix(end + 1)) {
            line.append(data.substr(0, std::min(end, kMaxLine - std::min(line.size(), kMaxLine))));
            deliver(false);
        }
        line.append(data.substr(0, kMaxLine - std::min(line.size(), kMaxLine)));
    }
    if (!line.empty()) deliver(true);
}

void read_train_log(const fs::path& path, RunInputs& in) {
    if (!(in.has_train_log = fs::exists(path))) return;
    TrainLogSteps steps(attempt_starts(in.report), path.string());
    stream_train_log(path, steps);
    in.steps = steps.points();
    in.log_first = steps.first_time();
    in.log_last = steps.last_time();
    in.warnings.insert(in.warnings.end(), steps.warnings().begin(), steps.warnings().end());
}

std::vector<std::string> stall_files(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("stall-", 0) == 0 && entry.path().extension() == ".txt") names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

std::map<std::string, std::vector<telemetry::ThermalRow>> read_node_thermal(const fs::path& dir,
                                                                            std::vector<std::string>& warnings) {
    std::map<std::string, std::vector<telemetry::ThermalRow>> nodes;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir / "nodes", error)) {
        const fs::path csv = entry.path() / "thermal.csv";
        if (!fs::exists(csv)) continue;
        auto text = read_file(csv);
        if (!text) {
            warnings.push_back(csv.string() + ": " + text.error().message);
            continue;
        }
        auto parsed = telemetry::parse_thermal_csv(*text, csv.string(), telemetry::Timestamps::rfc3339);
        if (!parsed) {
            warnings.push_back(parsed.error().message);
            continue;
        }
        warnings.insert(warnings.end(), parsed->warnings.begin(), parsed->warnings.end());
        nodes[entry.path().filename().string()] = std::move(parsed->rows);
    }
    return nodes;
}

RunInputs read_run_dir(const fs::path& dir) {
    check_directory(dir);
    const RunDir run{dir};
    RunInputs in;
    in.run_dir = dir.string();
    read_report(run.report(), in);
    read_platform(run.env_report(), in);
    read_events(run.events(), in);
    read_thermal(run.thermal(), in);
    in.node_thermal = read_node_thermal(dir, in.warnings);
    read_train_log(run.train_log(), in);
    in.stall_files = stall_files(dir);
    return in;
}

}  // namespace sg
