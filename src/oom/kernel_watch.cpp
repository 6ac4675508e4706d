#include "oom/kernel_watch.hpp"

#include <fcntl.h>
#include <sys/klog.h>
#include <unistd.h>

#include <cerrno>

#include "util/files.hpp"
#include "util/strings.hpp"

namespace sg::oom {
namespace {

constexpr int kSyslogReadAll = 3;     // SYSLOG_ACTION_READ_ALL
constexpr int kSyslogBufferSize = 10; // SYSLOG_ACTION_SIZE_BUFFER
constexpr size_t kKmsgRecordMax = 8192;
constexpr size_t kNvrmKept = 8;

Result<long long> read_counter(const std::filesystem::path& file) {
    auto text = read_file(file);
    if (!text) return text.error();
    return parse_oom_kill_counter(*text, file.string());
}

// "<4>[  514.682838] Memory cgroup out of memory: ..." → without the "<4>".
std::string_view without_level(std::string_view line) {
    if (line.starts_with('<')) {
        const size_t close = line.find('>');
        if (close != std::string_view::npos && close < 5) line.remove_prefix(close + 1);
    }
    return line;
}

std::vector<std::string> read_syslog() {
    const int size = ::klogctl(kSyslogBufferSize, nullptr, 0);
    if (size <= 0) return {};
    std::string buffer(static_cast<size_t>(size), '\0');
    const int n = ::klogctl(kSyslogReadAll, buffer.data(), size);
    if (n <= 0) return {};
    buffer.resize(static_cast<size_t>(n));
    return split(buffer, '\n');
}

}  // namespace

KernelWatch KernelWatch::start(int trainer_pid, const Sources& sources) {
    KernelWatch watch;
    watch.open_kernel_log(sources);
    watch.watch_cgroup(trainer_pid, sources);
    watch.vmstat_ = sources.proc / "vmstat";
    if (auto counter = read_counter(watch.vmstat_)) watch.vmstat_start_ = *counter;
    return watch;
}

KernelWatch::KernelWatch(KernelWatch&& other) noexcept
    : kmsg_fd_(std::exchange(other.kmsg_fd_, -1)),
      syslog_(other.syslog_),
      syslog_mark_(std::move(other.syslog_mark_)),
      scanner_(other.scanner_),
      kills_(std::move(other.kills_)),
      nvrm_(std::move(other.nvrm_)),
      cgroup_counter_(std::move(other.cgroup_counter_)),
      cgroup_start_(other.cgroup_start_),
      vmstat_(std::move(other.vmstat_)),
      vmstat_start_(other.vmstat_start_),
      unavailable_(std::move(other.unavailable_)) {}

KernelWatch::~KernelWatch() {
    if (kmsg_fd_ >= 0) ::close(kmsg_fd_);
}

// Opens kmsg at its end, so only records written after the launch are read.
void KernelWatch::open_kernel_log(const Sources& sources) {
    kmsg_fd_ = ::open(sources.kmsg.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (kmsg_fd_ >= 0) {
        ::lseek(kmsg_fd_, 0, SEEK_END);
        return;
    }
    const std::string why = sources.kmsg.string() + ": " + errno_text(errno);
    if (sources.syslog_fallback && ::klogctl(kSyslogBufferSize, nullptr, 0) > 0) {
        auto lines = read_syslog();
        if (!lines.empty()) {
            syslog_ = true;
            while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
            syslog_mark_ = lines.empty() ? "" : lines.back();
            return;
        }
    }
    unavailable_.push_back(why);
}

void KernelWatch::watch_cgroup(int trainer_pid, const Sources& sources) {
    const auto cgroup_file = sources.proc / std::to_string(trainer_pid) / "cgroup";
    auto cgroups = read_file(cgroup_file);
    auto mountinfo = read_file(sources.proc / "self" / "mountinfo");
    if (!cgroups || !mountinfo) {
        unavailable_.push_back(!cgroups ? cgroups.error().message : mountinfo.error().message);
        return;
    }
    cgroup_counter_ = oom_counter_file(parse_proc_cgroup(*cgroups), parse_cgroup_mounts(*mountinfo));
    if (!cgroup_counter_) {
        unavailable_.push_back(cgroup_file.string() + ": no memory cgroup of its own with an OOM-kill counter");
        return;
    }
    auto counter = read_counter(*cgroup_counter_);
    if (counter) cgroup_start_ = *counter;
    else unavailable_.push_back(counter.error().message);
}

void KernelWatch::scan(std::string_view line) {
    if (auto record = scanner_.feed(line)) kills_.push_back(std::move(*record));
    if (nvrm_.size() < kNvrmKept && is_nvrm_memory_record(line)) nvrm_.emplace_back(line);
}

std::optional<std::string> KernelWatch::nvrm_no_memory() const {
    for (const auto& record : nvrm_)
        if (record.find("NV_ERR_NO_MEMORY") != std::string::npos) return record;
    return std::nullopt;
}

void KernelWatch::poll() {
    if (kmsg_fd_ < 0) return;
    char buffer[kKmsgRecordMax];
    for (;;) {
        const ssize_t n = ::read(kmsg_fd_, buffer, sizeof buffer);
        if (n > 0) {
            if (auto record = parse_kmsg_record(std::string_view(buffer, static_cast<size_t>(n)))) scan(record->message);
            continue;
        }
        if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;  // EPIPE: older records were overwritten
        break;  // EAGAIN: nothing more for now
    }
}

// The syslog buffer's lines written after start(); all of them when the mark has scrolled away.
std::vector<std::string> KernelWatch::syslog_lines_after_mark() {
    auto lines = read_syslog();
    for (size_t i = lines.size(); i-- > 0;)
        if (lines[i] == syslog_mark_) return {lines.begin() + static_cast<std::ptrdiff_t>(i) + 1, lines.end()};
    return lines;
}

KernelEvidence KernelWatch::collect(const std::set<int>& trainer_pids) {
    KernelEvidence evidence;
    poll();
    if (syslog_)
        for (const auto& line : syslog_lines_after_mark()) scan(without_level(line));
    evidence.kernel_log_read = kmsg_fd_ >= 0 || syslog_;
    for (const auto& record : kills_)
        (trainer_pids.count(record.pid) ? evidence.trainer_kills : evidence.other_kills).push_back(record);
    kills_.clear();
    evidence.nvrm_records = nvrm_;
    if (cgroup_counter_ && cgroup_start_) {
        if (auto now = read_counter(*cgroup_counter_)) {
            evidence.cgroup_oom_kills = *now - *cgroup_start_;
            evidence.cgroup_counter = cgroup_counter_->string();
        } else {
            unavailable_.push_back(now.error().message);
        }
    }
    if (vmstat_start_)
        if (auto now = read_counter(vmstat_)) evidence.system_oom_kills = *now - *vmstat_start_;
    evidence.unavailable = unavailable_;
    return evidence;
}

}  // namespace sg::oom
