#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace sg {

namespace fs = std::filesystem;

// Reads a whole file; the error names the path and the reason.
Result<std::string> read_file(const fs::path& path);
// Reads at most `limit` bytes from the start of a file.
Result<std::string> read_file_prefix(const fs::path& path, size_t limit);
// Writes through a temporary file in the same directory, fsyncs it and renames it into place,
// so a crash leaves either the old content or the new, never a torn file.
Status write_file_atomic(const fs::path& path, std::string_view content);
// Appends one line (a newline is added) and flushes it to the kernel.
Status append_line(const fs::path& path, std::string_view line, bool fsync = false);
// Writes all of `content` to `fd`, retrying short writes and EINTR; `path` names it in errors.
Status write_all(int fd, std::string_view content, const fs::path& path);
std::string errno_text(int error_number);

}  // namespace sg
