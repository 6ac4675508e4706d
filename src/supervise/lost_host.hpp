#pragma once
// --resume-run after the host itself died: which boot this is, and what the lost attempt's last
// records (memory-low events, thermal.csv rows) said about the pool. oom/host_loss.hpp judges.

#include <string>

#include "oom/host_loss.hpp"
#include "report/run_dir.hpp"

namespace sg {

// The boot this machine runs: the file $SPARKGUARD_BOOT_ID_FILE names (tests), else
// /proc/sys/kernel/random/boot_id; empty when neither can be read.
std::string current_boot_id();

// The lost attempt's pool records from RUN_DIR/events.jsonl (memory-low) and thermal.csv, and
// the newest time anything was written there. Torn or unreadable lines are skipped.
oom::HostLossFacts read_host_loss_facts(const RunDir& dir, int attempt);

}  // namespace sg
