#include "supervise/process_tree.hpp"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "util/files.hpp"
#include "util/parse.hpp"
#include "util/strings.hpp"

namespace sg {

std::optional<ProcStat> read_proc_stat(pid_t pid) {
    auto text = read_file_prefix("/proc/" + std::to_string(pid) + "/stat", 4096);
    if (!text || text->empty()) return std::nullopt;
    // "pid (comm) state ppid pgrp ..." — comm may hold spaces and parentheses: take the last ')'.
    auto open = text->find('(');
    auto close = text->rfind(')');
    if (open == std::string::npos || close == std::string::npos || close + 2 >= text->size()) return std::nullopt;
    ProcStat stat;
    stat.pid = pid;
    stat.comm = text->substr(open + 1, close - open - 1);
    auto fields = split(std::string_view(*text).substr(close + 2), ' ');
    if (fields.size() < 13) return std::nullopt;
    stat.state = fields[0].empty() ? '?' : fields[0][0];
    stat.ppid = static_cast<pid_t>(std::atol(fields[1].c_str()));
    stat.pgid = static_cast<pid_t>(std::atol(fields[2].c_str()));
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    stat.cpu_seconds = (std::atof(fields[11].c_str()) + std::atof(fields[12].c_str())) / ticks;
    return stat;
}

std::vector<ProcStat> list_processes() {
    std::vector<ProcStat> table;
    DIR* dir = opendir("/proc");
    if (!dir) return table;
    while (dirent* entry = readdir(dir)) {
        auto pid = parse_int(entry->d_name);
        if (!pid) continue;
        if (auto stat = read_proc_stat(static_cast<pid_t>(*pid))) table.push_back(*stat);
    }
    closedir(dir);
    return table;
}

std::vector<pid_t> descendants(const std::vector<ProcStat>& table, pid_t root, pid_t pgid,
                               const std::vector<pid_t>& excluded) {
    std::multimap<pid_t, pid_t> children;
    for (const auto& p : table) children.emplace(p.ppid, p.pid);
    auto is_excluded = [&](pid_t pid) { return std::find(excluded.begin(), excluded.end(), pid) != excluded.end(); };
    std::set<pid_t> tree;
    std::vector<pid_t> pending = {root};
    while (!pending.empty()) {
        auto [begin, end] = children.equal_range(pending.back());
        pending.pop_back();
        for (auto it = begin; it != end; ++it)
            if (!is_excluded(it->second) && tree.insert(it->second).second) pending.push_back(it->second);
    }
    for (const auto& p : table)
        if (pgid > 0 && p.pgid == pgid) tree.insert(p.pid);
    tree.erase(root);
    return {tree.begin(), tree.end()};
}

std::vector<pid_t> descendants(pid_t root, pid_t pgid, const std::vector<pid_t>& excluded) {
    return descendants(list_processes(), root, pgid, excluded);
}

double rss_bytes(pid_t pid) {
    auto text = read_file_prefix("/proc/" + std::to_string(pid) + "/status", 8192);
    if (!text) return 0;
    auto at = text->find("VmRSS:");
    if (at == std::string::npos) return 0;
    return std::atof(text->c_str() + at + 6) * 1024;
}

void signal_processes(pid_t pgid, const std::vector<pid_t>& pids, int sig) {
    if (pgid > 0) ::kill(-pgid, sig);
    for (pid_t pid : pids)
        if (pid > 0) ::kill(pid, sig);
}

void reap_adopted_children(const std::vector<pid_t>& keep) {
    const pid_t self = ::getpid();
    for (const auto& p : list_processes())
        if (p.ppid == self && p.state == 'Z' && std::find(keep.begin(), keep.end(), p.pid) == keep.end())
            ::waitpid(p.pid, nullptr, WNOHANG);
}

}  // namespace sg
