#include "util/xml.hpp"

#include "util/printable.hpp"

namespace sg {

std::string xml_escape(std::string_view text, size_t max_bytes) {
    const std::string clean = printable(text, max_bytes);
    std::string out;
    out.reserve(clean.size() + clean.size() / 8);
    for (size_t i = 0; i < clean.size(); ++i) {
        const char c = clean[i];
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else if (c == '"') out += "&quot;";
        else if (c == '\'') out += "&apos;";
        else if (c == '\xEF' && clean.compare(i, 2, "\xEF\xBF") == 0 && i + 2 < clean.size() &&
                 (clean[i + 2] == '\xBE' || clean[i + 2] == '\xBF')) {
            out += "\xEF\xBF\xBD";
            i += 2;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace sg
