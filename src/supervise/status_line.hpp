#pragma once
// The live status line: one line on stderr, redrawn in place on the terminal's bottom row, only
// when stderr is a terminal. The trainer's output scrolls above it and is never mixed into it.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sg {

struct StatusInfo {
    int attempt = 0;
    std::optional<std::string> rung;
    std::optional<long long> step;
    std::optional<long long> total_steps;
    std::optional<double> steps_per_second;
    std::optional<double> gpu_temp_c;
    std::optional<double> gpu_power_w;
    std::optional<double> pool_used_gb;
    std::optional<double> pool_total_gb;
    double elapsed_seconds = 0;
    double quiet_seconds = 0;  // since the last output or step
    bool stalled = false;
};

// The line itself, at most `width` columns, with ANSI dim/bold when `color`.
std::string format_status(const StatusInfo& info, size_t width, bool color);

class StatusLine {
public:
    // A status line on stderr when it is a terminal (not TERM=dumb: it cannot move the cursor)
    // and not `quiet`; nullptr otherwise. Color unless $NO_COLOR is set (https://no-color.org).
    static std::unique_ptr<StatusLine> open_on_terminal(bool quiet);
    ~StatusLine();  // gives the terminal its last row back
    StatusLine(const StatusLine&) = delete;
    StatusLine& operator=(const StatusLine&) = delete;

    // Shows `info` on the reserved bottom row, leaving the cursor where the trainer left it.
    void draw(const StatusInfo& info);

private:
    explicit StatusLine(bool color);
    // Keeps the terminal's bottom row out of the scrolling region (as apt's progress line does),
    // so the trainer's lines, tqdm bars included, scroll above it and are never written over.
    void reserve_bottom_row(unsigned rows);
    void release_bottom_row();
    void write_raw(std::string_view text);

    bool color_;
    unsigned rows_ = 0;  // the terminal's height when the row was reserved; 0: none reserved
    std::string last_;
};

}  // namespace sg
