#include "accounting/history_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "util/clock.hpp"
#include "util/files.hpp"
#include "util/paths.hpp"

namespace sg::accounting {

namespace fs = std::filesystem;

fs::path history_path() { return user_state_dir() / "history.jsonl"; }

HistoryFile read_history(const fs::path& file) {
    std::error_code ec;
    if (!fs::exists(file, ec)) return {};
    auto text = read_file(file);
    if (!text) return {{}, {}, {"history " + file.string() + " not read: " + text.error().message}};
    return parse_history(*text, file.filename().string());
}

std::optional<std::string> append_history(const fs::path& file, const nlohmann::json& entry) {
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return file.parent_path().string() + ": " + ec.message();
    const std::string line = entry.dump() + "\n";
    const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return file.string() + ": " + errno_text(errno);
    const ssize_t written = ::write(fd, line.data(), line.size());
    const int error = errno;
    ::close(fd);
    if (written != static_cast<ssize_t>(line.size()))
        return file.string() + ": " + (written < 0 ? errno_text(error) : std::string("short write"));
    return std::nullopt;
}

std::optional<std::string> record_attempt(const Plan& plan, const nlohmann::json& measured, bool oom,
                                          std::optional<long> last_step, const std::string& profile) {
    return append_history(history_path(), history_entry(plan, measured, oom, last_step, profile, rfc3339_now()));
}

}  // namespace sg::accounting
