#pragma once
// Turns arbitrary bytes from a log (ANSI colours, NULs, invalid UTF-8) into text that is safe
// to print on a terminal and to put in JSON.

#include <string>
#include <string_view>

namespace sg {

// Drops ANSI escape sequences, replaces other control bytes and invalid UTF-8 with U+FFFD, and
// keeps at most `max_bytes` bytes of output (cut on a character boundary, "…" appended).
std::string printable(std::string_view text, size_t max_bytes = 2000);

}  // namespace sg
