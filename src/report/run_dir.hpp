#pragma once
// A run directory: runs/<date>-<slug>/ unless --run-dir names one (DESIGN.md section 8).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sg {

// An exclusive flock on RUN_DIR/sparkguard.lock, held while this object lives (the kernel drops
// it when sparkguard dies, however it dies). The file says who holds it.
class RunDirLock {
public:
    explicit RunDirLock(int fd) : fd_(fd) {}
    ~RunDirLock();
    RunDirLock(const RunDirLock&) = delete;
    RunDirLock& operator=(const RunDirLock&) = delete;

private:
    int fd_;
};

struct RunDir {
    std::filesystem::path path;
    std::shared_ptr<RunDirLock> lock;  // set by lock_run_dir: one sparkguard a run directory
    std::filesystem::path lock_file() const { return path / "sparkguard.lock"; }
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

// Takes the run directory's lock for this process; UsageError naming the holder's PID and
// command when another sparkguard has it.
void lock_run_dir(RunDir& dir, const std::vector<std::string>& command);

// Does the directory hold a run already (its train.log or report.json)?
bool holds_a_run(const std::filesystem::path& dir);

// Renames DIR to DIR.previous-YYYYmmdd-HHMMSS (-2, -3, ... when taken); returns the new name.
std::filesystem::path move_aside(const std::filesystem::path& dir);

}  // namespace sg
