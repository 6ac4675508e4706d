#pragma once
// Test scopes that put the fake nvidia-smi (tests/fakes) first on PATH for one machine, or point
// sparkguard at the fake NVML library, and undo it afterwards.

#include <cstdlib>
#include <string>

namespace sg::test {

// Sets an environment variable for one scope; restores (or removes) it afterwards.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old, had_ = true;
        ::setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (had_) ::setenv(name_, old_.c_str(), 1);
        else ::unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::string old_;
    bool had_ = false;
};

inline std::string fakes_dir() { return SPARKGUARD_TEST_DATA "/../fakes"; }

// The fake nvidia-smi for one machine: gb10 | rtx4090 | a100-80 | two-a100 | v100-470 | rtx-pro-610 | none.
struct FakeNvidiaSmi {
    ScopedEnv path{"PATH", fakes_dir() + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "")};
    ScopedEnv scenario;
    explicit FakeNvidiaSmi(const char* machine) : scenario("SPARKGUARD_FAKE_GPU", machine) {}
};

// The fake libnvidia-ml.so.1 for one machine: gb10 | rtx4090 | two-a100 | absent | no-driver.
struct FakeNvml {
    ScopedEnv library{"SPARKGUARD_NVML_LIBRARY", SPARKGUARD_FAKE_NVML};
    ScopedEnv scenario;
    explicit FakeNvml(const char* machine) : scenario("SPARKGUARD_FAKE_NVML", machine) {}
};

}  // namespace sg::test
