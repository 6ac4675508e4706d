#include "telemetry/nvml.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace sg::telemetry {
namespace {

// nvml.h's types and constants, restated so that no CUDA header is needed to build.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};
constexpr nvmlReturn_t kSuccess = 0;
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;         // NVML_CLOCK_SM
constexpr unsigned kNameBuffer = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

template <class F>
F symbol(void* handle, const char* name) {
    return reinterpret_cast<F>(::dlsym(handle, name));
}

// Calls `get(&value)`; the value scaled by `scale` on success, empty otherwise (NOT_SUPPORTED above all).
template <class Get>
std::optional<double> read_uint(Get get, double scale = 1) {
    unsigned int value = 0;
    if (get(&value) != kSuccess) return std::nullopt;
    return value * scale;
}

}  // namespace

struct Nvml::Api {
    nvmlReturn_t (*init)() = nullptr;
    nvmlReturn_t (*shutdown)() = nullptr;
    const char* (*error_string)(nvmlReturn_t) = nullptr;
    nvmlReturn_t (*device_count)(unsigned int*) = nullptr;
    nvmlReturn_t (*handle_by_index)(unsigned int, nvmlDevice_t*) = nullptr;
    nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned int) = nullptr;
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int*) = nullptr;
    nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*enforced_power_limit)(nvmlDevice_t, unsigned int*) = nullptr;
    nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned int*) = nullptr;
    nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
    nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
    nvmlReturn_t (*driver_version)(char*, unsigned int) = nullptr;
    nvmlReturn_t (*cuda_driver_version)(int*) = nullptr;
    nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*) = nullptr;

    explicit Api(void* h) {
        init = symbol<decltype(init)>(h, "nvmlInit_v2");
        shutdown = symbol<decltype(shutdown)>(h, "nvmlShutdown");
        error_string = symbol<decltype(error_string)>(h, "nvmlErrorString");
        device_count = symbol<decltype(device_count)>(h, "nvmlDeviceGetCount_v2");
        handle_by_index = symbol<decltype(handle_by_index)>(h, "nvmlDeviceGetHandleByIndex_v2");
        name = symbol<decltype(name)>(h, "nvmlDeviceGetName");
        temperature = symbol<decltype(temperature)>(h, "nvmlDeviceGetTemperature");
        power_usage = symbol<decltype(power_usage)>(h, "nvmlDeviceGetPowerUsage");
        enforced_power_limit = symbol<decltype(enforced_power_limit)>(h, "nvmlDeviceGetEnforcedPowerLimit");
        clock_info = symbol<decltype(clock_info)>(h, "nvmlDeviceGetClockInfo");
        utilization = symbol<decltype(utilization)>(h, "nvmlDeviceGetUtilizationRates");
        // Renamed in R535; the old name is still exported for old callers, and the only one before.
        event_reasons = symbol<decltype(event_reasons)>(h, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!event_reasons) event_reasons = symbol<decltype(event_reasons)>(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
        driver_version = symbol<decltype(driver_version)>(h, "nvmlSystemGetDriverVersion");
        cuda_driver_version = symbol<decltype(cuda_driver_version)>(h, "nvmlSystemGetCudaDriverVersion_v2");
        compute_capability = symbol<decltype(compute_capability)>(h, "nvmlDeviceGetCudaComputeCapability");
    }

    std::string message(nvmlReturn_t rc) const {
        const char* text = error_string ? error_string(rc) : nullptr;
        return (text ? std::string(text) : "NVML error") + " (" + std::to_string(rc) + ")";
    }
};

std::string default_nvml_library() {
    const char* configured = std::getenv("SPARKGUARD_NVML_LIBRARY");
    return configured && *configured ? configured : "libnvidia-ml.so.1";
}

