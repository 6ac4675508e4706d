#include "util/printable.hpp"

namespace sg {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kEllipsis = "\xE2\x80\xA6";     // U+2026

// Length of the ANSI escape sequence at text[0] (an ESC byte); CSI runs to its final byte.
size_t escape_length(std::string_view text) {
    if (text.size() < 2 || text[1] != '[') return std::min<size_t>(text.size(), 2);
    size_t i = 2;
    while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7E)) ++i;
    return std::min(i + 1, text.size());
}

// Length of the valid UTF-8 sequence at text[0], or 0 when it is not one.
size_t utf8_length(std::string_view text) {
    const auto b = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = b(0);
    size_t length = lead < 0x80 ? 1 : lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
    if (length == 0 || length > text.size()) return 0;
    for (size_t i = 1; i < length; ++i)
        if ((b(i) & 0xC0) != 0x80) return 0;
    if (length == 3 && ((lead == 0xE0 && b(1) < 0xA0) || (lead == 0xED && b(1) > 0x9F))) return 0;  // overlong, surrogate
    if (length == 4 && ((lead == 0xF0 && b(1) < 0x90) || (lead == 0xF4 && b(1) > 0x8F))) return 0;  // overlong, > U+10FFFF
    return length;
}

}  // namespace

std::string printable(std::string_view text, size_t max_bytes) {
    std::string out;
    out.reserve(std::min(text.size(), max_bytes) + 4);
    size_t i = 0;
    while (i < text.size()) {
        std::string_view piece;
        size_t consumed = 1;
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == 0x1B) {
            consumed = escape_length(text.substr(i));
        } else if (c == '\t') {
            piece = " ";
        } else if (c < 0x20 || c == 0x7F) {
            piece = kReplacement;
        } else if (size_t length = utf8_length(text.substr(i)); length > 0) {
            piece = text.substr(i, length);
            consumed = length;
        } else {
            piece = kReplacement;
        }
        if (out.size() + piece.size() > max_bytes) {
            out += kEllipsis;
            break;
        }
        out += piece;
        i += consumed;
    }
    return out;
}

}  // namespace sg
