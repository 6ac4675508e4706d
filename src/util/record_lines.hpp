#pragma once
// Line-per-record files read back (events.jsonl, thermal.csv, train.log). A run can be killed
// mid-write, so a torn record is a warning, never fatal: the file's last line when no newline
// ended it, or a line into which the next record was appended after a crash cut it. Any other
// line that does not parse makes the file malformed, and the error names file, line and field.

#include <string>
#include <string_view>

namespace sg {

struct RecordLine {
    std::string_view text;
    size_t number = 0;               // 1-based
    bool unterminated_last = false;  // the file ended inside this line
};

// Calls visit(const RecordLine&) for each line of `text` that is not blank; stops early and
// returns false when visit does.
template <class Visit>
bool for_each_record_line(std::string_view text, Visit&& visit) {
    size_t number = 0;
    for (size_t start = 0; start < text.size();) {
        const size_t end = text.find('\n', start);
        const bool unterminated = end == std::string_view::npos;
        std::string_view line = text.substr(start, unterminated ? std::string_view::npos : end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        ++number;
        if (line.find_first_not_of(" \t") != std::string_view::npos && !visit(RecordLine{line, number, unterminated}))
            return false;
        if (unterminated) break;
        start = end + 1;
    }
    return true;
}

// "thermal.csv:812: torn line ignored (the run was stopped while writing it)".
std::string torn_warning(std::string_view file_name, size_t line_number);

// "events.jsonl:12: field 'time': not an RFC 3339 timestamp: '...'" (no field part when empty).
std::string line_error(std::string_view file_name, size_t line_number, std::string_view field, std::string_view why);

}  // namespace sg
