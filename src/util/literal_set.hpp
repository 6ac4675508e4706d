#pragma once
// Finds which of a few fixed strings occur in a line, in one pass: the cheap prefilter that runs
// on every line of a log before any real parsing. Each literal is found through its rarest byte
// pair in ordinary training output, so a line without any literal costs about one table lookup
// per byte and almost never a comparison.

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sg {

class LiteralSet {
public:
    __extension__ typedef unsigned __int128 Bits;  // a bit per literal
    static constexpr size_t kMaxLiterals = 128;

    // Each literal at least 2 bytes, at most kMaxLiterals; throws std::invalid_argument otherwise.
    explicit LiteralSet(std::vector<std::string> literals);

    // Bit i is set when literal i occurs in `text` (case-sensitive).
    Bits find(std::string_view text) const;

    const std::vector<std::string>& literals() const { return literals_; }

private:
    static uint16_t pair_key(unsigned char a, unsigned char b) { return static_cast<uint16_t>(a << 8 | b); }

    struct Anchor {
        uint16_t key;     // the literal's chosen byte pair
        uint8_t literal;  // index in literals_
        uint8_t offset;   // where the pair sits in the literal
    };
    std::vector<std::string> literals_;
    std::array<bool, 256> first_{};  // first bytes of the chosen pairs: the cheap first test
    std::bitset<65536> chosen_;      // pairs some literal is anchored on
    std::vector<Anchor> anchors_;  // sorted by key
};

}  // namespace sg
