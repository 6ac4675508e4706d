#pragma once
// train.log: every line of every attempt, prefixed by the same RFC 3339 timestamp as
// thermal.csv and events.jsonl, and by its source ("stdout", "stderr", "sparkguard").
// A piece of an over-long line is tagged "stdout+" (the line continues in the next entry).

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sg {

class TrainLog {
public:
    // Appends to `path`; throws Failure when it cannot be opened.
    explicit TrainLog(const std::filesystem::path& path);
    ~TrainLog();
    TrainLog(const TrainLog&) = delete;
    TrainLog& operator=(const TrainLog&) = delete;

    // Reads the clock for the lines that follow (one reading per read of output, not per line).
    void stamp_now();
    void line(std::string_view tag, std::string_view text);
    void flush();  // hands buffered lines to the kernel
    // Bytes in the file once flushed: where the next line will start.
    std::uint64_t size() const { return size_ + buffer_.size(); }
    const std::filesystem::path& path() const { return path_; }

private:
    int fd_ = -1;
    std::filesystem::path path_;
    std::string buffer_;
    std::string stamp_;
    long long stamp_millis_ = -1;  // stamp_ is formatted once per millisecond at most
    std::uint64_t size_ = 0;       // bytes the file holds
    bool failed_ = false;
};

// A train.log line's parts, "TIMESTAMP TAG TEXT"; nullopt when it does not have that shape.
struct TrainLogLine {
    std::string_view stamp;
    std::string_view tag;   // stdout, stderr, stdout+, stderr+ or sparkguard
    std::string_view text;
    bool from_trainer() const { return tag != "sparkguard"; }
};
std::optional<TrainLogLine> split_train_log_line(std::string_view line);

// Calls `each` with every complete line of train.log between byte offsets `from` and `to`
// (a line cut at `from` is skipped). Returns false when the file cannot be read.
bool for_each_train_log_line(const std::filesystem::path& path, std::uint64_t from, std::uint64_t to,
                             const std::function<void(const TrainLogLine&)>& each);

}  // namespace sg
