#pragma once
// Anchors: configurations observed on real machines (profiles/anchors.toml). A plan names the
// nearest comparable one (same method, dense or MoE alike, within a factor of 3 in size) and how
// far its estimate is from what was observed there; beyond 20% it names the terms that differ.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "accounting/estimator.hpp"
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
    // Per-term observations, when published ("weights", "adapter", "optimizer and gradients",
    // "activations", "overhead"), in the order of the plan's table.
    std::vector<std::pair<std::string, double>> terms;
};

// One term of the plan against the anchor's observation of it.
struct TermDifference {
    std::string term;
    double plan_gb = 0;
    double observed_gb = 0;
    double delta_gb() const { return plan_gb - observed_gb; }
};

struct AnchorMatch {
    const Anchor* anchor = nullptr;
    double distance = 0;                // similarity score: 0 is the same class of run
    std::optional<double> delta_gb;     // estimate - observed, when the anchor has a number
    // Beyond 20% apart: the terms that make the difference, largest first (empty when the anchor
    // publishes no breakdown).
    std::vector<TermDifference> differences;
    bool far_off() const;               // |delta| > 20% of the observed total
};

// Parses and validates; unknown keys throw UsageError with FILE:LINE:COLUMN.
std::vector<Anchor> load_anchors(const std::filesystem::path& file);
const std::vector<Anchor>& default_anchors();

// The plan's terms under the anchors' term names.
std::vector<std::pair<std::string, double>> plan_terms(const Estimate& estimate);

// The comparable anchor closest in size (log scale); nullptr anchor when none is comparable.
AnchorMatch nearest_anchor(const std::vector<Anchor>& anchors, double params_b, bool moe, Method method,
                           const Estimate& estimate);

}  // namespace sg::accounting
