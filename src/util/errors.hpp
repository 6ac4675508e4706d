#pragma once
// Exceptions for policy decisions. main.cpp is the one boundary that catches them and prints
// "sparkguard: error: WHAT: WHY", exiting with the code the exception carries.

#include <stdexcept>
#include <string>

namespace sg {

enum ExitCode : int {
    kExitOk = 0,
    kExitUsage = 2,
    kExitBlocked = 3,
    kExitOomExhausted = 4,
    kExitStalled = 5,
    kExitInternal = 125,
    kExitNotExecutable = 126,
    kExitNotFound = 127,
};

class Failure : public std::runtime_error {
public:
    Failure(std::string what, std::string why, int exit_code = kExitInternal)
        : std::runtime_error(what.empty() ? why : what + ": " + why), exit_code_(exit_code) {}
    int exit_code() const { return exit_code_; }

private:
    int exit_code_;
};

// Bad command line, bad configuration file, bad model description: exit 2.
class UsageError : public Failure {
public:
    UsageError(std::string what, std::string why) : Failure(std::move(what), std::move(why), kExitUsage) {}
    explicit UsageError(std::string why) : Failure("", std::move(why), kExitUsage) {}
};

}  // namespace sg
