#include "oom/srun_output.hpp"

#include <csignal>
#include <regex>

namespace sg::oom {
namespace {

// srun's --label puts "N: " before a task's lines; its own lines may carry it when forwarded.
std::string_view without_label(std::string_view line) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t digits = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    if (i > digits && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ') return line.substr(i + 2);
    return line;
}

std::optional<ExitStatus> status_from_words(const std::string& what) {
    static const std::regex exited(R"(Exited with exit code (\d+))");
    std::smatch m;
    if (std::regex_search(what, m, exited)) return ExitStatus::exited(std::stoi(m[1].str()));
    if (what.starts_with("Killed")) return ExitStatus::killed(SIGKILL);
    if (what.starts_with("Terminated")) return ExitStatus::killed(SIGTERM);
    if (what.starts_with("Segmentation fault")) return ExitStatus::killed(SIGSEGV);
    if (what.starts_with("Aborted")) return ExitStatus::killed(SIGABRT);
    if (what.starts_with("Bus error")) return ExitStatus::killed(SIGBUS);
    if (what.starts_with("Interrupt")) return ExitStatus::killed(SIGINT);
    return std::nullopt;
}

}  // namespace

int SrunTaskEnd::exit_code() const {
    if (status.code) return *status.code;
    if (status.signal) return 128 + *status.signal;
    return 128 + SIGKILL;
}

std::optional<SrunTaskEnd> parse_srun_task_end(std::string_view text) {
    // srun's line may follow a task's unfinished one (a progress bar without its newline).
    std::string_view line = without_label(text);
    const size_t at = line.find("srun: error: ");
    if (at == std::string_view::npos) return std::nullopt;
    line.remove_prefix(at);
    static const std::regex task_end(R"(^srun: error: ([^:\s]+): tasks? ([0-9,\-]+): (.+)$)");
    const std::string s(line);
    std::smatch m;
    if (!std::regex_match(s, m, task_end)) return std::nullopt;
    SrunTaskEnd end{m[1].str(), m[2].str(), ExitStatus::unknown(), false, s};
    const std::string what = m[3].str();
    if (what.starts_with("Out Of Memory")) {
        end.out_of_memory = true;
        return end;
    }
    auto status = status_from_words(what);
    if (!status) return std::nullopt;
    end.status = *status;
    return end;
}

std::optional<NodeReport> parse_node_report(std::string_view text) {
    constexpr std::string_view kPrefix = "sparkguard-node: ";
    const size_t at = text.find(kPrefix);
    if (at == std::string_view::npos) return std::nullopt;
    std::string_view rest = text.substr(at + kPrefix.size());
    const size_t host_end = rest.find(": ");
    if (host_end == 0 || host_end == std::string_view::npos) return std::nullopt;
    const std::string_view after_host = rest.substr(host_end + 2);
    const size_t kind_end = after_host.find(": ");
    if (kind_end == std::string_view::npos) return std::nullopt;
    const auto kind = kind_from_name(after_host.substr(0, kind_end));
    if (!kind || *kind == Kind::none) return std::nullopt;  // "probe", "files in ...": not a death
    NodeReport report{std::string(rest.substr(0, host_end)), std::nullopt, *kind,
                      std::string(after_host.substr(kind_end + 2)), std::string(text.substr(at))};
    static const std::regex task(R"( \(task (\d+)\)$)");
    std::smatch m;
    if (std::regex_search(report.evidence, m, task)) {
        report.task = m[1].str();
        report.evidence.resize(static_cast<size_t>(m.position(0)));
    }
    return report;
}

void SrunCause::feed(std::string_view line) {
    if (!node_report_ && line.find("sparkguard-node: ") != std::string_view::npos) node_report_ = parse_node_report(line);
    if (cause_ || line.find("srun: error: ") == std::string_view::npos) return;
    cause_ = parse_srun_task_end(line);
}

}  // namespace sg::oom
