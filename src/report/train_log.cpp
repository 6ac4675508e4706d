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
    const off_t end = ::lseek(fd_, 0, SEEK_END);  // --resume-run appends
    size_ = end > 0 ? static_cast<std::uint64_t>(end) : 0;
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
        size_ += static_cast<std::uint64_t>(n);
    }
    buffer_.clear();
}

bool for_each_train_log_line(const std::filesystem::path& path, std::uint64_t from, std::uint64_t to,
                             const std::function<void(const TrainLogLine&)>& each) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string buffer;
    std::string carry;
    bool skip_first = false;
    if (from > 0) {  // did `from` cut a line? Only when the byte before it is not a newline.
        char before = '\n';
        skip_first = ::pread(fd, &before, 1, static_cast<off_t>(from - 1)) == 1 && before != '\n';
    }
    constexpr size_t kPiece = 1 << 20;
    for (std::uint64_t at = from; at < to;) {
        buffer.resize(static_cast<size_t>(std::min<std::uint64_t>(kPiece, to - at)));
        const ssize_t n = ::pread(fd, buffer.data(), buffer.size(), static_cast<off_t>(at));
        if (n <= 0) break;
        at += static_cast<std::uint64_t>(n);
        std::string_view data(buffer.data(), static_cast<size_t>(n));
        for (size_t newline; (newline = data.find('\n')) != std::string_view::npos; data.remove_prefix(newline + 1)) {
            std::string_view line = data.substr(0, newline);
            if (!carry.empty()) {
                carry.append(line);
                line = carry;
            }
            if (!skip_first)
                if (auto parts = split_train_log_line(line)) each(*parts);
            skip_first = false;
            carry.clear();
        }
        carry.append(data);
    }
    ::close(fd);
    return true;
}

std::optional<TrainLogLine> split_train_log_line(std::string_view line) {
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const size_t tag_end = line.find(' ', space + 1);
    TrainLogLine out;
    out.stamp = line.substr(0, space);
    out.tag = line.substr(space + 1, tag_end == std::string_view::npos ? std::string_view::npos : tag_end - space - 1);
    out.text = tag_end == std::string_view::npos ? std::string_view() : line.substr(tag_end + 1);
    return out;
}

}  // namespace sg
