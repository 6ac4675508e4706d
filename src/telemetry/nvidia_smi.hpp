#pragma once
// nvidia-smi as a source: the one-shot query that learns which --query-gpu fields this driver
// answers ("probe once, use what answers"), the argv of the long-lived `-lms N` sampling child
// that the supervisor's event loop reads, and the pure parser of that child's lines.
//
//   SmiProbe probe = probe_smi_sampling();            // once, before the first launch
//   if (probe.query) spawn(smi_loop_argv(*probe.query, 1000));
//   on each line:   if (auto s = parse_smi_line(*probe.query, line)) latest.update(*s);
//   on each tick:   aggregate(latest.current())

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/gpu_sample.hpp"
#include "util/result.hpp"

namespace sg::telemetry {

// A cell as nvidia-smi prints it. "[N/A]", "[Not Supported]", "N/A", "[Unknown Error]" and the
// other bracketed states are empty. smi_number also accepts a unit after the number ("11.62 W").
std::optional<std::string> smi_text(std::string_view cell);
std::optional<double> smi_number(std::string_view cell);
// "0x0000000000000004" (clocks_event_reasons.active) as a bitmask.
std::optional<std::uint64_t> smi_bitmask(std::string_view cell);

// The field nvidia-smi refused: 'Field "X" is not a valid field to query.' gives X.
std::optional<std::string> refused_field(std::string_view output);

// One thing to ask nvidia-smi, by every name drivers have given it, newest first.
struct SmiField {
    std::string key;                 // the caller's name for it
    std::vector<std::string> names;  // e.g. clocks_event_reasons.active, clocks_throttle_reasons.active
    bool required = false;           // without it the answer is useless: refusal is an error
};

struct SmiAnswer {
    std::vector<std::string> keys;     // the fields that answered, in query order
    std::vector<std::string> names;    // the name each one answered to
    std::string csv;                   // the noheader,nounits output
    std::vector<std::string> refused;  // names the driver refused, in the order it refused them
};

// Where a field stands while the refusals come in: the name to ask next, or none left.
struct SmiFieldChoice {
    const SmiField* field = nullptr;
    size_t name = 0;  // index into field->names
};
// Moves past `refused`: the field asking by that name falls back to its next name or is dropped.
// An error when the refused name is a required field's last one, or names no field asked for.
Status skip_refused(std::vector<SmiFieldChoice>& choices, const std::string& refused);

// Runs `nvidia-smi --query-gpu=... --format=csv,noheader,nounits` (from PATH) until the driver
// accepts the query, falling back through names and dropping refused fields. Errors name the
// reason: nvidia-smi not found, the driver's own message and exit status, a required field refused.
Result<SmiAnswer> query_gpus(const std::vector<SmiField>& fields, double timeout_seconds);

// What the sampler asks for: index (required), temperature, power draw, enforced power limit,
// SM clock, utilisation and the active clocks event (throttle) reasons.
const std::vector<SmiField>& sample_fields();

// The fields that answered with a value, in the order the sampling child prints them.
struct SmiQuery {
    std::vector<std::string> keys;   // "index", "temp", "power", "power_limit", "sm_clock", "util", "throttle"
    std::vector<std::string> names;  // the --query-gpu names for those keys on this driver
};

struct SmiProbe {
    std::optional<SmiQuery> query;  // empty: nvidia-smi cannot sample here, `problem` says why
    std::vector<GpuSample> first;   // the probe's own reading, one per GPU
    std::string problem;
    std::vector<std::string> notes;  // fields refused, or empty on every GPU, and left out
};

// The pure half of the probe: from the driver's answer, the query the sampler keeps (fields that
// are empty on every GPU, like GB10's power limit, are left out).
SmiProbe smi_probe_from_answer(const SmiAnswer& answer);
// One-shot probe through nvidia-smi; never throws.
SmiProbe probe_smi_sampling(double timeout_seconds = 10);

// argv of the long-lived child: one line per GPU every `interval_ms`, flushed as printed.
std::vector<std::string> smi_loop_argv(const SmiQuery& query, int interval_ms);

// One line of that child's output (or of the probe's). Errors name the line and the field.
Result<GpuSample> parse_smi_line(const SmiQuery& query, std::string_view line);

// The newest sample of each GPU, as the child's lines come in (one line per GPU per interval).
class LatestGpuSamples {
public:
    void update(const GpuSample& sample) { by_index_[sample.index] = sample; }
    // Forget everything: the child died, its last values must not stand in for new ones.
    void clear() { by_index_.clear(); }
    std::vector<GpuSample> current() const;

private:
    std::map<int, GpuSample> by_index_;
};

}  // namespace sg::telemetry
