#include "telemetry/meminfo.hpp"

#include <map>
#include <string>

#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {

double MemInfo::reclaimable_cache() const {
    double reclaimable = cached + buffers - shmem;
    return reclaimable > 0 ? reclaimable : 0;
}

Result<MemInfo> parse_meminfo(std::string_view text) {
    std::map<std::string, double, std::less<>> fields;
    for (const auto& line : split(text, '\n')) {
        auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        std::string_view rest = trim(std::string_view(line).substr(colon + 1));
        double scale = 1;
        if (rest.size() > 3 && rest.substr(rest.size() - 3) == " kB") {
            rest.remove_suffix(3);
            scale = 1024;
        }
        if (auto value = parse_double(trim(rest))) fields[line.substr(0, colon)] = *value * scale;
    }
    auto get = [&](std::string_view key) {
        auto it = fields.find(key);
        return it == fields.end() ? 0.0 : it->second;
    };
    if (!fields.count("MemTotal") || !fields.count("MemFree"))
        return make_error("meminfo: no MemTotal/MemFree field");
    MemInfo info;
    info.total = get("MemTotal");
    info.free = get("MemFree");
    info.cached = get("Cached");
    info.buffers = get("Buffers");
    info.shmem = get("Shmem");
    info.available = fields.count("MemAvailable") ? get("MemAvailable") : info.free + info.cached + info.buffers;
    info.swap_total = get("SwapTotal");
    info.swap_free = get("SwapFree");
    info.hugepages_total = get("HugePages_Total") * get("Hugepagesize");
    info.hugepages_free = get("HugePages_Free") * get("Hugepagesize");
    return info;
}

Result<MemInfo> read_meminfo(const char* path) {
    auto text = read_file(path);
    if (!text) return text.error();
    auto info = parse_meminfo(*text);
    if (!info) return make_error(std::string(path) + ": " + info.error().message);
    return info;
}

}  // namespace sg
