#pragma once
// Text for XML (and so SVG) documents.

#include <string>
#include <string_view>

namespace sg {

// Character data or an attribute value: printable() first (no control bytes, invalid UTF-8 as
// U+FFFD, at most `max_bytes`), then &, <, >, " and ' as entities, and the two code points XML
// forbids although they are valid UTF-8 (U+FFFE, U+FFFF) as U+FFFD.
std::string xml_escape(std::string_view text, size_t max_bytes = 2000);

}  // namespace sg
