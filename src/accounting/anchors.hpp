#pragma once
// Anchors: configurations observed on real machines (profiles/anchors.toml). A plan names the
// nearest one and how far its estimate is from what was observed there.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accounting/workload.hpp"

namespace sg::accounting {

struct Anchor {
    std::string name;
    std::string description;
    std::string platform;
    double params_b = 0;
    bool moe = false;
    Method method = Method::lora;
    std::optional<double> observed_gb;  // the measured total, when one was published
    bool fits = true;                   // it ran (true) or ran out of memory / cannot load (false)
    std::string observed;               // what was observed, in words
    std::string source;
};

struct AnchorMatch {
    const Anchor* anchor = nullptr;
    double distance = 0;                // similarity score: 0 is the same class of run
    std::optional<double> delta_gb;     // estimate - observed, when the anchor has a number
};

// Parses and validates; unknown keys throw UsageError with FILE:LINE:COLUMN.
std::vector<Anchor> load_anchors(const std::filesystem::path& file);
const std::vector<Anchor>& default_anchors();

// The anchor closest in size (log scale), method and dense/MoE; nullptr anchor when there are none.
AnchorMatch nearest_anchor(const std::vector<Anchor>& anchors, double params_b, bool moe, Method method,
                           double estimate_gb);

}  // namespace sg::accounting
