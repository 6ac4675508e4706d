#pragma once
// The OOM ladder's first rung: sync, then 3 into /proc/sys/vm/drop_caches. As root sparkguard
// does it itself; as anyone else (people train as themselves on a DGX Spark) through
// `sudo -n SPARKGUARD drop-caches`, which one sudoers line allows and nothing else needs.

#include <string>
#include <string_view>

#include "util/result.hpp"

namespace sg {

// The privileged act alone, what `sparkguard drop-caches` does.
Status drop_caches_here();

struct DropCachesResult {
    bool ok = false;
    std::string how;    // "root" (sparkguard itself) or "sudo" (sudo -n SPARKGUARD drop-caches)
    std::string error;  // why not, when !ok
};
DropCachesResult drop_caches();

// The one sudoers line that lets `user` run `exe drop-caches` as root without a password.
std::string sudoers_line(std::string_view user, std::string_view exe);

// Why drop_caches() cannot work here, naming the sudoers line that would allow it; empty when it
// can (root with a writable drop_caches, or sudo -n allows this binary's drop-caches).
std::string drop_caches_blocker();

}  // namespace sg
