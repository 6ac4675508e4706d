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

uint64_t LiteralSet::find(std::string_view text) const {
    uint64_t found = 0;
    if (text.size() < window_) return found;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    size_t last = window_ - 1;  // index of the window's last byte
    while (last < text.size()) {
        const size_t h = bucket(p[last - 1], p[last]);
        if (shift_[h] > 0) {
            last += shift_[h];
            continue;
        }
        const std::string_view rest = text.substr(last + 1 - window_);
        for (uint8_t i : ending_[h])
            if (rest.starts_with(literals_[i])) found |= uint64_t{1} << i;
        ++last;
    }
    return found;
}

}  // namespace sg
