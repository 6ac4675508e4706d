#include "report/run_dir.hpp"

#include <unistd.h>

#include <cctype>
#include <ctime>

#include "util/errors.hpp"
#include "util/files.hpp"

namespace sg {

namespace fs = std::filesystem;

std::string command_slug(const std::vector<std::string>& argv) {
    std::string name;
    for (const auto& arg : argv) {
        fs::path p(arg);
        if (p.extension() == ".py" || p.extension() == ".sh") {
            name = p.stem().string();
            break;
        }
    }
    if (name.empty() && !argv.empty()) {
        name = fs::path(argv[0]).filename().string();
        if (argv.size() > 1 && !argv[1].empty() && argv[1][0] != '-' && argv[1].find('/') == std::string::npos &&
            name.rfind("python", 0) != 0)
            name += "-" + argv[1];
    }
    std::string slug;
    for (char c : name) slug += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    return slug.empty() ? "run" : slug.substr(0, 40);
}

RunDir prepare_run_dir(const fs::path& requested) {
    std::error_code ec;
    fs::create_directories(requested, ec);
    if (ec) throw UsageError("run directory " + requested.string(), ec.message());
    const fs::path probe = requested / (".sparkguard-probe-" + std::to_string(::getpid()));
    if (auto written = write_file_atomic(probe, ""); !written)
        throw UsageError("run directory " + requested.string(), "not writable (" + written.error().message + ")");
    fs::remove(probe, ec);
    return RunDir{requested};
}

RunDir new_default_run_dir(const std::vector<std::string>& argv) {
    std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char date[16];
    std::strftime(date, sizeof date, "%Y-%m-%d", &local);
    const fs::path base = fs::path("runs") / (std::string(date) + "-" + command_slug(argv));
    fs::path candidate = base;
    for (int n = 2; fs::exists(candidate); ++n) candidate = base.string() + "-" + std::to_string(n);
    return prepare_run_dir(candidate);
}

}  // namespace sg
