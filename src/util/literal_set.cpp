#include "util/literal_set.hpp"

#include <algorithm>
#include <stdexcept>

namespace sg {

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
    if (literals_.empty() || literals_.size() > 64) throw std::invalid_argument("LiteralSet: 1 to 64 literals");
    window_ = literals_.front().size();
    for (const auto& literal : literals_) {
        if (literal.size() < 2) throw std::invalid_argument("LiteralSet: literal shorter than 2 bytes: " + literal);
        window_ = std::min(window_, literal.size());
    }
    const size_t max_shift = std::min<size_t>(window_ - 1, 255);
    shift_.fill(static_cast<uint8_t>(max_shift));
    for (size_t i = 0; i < literals_.size(); ++i) {
        const auto* p = reinterpret_cast<const unsigned char*>(literals_[i].data());
        for (size_t end = 2; end <= window_; ++end) {
            const size_t h = bucket(p[end - 2], p[end - 1]);
            shift_[h] = static_cast<uint8_t>(std::min<size_t>(shift_[h], window_ - end));
            if (end == window_) ending_[h].push_back(static_cast<uint8_t>(i));
        }
    }
}

// Moves the window whose last byte is at `last` one step: by its shift, or, at a possible end of
// a literal, by one after checking the literals that end there.
[[gnu::always_inline]] inline size_t LiteralSet::step(std::string_view text, size_t last, uint64_t& found) const {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const size_t h = bucket(p[last - 1], p[last]);
    if (shift_[h] > 0) return last + shift_[h];
    const std::string_view rest = text.substr(last + 1 - window_);
    for (uint8_t i : ending_[h])
        if (rest.starts_with(literals_[i])) found |= uint64_t{1} << i;
    return last + 1;
}

// Two windows walk the two halves of the text at once: each step waits on a table lookup, and
// two independent walks keep the processor busy while it waits.
uint64_t LiteralSet::find(std::string_view text) const {
    uint64_t found = 0;
    if (text.size() < window_) return found;
    const size_t half = text.size() / 2;
    size_t first = window_ - 1;                                   // covers windows ending before half + window_ - 1
    size_t second = std::max(first, half + window_ - 1);          // covers the rest
    const size_t first_end = std::min(text.size(), half + window_ - 1);
    while (first < first_end && second < text.size()) {
        first = step(text, first, found);
        second = step(text, second, found);
    }
    while (first < first_end) first = step(text, first, found);
    while (second < text.size()) second = step(text, second, found);
    return found;
}

}  // namespace sg
