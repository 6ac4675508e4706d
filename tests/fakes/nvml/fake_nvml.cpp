// Stands in for libnvidia-ml.so.1 in tests: the NVML entry points sparkguard loads, answering for
// the machine named by $SPARKGUARD_FAKE_NVML, read at nvmlInit_v2:
//   gb10 (default)  one GB10: no enforced power limit (NOT_SUPPORTED), as the real driver answers
//   rtx4090         one discrete card with every value
//   two-a100        two cards
//   absent          one device that supports no value at all
//   no-driver       nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED
// Return codes and signatures are nvml.h's. fake_nvml_sessions() counts init minus shutdown.
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kSuccess = 0;
constexpr int kUninitialized = 1;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kDriverNotLoaded = 9;
constexpr int kInsufficientSize = 7;

struct Device {
    const char* name;
    int temp_c;
    int power_mw;
    int limit_mw;   // < 0: NOT_SUPPORTED
    int sm_mhz;
    int util_pct;
    unsigned long long reasons;
    int major, minor;
};

const Device kGb10 = {"NVIDIA GB10", 41, 11620, -1, 208, 0, 0x1, 12, 1};
const Device kRtx4090 = {"NVIDIA GeForce RTX 4090", 38, 24510, 450000, 210, 3, 0x1, 8, 9};
const Device kA100 = {"NVIDIA A100-SXM4-80GB", 33, 62100, 400000, 1410, 0, 0x0, 8, 0};
const Device kA100Hot = {"NVIDIA A100-SXM4-80GB", 71, 398000, 400000, 1275, 100, 0x4, 8, 0};

struct Machine {
    const Device* devices[2];
    unsigned count;
    int cuda;
    const char* driver;
    bool absent;
};

int sessions = 0;
Machine machine{};

Machine pick(const std::string& name) {
    if (name == "rtx4090") return {{&kRtx4090, nullptr}, 1, 12040, "550.120", false};
    if (name == "two-a100") return {{&kA100, &kA100Hot}, 2, 12020, "535.183.01", false};
    if (name == "absent") return {{&kGb10, nullptr}, 1, 13000, "580.95.05", true};
    return {{&kGb10, nullptr}, 1, 13000, "580.95.05", false};
}

const Device* device_of(void* handle) { return static_cast<const Device*>(handle); }

int copy(const char* text, char* out, unsigned length) {
    if (std::strlen(text) + 1 > length) return kInsufficientSize;
    std::strcpy(out, text);
    return kSuccess;
}

// Every per-device getter: initialised, a handle, and the device supports values at all.
int check(void* handle, const void* out) {
    if (sessions <= 0) return kUninitialized;
    if (!handle || !out) return kInvalidArgument;
    return machine.absent ? kNotSupported : kSuccess;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
    const char* name = std::getenv("SPARKGUARD_FAKE_NVML");
    if (name && std::string(name) == "no-driver") return kDriverNotLoaded;
    machine = pick(name ? name : "gb10");
    ++sessions;
    return kSuccess;
}

int nvmlShutdown() {
    if (sessions <= 0) return kUninitialized;
    --sessions;
    return kSuccess;
}

int fake_nvml_sessions() { return sessions; }

const char* nvmlErrorString(int rc) {
    switch (rc) {
        case kSuccess: return "Success";
        case kUninitialized: return "Uninitialized";
        case kInvalidArgument: return "Invalid Argument";
        case kNotSupported: return "Not Supported";
        case kInsufficientSize: return "Insufficient Size";
        case kDriverNotLoaded: return "Driver Not Loaded";
        default: return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned* count) {
    if (sessions <= 0) return kUninitialized;
    *count = machine.count;
    return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
    if (sessions <= 0) return kUninitialized;
    if (index >= machine.count) return kInvalidArgument;
    *device = const_cast<Device*>(machine.devices[index]);
    return kSuccess;
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
    if (sessions <= 0) return kUninitialized;
    return copy(device_of(device)->name, name, length);
}

int nvmlDeviceGetTemperature(void* device, int sensor, unsigned* temp) {
    if (int rc = check(device, temp); rc != kSuccess) return rc;
    if (sensor != 0) return kInvalidArgument;
    *temp = static_cast<unsigned>(device_of(device)->temp_c);
    return kSuccess;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned* milliwatts) {
    if (int rc = check(device, milliwatts); rc != kSuccess) return rc;
    *milliwatts = static_cast<unsigned>(device_of(device)->power_mw);
    return kSuccess;
}

int nvmlDeviceGetEnforcedPowerLimit(void* device, unsigned* milliwatts) {
    if (int rc = check(device, milliwatts); rc != kSuccess) return rc;
    if (device_of(device)->limit_mw < 0) return kNotSupported;
    *milliwatts = static_cast<unsigned>(device_of(device)->limit_mw);
    return kSuccess;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* mhz) {
    if (int rc = check(device, mhz); rc != kSuccess) return rc;
    if (type != 1) return kNotSupported;  // only NVML_CLOCK_SM is faked
    *mhz = static_cast<unsigned>(device_of(device)->sm_mhz);
    return kSuccess;
}

struct Utilization {
    unsigned gpu;
    unsigned memory;
};

int nvmlDeviceGetUtilizationRates(void* device, Utilization* utilization) {
    if (int rc = check(device, utilization); rc != kSuccess) return rc;
    utilization->gpu = static_cast<unsigned>(device_of(device)->util_pct);
    utilization->memory = 0;
    return kSuccess;
}

int nvmlDeviceGetCurrentClocksEventReasons(void* device, unsigned long long* reasons) {
    if (int rc = check(device, reasons); rc != kSuccess) return rc;
    *reasons = device_of(device)->reasons;
    return kSuccess;
}

int nvmlDeviceGetCudaComputeCapability(void* device, int* major, int* minor) {
    if (sessions <= 0) return kUninitialized;
    *major = device_of(device)->major;
    *minor = device_of(device)->minor;
    return kSuccess;
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
    if (sessions <= 0) return kUninitialized;
    return copy(machine.driver, version, length);
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
    if (sessions <= 0) return kUninitialized;
    *version = machine.cuda;
    return kSuccess;
}

}  // extern "C"
