#include "util/literal_set.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

namespace sg {
namespace {

// Ordinary training output: what most lines look like. A byte pair common here is a poor anchor.
constexpr std::string_view kOrdinaryOutput =
    "{'loss': 1.2345, 'grad_norm': 0.5678, 'learning_rate': 0.0001, 'epoch': 0.12}\n"
    " 45%|####5     | 450/1000 [12:34<15:21,  1.68s/it] Step 450/1000 global_step=450 train/loss=0.873\n"
    "Loading checkpoint shards: 100%|##########| 4/4 [00:05<00:00,  1.31s/it] Map: 100%| 51760/51760 examples\n"
    "Saving model checkpoint to ./output/checkpoint-500 Configuration saved in ./output/config.json\n"
    "***** Running training ***** Num examples = 51,760 Num Epochs = 3 Instantaneous batch size per device = 4\n"
    "Total optimization steps = 1,000 Number of trainable parameters = 41,943,040 warnings.warn(\n"
    "UserWarning: the default value of use_reentrant will be updated to be explicitly passed in the future.\n"
    "wandb: Tracking run with wandb version 0.16.0 INFO:root:epoch 1 validation accuracy of the model is good\n";

// How rare a byte pair is as an anchor: the scan first tests the pair's first byte, so that byte
// should be rare in ordinary output above all, then the pair itself. Letters, digits and spaces
// count as common even where the small sample lacks them.
std::array<uint32_t, 65536> pair_costs() {
    std::array<uint32_t, 256> byte_count{};
    std::array<uint32_t, 65536> pair_count{};
    for (size_t i = 0; i < kOrdinaryOutput.size(); ++i) {
        const auto a = static_cast<unsigned char>(kOrdinaryOutput[i]);
        ++byte_count[a];
        if (i + 1 < kOrdinaryOutput.size()) ++pair_count[a << 8 | static_cast<unsigned char>(kOrdinaryOutput[i + 1])];
    }
    auto common = [](unsigned c) { return std::islower(static_cast<int>(c)) || std::isdigit(static_cast<int>(c)) || c == ' '; };
    std::array<uint32_t, 65536> cost{};
    for (unsigned a = 0; a < 256; ++a)
        for (unsigned b = 0; b < 256; ++b)
            cost[a << 8 | b] = 64 * (byte_count[a] + 2 * common(a)) + 4 * pair_count[a << 8 | b] + common(b);
    return cost;
}

}  // namespace

LiteralSet::LiteralSet(std::vector<std::string> literals) : literals_(std::move(literals)) {
    if (literals_.empty() || literals_.size() > kMaxLiterals) throw std::invalid_argument("LiteralSet: 1 to 128 literals");
    static const std::array<uint32_t, 65536> cost = pair_costs();
    for (size_t i = 0; i < literals_.size(); ++i) {
        const std::string& literal = literals_[i];
        if (literal.size() < 2) throw std::invalid_argument("LiteralSet: literal shorter than 2 bytes: " + literal);
        const auto* p = reinterpret_cast<const unsigned char*>(literal.data());
        size_t best = 0;
        const size_t last = std::min<size_t>(literal.size() - 2, 255);
        for (size_t at = 1; at <= last; ++at)
            if (cost[pair_key(p[at], p[at + 1])] < cost[pair_key(p[best], p[best + 1])]) best = at;
        const uint16_t key = pair_key(p[best], p[best + 1]);
        first_[p[best]] = true;
        chosen_.set(key);
        anchors_.push_back({key, static_cast<uint8_t>(i), static_cast<uint8_t>(best)});
    }
    std::sort(anchors_.begin(), anchors_.end(), [](const Anchor& a, const Anchor& b) { return a.key < b.key; });
}

LiteralSet::Bits LiteralSet::find(std::string_view text) const {
    Bits found = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    for (size_t at = 0; at + 1 < text.size(); ++at) {
        if (!first_[p[at]]) continue;
        const uint16_t key = pair_key(p[at], p[at + 1]);
        if (!chosen_[key]) continue;
        auto it = std::lower_bound(anchors_.begin(), anchors_.end(), key, [](const Anchor& a, uint16_t k) { return a.key < k; });
        for (; it != anchors_.end() && it->key == key; ++it)
            if (at >= it->offset && text.substr(at - it->offset).starts_with(literals_[it->literal]))
                found |= Bits{1} << it->literal;
    }
    return found;
}

}  // namespace sg
