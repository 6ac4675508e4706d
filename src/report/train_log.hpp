#pragma once
// train.log: every line of every attempt, prefixed by the same RFC 3339 timestamp as
// thermal.csv and events.jsonl, and by its source ("stdout", "stderr", "sparkguard").
// A piece of an over-long line is tagged "stdout+" (the line continues in the next entry).

#include <filesystem>
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

private:
    int fd_ = -1;
    std::filesystem::path path_;
    std::string buffer_;
    std::string stamp_;
    long long stamp_millis_ = -1;  // stamp_ is formatted once per millisecond at most
    bool failed_ = false;
};

}  // namespace sg
