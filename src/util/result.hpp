#pragma once
// Result<T>: a value or an error message, for parsers and syscall wrappers (STYLE.md rule 4).
// The policy layer decides what an error means; it usually turns one into an exception.

#include <string>
#include <utility>
#include <variant>

namespace sg {

struct Error {
    std::string message;
};

inline Error make_error(std::string message) { return Error{std::move(message)}; }

template <class T>
class Result {
public:
    Result(T value) : state_(std::move(value)) {}
    Result(Error error) : state_(std::move(error)) {}

    bool ok() const { return state_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { return std::get<0>(state_); }
    const T& value() const& { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    const Error& error() const { return std::get<1>(state_); }

private:
    std::variant<T, Error> state_;
};

// For calls that succeed with nothing to return.
struct Ok {};
using Status = Result<Ok>;

}  // namespace sg
