#include "supervise/memory_guard_probe.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <charconv>
#include <cstring>

#include "util/clock.hpp"
#include "util/log.hpp"

namespace sg {

namespace {

constexpr double kGB = 1e9;

std::optional<double> field_bytes(std::string_view text, std::string_view key) {
    const size_t at = text.find(key);
    if (at == std::string_view::npos) return std::nullopt;
    size_t i = at + key.size();
    while (i < text.size() && text[i] == ' ') ++i;
    unsigned long long kib = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), kib);
    if (ec != std::errc()) return std::nullopt;
    return static_cast<double>(kib) * 1024;
}

double gb(double bytes) { return static_cast<double>(static_cast<long long>(bytes / kGB * 1000)) / 1000; }

}  // namespace

std::string lock_own_memory() {
    if (::geteuid() == 0 && ::mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) == 0) return "locked (current and future)";
    if (::mlockall(MCL_CURRENT | MCL_ONFAULT) == 0) return "locked (current)";
    return std::string("not locked: ") + std::strerror(errno);
}

std::optional<PoolReading> parse_pool(std::string_view meminfo) {
    auto total = field_bytes(meminfo, "MemTotal:");
    auto available = field_bytes(meminfo, "MemAvailable:");
    if (!total || !available) return std::nullopt;
    return PoolReading{*total, *available};
}

MemoryGuardProbe::MemoryGuardProbe(const oom::GuardSettings& settings, const EventLog& events, int attempt, Hooks hooks)
    : guard_(settings), events_(events), attempt_(attempt), hooks_(std::move(hooks)) {
    meminfo_fd_ = ::open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
    if (meminfo_fd_ < 0) spdlog::warn("memory guard: /proc/meminfo: {}", std::strerror(errno));
    open_psi_trigger();
}

MemoryGuardProbe::~MemoryGuardProbe() {
    if (meminfo_fd_ >= 0) ::close(meminfo_fd_);
    if (psi_fd_ >= 0) ::close(psi_fd_);
}

// A wake-up when tasks stall on memory 100 ms in a second (unprivileged: 2 s windows at least).
void MemoryGuardProbe::open_psi_trigger() {
    for (const char* trigger : {"some 100000 1000000", "some 200000 2000000"}) {
        int fd = ::open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return;
        if (::write(fd, trigger, std::strlen(trigger) + 1) >= 0) {
            psi_fd_ = fd;
            return;
        }
        ::close(fd);
    }
}

double MemoryGuardProbe::sample() {
    const double slow = guard_.settings().max_interval;
    if (meminfo_fd_ < 0 || fired_) return slow;
    std::array<char, 8192> buffer;
    const ssize_t n = ::pread(meminfo_fd_, buffer.data(), buffer.size(), 0);
    if (n <= 0) return slow;
    const auto pool = parse_pool(std::string_view(buffer.data(), static_cast<size_t>(n)));
    if (!pool) return slow;
    ++readings_;
    const double now = monotonic_seconds();
    std::optional<std::string> nvrm;
    if (pool->available < guard_.settings().floor && hooks_.nvrm_no_memory) nvrm = hooks_.nvrm_no_memory();
    const oom::GuardDecision d = guard_.feed({now, pool->available, pool->total}, nvrm);
    if (d.kill) {
        evidence_ = d.evidence;
        hooks_.kill("memory guard: " + d.evidence);
        fired_ = nlohmann::json{{"available_gb", gb(pool->available)}, {"floor_gb", gb(guard_.settings().floor)},
                                {"pool_gb", gb(pool->total)}, {"fall_rate_gb_per_s", gb(d.fall_rate)},
                                {"nvrm", nvrm ? nlohmann::json(*nvrm) : nlohmann::json()}};
        spdlog::warn("memory guard: {}; the trainer's tree was killed", d.evidence);
    }
    if (d.memory_low)
        events_.write_durable("memory-low", {{"attempt", attempt_}, {"available_gb", gb(pool->available)},
                                             {"floor_gb", gb(guard_.settings().floor)}, {"pool_gb", gb(pool->total)},
                                             {"fall_rate_gb_per_s", gb(d.fall_rate)}});
    return d.next_reading_in;
}

nlohmann::json MemoryGuardProbe::measured() const {
    nlohmann::json m = {{"floor_gb", gb(guard_.settings().floor)}, {"readings", readings_},
                        {"psi_trigger", psi_fd_ >= 0}};
    if (auto lowest = guard_.lowest_available()) m["lowest_available_gb"] = gb(*lowest);
    if (fired_) m["at_kill"] = *fired_;
    return m;
}

std::unique_ptr<MemoryGuardProbe> arm_memory_guard(double floor_bytes, const EventLog& events, int attempt, Session& session,
                                                   std::optional<oom::KernelWatch>& watch, AttemptSpec& spec) {
    MemoryGuardProbe::Hooks hooks{[&session](const std::string& reason) { session.kill_now(reason); },
                                  [&watch]() -> std::optional<std::string> {
                                      if (!watch) return std::nullopt;
                                      watch->poll();
                                      return watch->nvrm_no_memory();
                                  }};
    auto guard = std::make_unique<MemoryGuardProbe>(oom::guard_settings(floor_bytes), events, attempt, std::move(hooks));
    MemoryGuardProbe* probe = guard.get();
    spec.sampler = [probe] { return probe->sample(); };
    spec.sampler_wake_fd = probe->wake_fd();
    return guard;
}

}  // namespace sg
