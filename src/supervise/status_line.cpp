#include "supervise/status_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "util/strings.hpp"

namespace sg {

namespace {

// Counts display columns of UTF-8 text: one per character that starts with a non-continuation byte.
size_t columns(std::string_view text) {
    size_t n = 0;
    for (unsigned char c : text) n += (c & 0xC0) != 0x80;
    return n;
}

std::string progress(const StatusInfo& i) {
    if (!i.step) return "no step yet";
    std::string text = "step " + std::to_string(*i.step) + (i.total_steps ? "/" + std::to_string(*i.total_steps) : "");
    if (i.steps_per_second && *i.steps_per_second > 0) {
        const double rate = *i.steps_per_second;
        text += rate >= 1 ? " · " + fixed(rate, 1) + " it/s" : " · " + fixed(1 / rate, 1) + " s/it";
        if (i.total_steps && *i.total_steps > *i.step) text += " · ETA " + format_duration(static_cast<double>(*i.total_steps - *i.step) / rate);
    }
    return text;
}

}  // namespace

std::string format_status(const StatusInfo& i, size_t width, bool color) {
    std::vector<std::string> fields;
    fields.push_back("attempt " + std::to_string(i.attempt) + (i.rung ? " (" + *i.rung + ")" : ""));
    fields.push_back(progress(i));
    if (i.gpu_temp_c || i.gpu_power_w)
        fields.push_back("GPU" + (i.gpu_temp_c ? " " + fixed(*i.gpu_temp_c, 0) + "°C" : "") +
                         (i.gpu_power_w ? " " + fixed(*i.gpu_power_w, 0) + " W" : ""));
    if (i.pool_used_gb && i.pool_total_gb)
        fields.push_back("pool " + fixed(*i.pool_used_gb, 1) + "/" + fixed(*i.pool_total_gb, 0) + " GB");
    if (i.stalled) fields.push_back("STALLED");
    else if (i.quiet_seconds >= 60) fields.push_back("quiet " + format_duration(i.quiet_seconds));
    fields.push_back(format_duration(i.elapsed_seconds));

    std::string plain = "sparkguard";
    size_t used = plain.size();
    std::string out = color ? "\x1b[1msparkguard\x1b[0m" : plain;
    for (const auto& field : fields) {
        const size_t need = 3 + columns(field);
        if (used + need > width) break;  // drop what does not fit rather than wrap
        const bool alarm = color && (field == "STALLED" || field.rfind("quiet", 0) == 0);
        out += color ? "\x1b[2m │ \x1b[0m" : " │ ";
        out += alarm ? "\x1b[1;33m" + field + "\x1b[0m" : field;
        used += need;
    }
    return out;
}

std::unique_ptr<StatusLine> StatusLine::open_on_terminal(bool quiet) {
    if (quiet || !::isatty(STDERR_FILENO)) return nullptr;
    const char* term = std::getenv("TERM");
    if (term && std::string_view(term) == "dumb") return nullptr;
    const char* no_color = std::getenv("NO_COLOR");
    return std::unique_ptr<StatusLine>(new StatusLine(!(no_color && *no_color)));
}

StatusLine::StatusLine(bool color) : color_(color) {}

StatusLine::~StatusLine() { release_bottom_row(); }

void StatusLine::write_raw(std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text.remove_prefix(static_cast<size_t>(n));
    }
}

// ESC 7 / ESC 8 save and restore the cursor; setting the scrolling region homes the cursor, so
// it happens between them. The newline first makes room when the cursor is on the bottom row.
void StatusLine::reserve_bottom_row(unsigned rows) {
    write_raw("\n\x1b" "7\x1b[1;" + std::to_string(rows - 1) + "r\x1b" "8\x1b[1A");
    rows_ = rows;
}

void StatusLine::release_bottom_row() {
    if (!rows_) return;
    const std::string bottom = std::to_string(rows_);
    write_raw("\x1b" "7\x1b[1;" + bottom + "r\x1b[" + bottom + ";1H\x1b[2K\x1b" "8");
    rows_ = 0;
    last_.clear();
}

void StatusLine::draw(const StatusInfo& info) {
    winsize size{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) != 0 || size.ws_row < 3 || size.ws_col < 20) return;
    if (rows_ != size.ws_row) {  // first draw, or the terminal was resized
        release_bottom_row();
        reserve_bottom_row(size.ws_row);
    }
    std::string line = format_status(info, size.ws_col - 1u, color_);
    if (line == last_) return;
    write_raw("\x1b" "7\x1b[" + std::to_string(rows_) + ";1H\x1b[2K" + line + "\x1b" "8");
    last_ = std::move(line);
}

}  // namespace sg
