#pragma once
// When a plan does not fit: the nearest configurations that do, each one change (or two) away from
// what was asked, with its peak. `plan` prints them, and `run --fit` says them before it stops.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "accounting/plan.hpp"

namespace sg::accounting {

struct Alternative {
    std::string change;  // the flags that make it: "--optimizer adamw-8bit", "--method lora --seq 1024"
    Plan plan;           // verdict fits, margin kept
};

// Best first: those that keep the requested length before those that need a shorter one; among
// them an 8-bit, then a bf16 optimizer, LoRA, QLoRA, checkpointing on, and last the same run at a
// shorter length. Empty when the plan fits or nothing near it does.
std::vector<Alternative> what_would_fit(const Plan& plan);

// "what would fit, best first:" and one indented line per alternative; empty for none.
std::string format_alternatives(const std::vector<Alternative>& alternatives);
// The same on one line, for a message that ends a run: "; what would fit: A (peak X GB), B (...)".
std::string alternatives_sentence(const std::vector<Alternative>& alternatives);
nlohmann::json to_json(const std::vector<Alternative>& alternatives);

}  // namespace sg::accounting