Result<std::unique_ptr<Nvml>> Nvml::open(const std::string& library) {
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        return make_error("NVML: " + std::string(why ? why : library + ": cannot be loaded"));
    }
    auto api = std::make_unique<Api>(handle);
    if (!api->init || !api->shutdown || !api->device_count || !api->handle_by_index) {
        ::dlclose(handle);
        return make_error("NVML: " + library + " lacks nvmlInit_v2, nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2");
    }
    auto fail = [&](const std::string& what, nvmlReturn_t rc, bool initialised) -> Error {
        std::string text = "NVML: " + what + ": " + api->message(rc);
        if (initialised) api->shutdown();
        ::dlclose(handle);
        return make_error(text);
    };
    if (nvmlReturn_t rc = api->init(); rc != kSuccess) return fail("nvmlInit_v2", rc, false);
    unsigned int count = 0;
    if (nvmlReturn_t rc = api->device_count(&count); rc != kSuccess) return fail("nvmlDeviceGetCount_v2", rc, true);
    std::vector<void*> devices;
    for (unsigned int i = 0; i < count; ++i) {
        nvmlDevice_t device = nullptr;
        if (nvmlReturn_t rc = api->handle_by_index(i, &device); rc != kSuccess)
            return fail("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) + ")", rc, true);
        devices.push_back(device);
    }
    if (devices.empty()) {
        api->shutdown();
        ::dlclose(handle);
        return make_error("NVML: no GPU");
    }
    return std::unique_ptr<Nvml>(new Nvml(handle, std::move(api), std::move(devices)));
}

Nvml::Nvml(void* handle, std::unique_ptr<Api> api, std::vector<void*> devices)
    : handle_(handle), api_(std::move(api)), devices_(std::move(devices)) {}

Nvml::~Nvml() {
    api_->shutdown();
    ::dlclose(handle_);
}

std::vector<GpuSample> Nvml::sample() const {
    std::vector<GpuSample> samples;
    for (int i = 0; i < device_count(); ++i) samples.push_back(sample_device(i));
    return samples;
}

GpuSample Nvml::sample_device(int index) const {
    nvmlDevice_t device = devices_[static_cast<size_t>(index)];
    const Api& a = *api_;
    GpuSample s;
    s.index = index;
    if (a.temperature) s.temp_c = read_uint([&](unsigned* v) { return a.temperature(device, kTemperatureGpu, v); });
    if (a.power_usage) s.power_w = read_uint([&](unsigned* v) { return a.power_usage(device, v); }, 1e-3);
    if (a.enforced_power_limit)
        s.power_limit_w = read_uint([&](unsigned* v) { return a.enforced_power_limit(device, v); }, 1e-3);
    if (a.clock_info) s.sm_clock_mhz = read_uint([&](unsigned* v) { return a.clock_info(device, kClockSm, v); });
    nvmlUtilization_t utilization{};
    if (a.utilization && a.utilization(device, &utilization) == kSuccess) s.util_pct = utilization.gpu;
    unsigned long long reasons = 0;
    if (a.event_reasons && a.event_reasons(device, &reasons) == kSuccess) s.throttle = reasons;
    return s;
}

std::optional<std::string> Nvml::name(int index) const {
    char buffer[kNameBuffer] = {};
    if (!api_->name || api_->name(devices_.at(static_cast<size_t>(index)), buffer, kNameBuffer) != kSuccess) return std::nullopt;
    return std::string(buffer);
}

std::optional<std::string> Nvml::driver_version() const {
    char buffer[kNameBuffer] = {};
    if (!api_->driver_version || api_->driver_version(buffer, kNameBuffer) != kSuccess) return std::nullopt;
    return std::string(buffer);
}

std::optional<std::string> Nvml::cuda_version() const {
    int version = 0;  // 1000 × major + 10 × minor: 13000 is CUDA 13.0
    if (!api_->cuda_driver_version || api_->cuda_driver_version(&version) != kSuccess) return std::nullopt;
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::optional<std::string> Nvml::compute_cap(int index) const {
    int major = 0, minor = 0;
    if (!api_->compute_capability ||
        api_->compute_capability(devices_.at(static_cast<size_t>(index)), &major, &minor) != kSuccess)
        return std::nullopt;
    return std::to_string(major) + "." + std::to_string(minor);
}

}  // namespace sg::telemetry
