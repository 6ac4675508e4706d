#include "util/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace sg {

std::string errno_text(int error_number) { return std::strerror(error_number); }

Result<std::string> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path.string() + ": " + errno_text(errno));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) return make_error(path.string() + ": read failed");
    return buffer.str();
}

Result<std::string> read_file_prefix(const fs::path& path, size_t limit) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path.string() + ": " + errno_text(errno));
    std::string data(limit, '\0');
    in.read(data.data(), static_cast<std::streamsize>(limit));
    data.resize(static_cast<size_t>(in.gcount()));
    return data;
}

Status write_all(int fd, std::string_view content, const fs::path& path) {
    while (!content.empty()) {
        ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return make_error(path.string() + ": " + errno_text(errno));
        content.remove_prefix(static_cast<size_t>(n));
    }
    return Ok{};
}

Status write_file_atomic(const fs::path& path, std::string_view content) {
    fs::path temp = path;
    temp += ".tmp." + std::to_string(::getpid());
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return make_error(temp.string() + ": " + errno_text(errno));
    Status written = write_all(fd, content, temp);
    if (written && ::fsync(fd) != 0) written = make_error(temp.string() + ": fsync: " + errno_text(errno));
    ::close(fd);
    if (written && ::rename(temp.c_str(), path.c_str()) != 0)
        written = make_error(path.string() + ": rename: " + errno_text(errno));
    if (!written) ::unlink(temp.c_str());
    return written;
}

Status append_line(const fs::path& path, std::string_view line, bool sync) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return make_error(path.string() + ": " + errno_text(errno));
    std::string buffer(line);
    buffer += '\n';
    Status written = write_all(fd, buffer, path);
    if (written && sync && ::fsync(fd) != 0) written = make_error(path.string() + ": fsync: " + errno_text(errno));
    ::close(fd);
    return written;
}

}  // namespace sg
