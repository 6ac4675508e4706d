#pragma once
// NVML, loaded at run time with dlopen: no build-time CUDA dependency, and a machine without the
// driver simply has no NVML. A value the device does not support (NVML_ERROR_NOT_SUPPORTED, as
// GB10 answers for its power limit) or cannot give now is an empty optional.
//
//   auto nvml = Nvml::open();                 // Result: the error says why there is no NVML
//   if (nvml) samples = (*nvml)->sample();   // one GpuSample per device, on each tick

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/gpu_sample.hpp"
#include "util/result.hpp"

namespace sg::telemetry {

// $SPARKGUARD_NVML_LIBRARY (tests point it at a fake) or "libnvidia-ml.so.1", the driver's soname.
std::string default_nvml_library();

class Nvml {
public:
    // dlopen, nvmlInit_v2, a handle for every device. Errors: the library is missing, the driver
    // is not loaded (NVML's own message), no devices.
    static Result<std::unique_ptr<Nvml>> open(const std::string& library = default_nvml_library());
    ~Nvml();
    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;

    int device_count() const { return static_cast<int>(devices_.size()); }
    std::vector<GpuSample> sample() const;

    std::optional<std::string> name(int index) const;
    std::optional<std::string> driver_version() const;
    std::optional<std::string> cuda_version() const;  // "13.0", from nvmlSystemGetCudaDriverVersion_v2
    std::optional<std::string> compute_cap(int index) const;  // "12.1"

private:
    struct Api;  // the resolved entry points
    Nvml(void* handle, std::unique_ptr<Api> api, std::vector<void*> devices);
    GpuSample sample_device(int index) const;

    void* handle_;
    std::unique_ptr<Api> api_;
    std::vector<void*> devices_;  // nvmlDevice_t
};

}  // namespace sg::telemetry
