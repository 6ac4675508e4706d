#pragma once
// Splits a byte stream into lines on '\n' and '\r' (a progress bar's update is a line too), in
// bounded memory: a line longer than the limit comes out in pieces marked incomplete.

#include <cstring>
#include <string>
#include <string_view>

namespace sg {

class LineSplitter {
public:
    explicit LineSplitter(size_t max_line = 64 * 1024) : max_line_(max_line) {}

    // Calls emit(std::string_view line, bool complete) for every line finished by `data`;
    // `complete` is false for a piece of an over-long line (more of the same line follows).
    template <class Emit>
    void feed(std::string_view data, Emit&& emit) {
        for (size_t i = 0; i < data.size();) {
            if (after_cr_ && data[i] == '\n') {  // "\r\n" ends one line, not two
                after_cr_ = false;
                ++i;
                continue;
            }
            after_cr_ = false;
            const size_t end = line_end(data, i);
            std::string_view piece = data.substr(i, end - i);
            if (end == data.size()) {
                keep(piece, emit);
                return;
            }
            after_cr_ = data[end] == '\r';
            if (partial_.empty() && piece.size() <= max_line_) {
                emit(piece, true);  // the common case: no copy
            } else {
                keep(piece, emit);
                emit(std::string_view(partial_), true);
                partial_.clear();
            }
            i = end + 1;
        }
    }

    // End of stream: the last line, if it had no terminator.
    template <class Emit>
    void finish(Emit&& emit) {
        if (!partial_.empty()) emit(std::string_view(partial_), true);
        partial_.clear();
        after_cr_ = false;
    }

private:
    // The next '\n' or '\r' at or after `from`, or data.size(): two memchr scans, since a
    // carriage return is rare outside progress bars.
    static size_t line_end(std::string_view data, size_t from) {
        const char* begin = data.data() + from;
        const size_t length = data.size() - from;
        const void* newline = std::memchr(begin, '\n', length);
        const size_t until = newline ? static_cast<size_t>(static_cast<const char*>(newline) - begin) : length;
        const void* carriage = std::memchr(begin, '\r', until);
        return from + (carriage ? static_cast<size_t>(static_cast<const char*>(carriage) - begin) : until);
    }

    template <class Emit>
    void keep(std::string_view piece, Emit& emit) {
        while (partial_.size() + piece.size() > max_line_) {
            size_t take = max_line_ - partial_.size();
            partial_.append(piece.substr(0, take));
            emit(std::string_view(partial_), false);
            partial_.clear();
            piece.remove_prefix(take);
        }
        partial_.append(piece);
    }

    size_t max_line_;
    std::string partial_;
    bool after_cr_ = false;
};

}  // namespace sg
