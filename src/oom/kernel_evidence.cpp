#include "oom/kernel_evidence.hpp"

#include <cctype>

#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg::oom {
namespace {

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

std::string_view first_line(std::string_view text) { return text.substr(0, text.find('\n')); }

// "4242 (python3) total-vm:..." after "Killed process " → pid and comm.
std::optional<OomKillRecord> parse_victim(std::string_view rest) {
    size_t digits = 0;
    while (digits < rest.size() && std::isdigit(static_cast<unsigned char>(rest[digits]))) ++digits;
    auto pid = parse_int(rest.substr(0, digits));
    if (!pid || *pid <= 0 || *pid > 0x7fffffff) return std::nullopt;
    OomKillRecord record;
    record.pid = static_cast<int>(*pid);
    rest.remove_prefix(digits);
    if (rest.starts_with(" (")) {
        const size_t close = rest.find(')');
        if (close != std::string_view::npos) record.comm = std::string(rest.substr(2, close - 2));
    }
    return record;
}

bool contains_nocase(std::string_view text, std::string_view needle) {
    auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
    for (size_t i = 0; i + needle.size() <= text.size(); ++i) {
        size_t j = 0;
        while (j < needle.size() && lower(text[i + j]) == lower(needle[j])) ++j;
        if (j == needle.size()) return true;
    }
    return false;
}

// mountinfo escapes blanks and backslashes in paths as \040, \011, \012, \134.
std::string unescape_mount_path(std::string_view text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 3 < text.size()) {
            const std::string_view octal = text.substr(i + 1, 3);
            if (octal.size() == 3 && octal.find_first_not_of("01234567") == std::string_view::npos) {
                out += static_cast<char>((octal[0] - '0') * 64 + (octal[1] - '0') * 8 + (octal[2] - '0'));
                i += 3;
                continue;
            }
        }
        out += text[i];
    }
    return out;
}

// The cgroup path relative to a mount whose root is `root`; nullopt when it lies outside.
std::optional<std::string> relative_to_root(const std::string& path, const std::string& root) {
    if (root == "/") return path.substr(1);
    if (path == root) return std::string();
    if (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/') return path.substr(root.size() + 1);
    return std::nullopt;
}

const CgroupMount* find_mount(const std::vector<CgroupMount>& mounts, bool unified) {
    for (const auto& mount : mounts)
        if (mount.unified == unified) return &mount;
    return nullptr;
}

}  // namespace

bool is_nvrm_memory_record(std::string_view line) {
    // Jetson's Tegra driver and the contiguous-memory pool it allocates from: "nvgpu: ... DMA alloc FAILED",
    // "cma_alloc: linux,cma: alloc failed, req-size: 62864 pages".
    if ((contains(line, "nvgpu") || contains(line, "cma_alloc")) && contains_nocase(line, "alloc") &&
        contains_nocase(line, "fail"))
        return true;
    if (!contains(line, "NVRM")) return false;
    if (contains(line, "NV_ERR_NO_MEMORY") || contains(line, "_memdescAllocInternal")) return true;
    return contains_nocase(line, "iova") && (contains_nocase(line, "fail") || contains_nocase(line, "error"));
}

std::optional<OomKillRecord> OomRecordScanner::feed(std::string_view line) {
    if (contains(line, "Memory cgroup out of memory") || contains(line, "constraint=CONSTRAINT_MEMCG"))
        memcg_context_ = true;
    else if (contains(line, "Out of memory") || contains(line, "constraint=CONSTRAINT_NONE"))
        memcg_context_ = false;
    constexpr std::string_view kVictim = "Killed process ";
    const size_t at = line.find(kVictim);
    if (at == std::string_view::npos) return std::nullopt;
    auto record = parse_victim(line.substr(at + kVictim.size()));
    if (!record) return std::nullopt;
    record->memcg = memcg_context_;
    record->text = std::string(trim(line));
    return record;
}

Result<KmsgRecord> parse_kmsg_record(std::string_view record) {
    const size_t semicolon = record.find(';');
    if (semicolon == std::string_view::npos) return make_error("kmsg record without ';': " + std::string(first_line(record)));
    const auto fields = split(record.substr(0, semicolon), ',');
    if (fields.size() < 4) return make_error("kmsg record header needs 4 fields: " + std::string(record.substr(0, semicolon)));
    auto priority = parse_int(fields[0]);
    auto sequence = parse_int(fields[1]);
    auto microseconds = parse_int(fields[2]);
    if (!priority || !sequence || !microseconds || *priority < 0 || *sequence < 0 || *microseconds < 0)
        return make_error("kmsg record header is not numeric: " + std::string(record.substr(0, semicolon)));
    KmsgRecord out;
    out.priority = static_cast<int>(*priority);
    out.sequence = static_cast<unsigned long long>(*sequence);
    out.microseconds = static_cast<unsigned long long>(*microseconds);
    out.message = std::string(first_line(record.substr(semicolon + 1)));
    return out;
}

Result<long long> parse_oom_kill_counter(std::string_view text, std::string_view source) {
    for (const auto& line : split(text, '\n')) {
        const auto words = split(std::string(trim(line)), ' ');
        if (words.size() != 2 || words[0] != "oom_kill") continue;
        auto value = parse_int(words[1]);
        if (!value || *value < 0) return make_error(std::string(source) + ": oom_kill: not a counter: '" + words[1] + "'");
        return *value;
    }
    return make_error(std::string(source) + ": no oom_kill field (kernel older than 4.13?)");
}

ProcCgroups parse_proc_cgroup(std::string_view text) {
    ProcCgroups out;
    for (const auto& line : split(text, '\n')) {
        const size_t first = line.find(':');
        const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
        if (second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1);
        std::string path = line.substr(second + 1);
        if (path.empty() || path[0] != '/') continue;
        if (line.starts_with("0::") && controllers.empty()) {
            out.unified = path;
            continue;
        }
        for (const auto& controller : split(controllers, ','))
            if (controller == "memory") out.memory_v1 = path;
    }
    return out;
}

std::vector<CgroupMount> parse_cgroup_mounts(std::string_view mountinfo) {
    std::vector<CgroupMount> mounts;
    for (const auto& line : split(mountinfo, '\n')) {
        const size_t separator = line.find(" - ");
        if (separator == std::string::npos) continue;
        const auto fields = split(line.substr(0, separator), ' ');
        const auto tail = split(line.substr(separator + 3), ' ');
        if (fields.size() < 5 || tail.size() < 3) continue;
        const bool unified = tail[0] == "cgroup2";
        bool memory = false;
        for (const auto& option : split(tail[2], ','))
            if (option == "memory") memory = true;
        if (!unified && !(tail[0] == "cgroup" && memory)) continue;
        mounts.push_back({unescape_mount_path(fields[3]), unescape_mount_path(fields[4]), unified});
    }
    return mounts;
}

std::optional<std::filesystem::path> oom_counter_file(const ProcCgroups& cgroups,
                                                      const std::vector<CgroupMount>& mounts) {
    if (const auto* v1 = find_mount(mounts, false); v1 && cgroups.memory_v1) {
        auto relative = relative_to_root(*cgroups.memory_v1, v1->root);
        if (!relative || relative->empty()) return std::nullopt;
        return v1->mount_point / *relative / "memory.oom_control";
    }
    if (const auto* v2 = find_mount(mounts, true); v2 && cgroups.unified && *cgroups.unified != "/") {
        auto relative = relative_to_root(*cgroups.unified, v2->root);
        if (!relative || relative->empty()) return std::nullopt;
        return v2->mount_point / *relative / "memory.events";
    }
    return std::nullopt;
}

}  // namespace sg::oom
