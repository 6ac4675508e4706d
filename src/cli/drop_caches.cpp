// sparkguard drop-caches: the privileged act alone (sync, then 3 into /proc/sys/vm/drop_caches),
// so that one sudoers line can allow it and nothing else.
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "supervise/drop_caches.hpp"
#include "util/errors.hpp"
#include "util/options.hpp"

namespace sg::cli {

int drop_caches_main(Args args) {
    const ParsedArgs parsed = parse_args({}, args);
    if (parsed.has("help")) {
        std::cout << format_help("sparkguard drop-caches",
                                 "Syncs, then writes 3 into /proc/sys/vm/drop_caches: page cache and slab go back\n"
                                 "to the memory pool. It needs root and takes no arguments. sparkguard run, when\n"
                                 "not root, calls it through sudo -n when the ladder reaches its drop-caches rung.",
                                 {}, "Exit status: 0 dropped; 2 usage; 125 it could not (not root, not writable).\n");
        return kExitOk;
    }
    if (!parsed.positionals().empty() || !parsed.rest().empty())
        throw UsageError("drop-caches", "takes no arguments");
    if (auto dropped = drop_caches_here(); !dropped) throw Failure("drop-caches", dropped.error().message);
    return kExitOk;
}

}  // namespace sg::cli
