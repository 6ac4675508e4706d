#include "report/train_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "util/clock.hpp"
#include "util/errors.hpp"
#include "util/files.hpp"
#include "util/log.hpp"

namespace sg {

TrainLog::TrainLog(const std::filesystem::path& path) : path_(path) {
    stamp_now();
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Failure(path.string(), errno_text(errno));
}

TrainLog::~TrainLog() {
    flush();
    if (fd_ >= 0) ::close(fd_);
}

void TrainLog::stamp_now() {
    const auto now = std::chrono::system_clock::now();
    const long long millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    if (millis != stamp_millis_) {
        stamp_ = rfc3339(now);
        stamp_millis_ = millis;
    }
}

void TrainLog::line(std::string_view tag, std::string_view text) {
    if (stamp_millis_ < 0) stamp_now();
    buffer_ += stamp_;
    buffer_ += ' ';
    buffer_ += tag;
    buffer_ += ' ';
    buffer_ += text;
    buffer_ += '\n';
    if (buffer_.size() > (1 << 20)) flush();
}

void TrainLog::flush() {
    std::string_view data = buffer_;
    while (!data.empty() && !failed_) {
        ssize_t n = ::write(fd_, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            failed_ = true;  // a full disk must not stop the training; say so once
            spdlog::error("{}: {}; train.log stops here, the trainer goes on", path_.string(), errno_text(errno));
            break;
        }
        data.remove_prefix(static_cast<size_t>(n));
    }
    buffer_.clear();
}

}  // namespace sg
