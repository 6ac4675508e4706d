#pragma once
// Finds which of a few fixed strings occur in a line, in one pass that skips most bytes
// (Wu-Manber): the cheap prefilter that runs on every output line before any real parsing.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sg {

class LiteralSet {
public:
    // Each literal at least 2 bytes, at most 64 literals; throws std::invalid_argument otherwise.
    explicit LiteralSet(std::vector<std::string> literals);

    // Bit i is set when literal i occurs in `text` (case-sensitive).
    uint64_t find(std::string_view text) const;

    const std::vector<std::string>& literals() const { return literals_; }

private:
    size_t step(std::string_view text, size_t last, uint64_t& found) const;

    static constexpr size_t kBuckets = 4096;
    static size_t bucket(unsigned char a, unsigned char b) { return ((a << 4) ^ b) & (kBuckets - 1); }

    std::vector<std::string> literals_;
    size_t window_ = 0;                                  // the shortest literal's length
    std::array<uint8_t, kBuckets> shift_{};              // how far a window may move on this bigram
    std::array<std::vector<uint8_t>, kBuckets> ending_;  // literals whose window ends with this bigram
};

}  // namespace sg
