#pragma once
// The knobs the ladder turns, as one value: what an attempt runs with.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "accounting/workload.hpp"

namespace sg {

using accounting::Method;

struct TrainConfig {
    std::optional<long> batch_size;   // per-device batch
    std::optional<long> grad_accum;   // gradient accumulation steps
    std::optional<long> seq_len;      // sequence / packing length
    std::optional<Method> method;     // unknown when the command does not say
    std::optional<std::string> model; // model path or hub name, when the trainer takes one
    bool drop_caches = false;         // drop the page cache before each launch (sticky once reached)

    // batch × accumulation: what smaller-batch must keep.
    std::optional<long> effective_batch() const;
    bool operator==(const TrainConfig&) const = default;
};

// "batch 4×2, seq 512, lora, drop-caches": a configuration, short, for people.
std::string describe(const TrainConfig& config);

nlohmann::json to_json(const TrainConfig& config);
TrainConfig train_config_from_json(const nlohmann::json& json);

}  // namespace sg
