#pragma once
// A run directory: runs/<date>-<slug>/ unless --run-dir names one (DESIGN.md section 8).

#include <filesystem>
#include <string>
#include <vector>

namespace sg {

struct RunDir {
    std::filesystem::path path;
    std::filesystem::path train_log() const { return path / "train.log"; }
    std::filesystem::path events() const { return path / "events.jsonl"; }
    std::filesystem::path report() const { return path / "report.json"; }
    std::filesystem::path state() const { return path / "state.json"; }
    std::filesystem::path thermal() const { return path / "thermal.csv"; }
    std::filesystem::path env_report() const { return path / "env-report.json"; }
};

// "train" for `python train.py ...`, "trl-sft" for `trl sft ...`: a short name for the command.
std::string command_slug(const std::vector<std::string>& argv);

// Creates (or reuses) the directory and proves it writable; UsageError naming it otherwise.
RunDir prepare_run_dir(const std::filesystem::path& requested);
// runs/<YYYY-MM-DD>-<slug>, with -2, -3, ... when that exists already.
RunDir new_default_run_dir(const std::vector<std::string>& argv);

}  // namespace sg
