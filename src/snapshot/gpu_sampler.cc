#include "snapshot/gpu_sampler.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "util/error.h"
#include "util/file_io.h"

namespace sextant {
namespace {

// ---------------------------------------------------------------------------------------
// NVML (nvml.h): functions return 0 (NVML_SUCCESS) on success.
struct NvmlMemory {
  unsigned long long total, free, used;  // nvmlMemory_t
};
struct NvmlUtilization {
  unsigned int gpu, memory;  // nvmlUtilization_t, percent
};
using NvmlDevice = void*;

class NvmlSampler : public GpuSampler {
 public:
  static std::unique_ptr<GpuSampler> Open() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto s = std::unique_ptr<NvmlSampler>(new NvmlSampler(lib));
    if (!s->Load()) return nullptr;
    return s;
  }
  ~NvmlSampler() override {
    if (shutdown_ && initialised_) shutdown_();
    dlclose(lib_);
  }
  std::string Name() const override { return "nvml"; }
  std::vector<GpuSample> Sample() override {
    std::vector<GpuSample> out;
    for (size_t i = 0; i < devices_.size(); ++i) {
      NvmlMemory mem{};
      if (memory_info_(devices_[i], &mem) != 0) continue;
      GpuSample s;
      s.gpu = static_cast<int>(i);
      s.memory_used_bytes = static_cast<int64_t>(mem.used);
      s.memory_total_bytes = static_cast<int64_t>(mem.total);
      NvmlUtilization util{};
      if (utilization_(devices_[i], &util) == 0) s.utilization_percent = util.gpu;
      out.push_back(s);
    }
    return out;
  }

 private:
  explicit NvmlSampler(void* lib) : lib_(lib) {}
  template <typename F>
  F Sym(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }
  bool Load() {
    auto init = Sym<int (*)()>("nvmlInit_v2");
    auto count = Sym<int (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
    auto handle = Sym<int (*)(unsigned int, NvmlDevice*)>("nvmlDeviceGetHandleByIndex_v2");
    memory_info_ = Sym<int (*)(NvmlDevice, NvmlMemory*)>("nvmlDeviceGetMemoryInfo");
    utilization_ = Sym<int (*)(NvmlDevice, NvmlUtilization*)>("nvmlDeviceGetUtilizationRates");
    shutdown_ = Sym<int (*)()>("nvmlShutdown");
    if (!init || !count || !handle || !memory_info_ || !utilization_) return false;
    if (init() != 0) return false;
    initialised_ = true;
    unsigned int n = 0;
    if (count(&n) != 0 || n == 0) return false;
    for (unsigned int i = 0; i < n; ++i) {
      NvmlDevice d = nullptr;
      if (handle(i, &d) == 0) devices_.push_back(d);
    }
    return !devices_.empty();
  }

  void* lib_;
  bool initialised_ = false;
  int (*memory_info_)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*shutdown_)() = nullptr;
  std::vector<NvmlDevice> devices_;
};

// ---------------------------------------------------------------------------------------
// amdsmi (amd_smi/amdsmi.h): functions return 0 (AMDSMI_STATUS_SUCCESS) on success.
constexpr uint64_t kAmdSmiInitAmdGpus = 1u << 1;  // AMDSMI_INIT_AMD_GPUS
constexpr int kAmdSmiMemTypeVram = 0;             // AMDSMI_MEM_TYPE_VRAM
struct AmdSmiEngineUsage {
  uint32_t gfx_activity, umc_activity, mm_activity;  // amdsmi_engine_usage_t, percent
  uint32_t reserved[13];
};
using AmdSmiHandle = void*;

class AmdSmiSampler : public GpuSampler {
 public:
  static std::unique_ptr<GpuSampler> Open() {
    void* lib = dlopen("libamd_smi.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("/opt/rocm/lib/libamd_smi.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return nullptr;
    auto s = std::unique_ptr<AmdSmiSampler>(new AmdSmiSampler(lib));
    if (!s->Load()) return nullptr;
    return s;
  }
  ~AmdSmiSampler() override {
    if (shutdown_ && initialised_) shutdown_();
    dlclose(lib_);
  }
  std::string Name() const override { return "amdsmi"; }
  std::vector<GpuSample> Sample() override {
    std::vector<GpuSample> out;
    for (size_t i = 0; i < gpus_.size(); ++i) {
      uint64_t total = 0, used = 0;
      if (mem_total_(gpus_[i], kAmdSmiMemTypeVram, &total) != 0) continue;
      if (mem_usage_(gpus_[i], kAmdSmiMemTypeVram, &used) != 0) continue;
      GpuSample s;
      s.gpu = static_cast<int>(i);
      s.memory_used_bytes = static_cast<int64_t>(used);
      s.memory_total_bytes = static_cast<int64_t>(total);
      AmdSmiEngineUsage usage{};
      if (activity_ && activity_(gpus_[i], &usage) == 0) s.utilization_percent = usage.gfx_activity;
      out.push_back(s);
    }
    return out;
  }

 private:
  explicit AmdSmiSampler(void* lib) : lib_(lib) {}
  template <typename F>
  F Sym(const char* name) {
    return reinterpret_cast<F>(dlsym(lib_, name));
  }
  bool Load() {
    auto init = Sym<int (*)(uint64_t)>("amdsmi_init");
    auto sockets = Sym<int (*)(uint32_t*, AmdSmiHandle*)>("amdsmi_get_socket_handles");
    auto processors =
        Sym<int (*)(AmdSmiHandle, uint32_t*, AmdSmiHandle*)>("amdsmi_get_processor_handles");
    mem_total_ = Sym<int (*)(AmdSmiHandle, int, uint64_t*)>("amdsmi_get_gpu_memory_total");
    mem_usage_ = Sym<int (*)(AmdSmiHandle, int, uint64_t*)>("amdsmi_get_gpu_memory_usage");
    activity_ = Sym<int (*)(AmdSmiHandle, AmdSmiEngineUsage*)>("amdsmi_get_gpu_activity");
    shutdown_ = Sym<int (*)()>("amdsmi_shut_down");
    if (!init || !sockets || !processors || !mem_total_ || !mem_usage_) return false;
    if (init(kAmdSmiInitAmdGpus) != 0) return false;
    initialised_ = true;
    uint32_t n_sockets = 0;
    if (sockets(&n_sockets, nullptr) != 0 || n_sockets == 0 || n_sockets > 1024) return false;
    std::vector<AmdSmiHandle> socket_handles(n_sockets);
    if (sockets(&n_sockets, socket_handles.data()) != 0) return false;
    for (uint32_t s = 0; s < n_sockets; ++s) {
      uint32_t n = 0;
      if (processors(socket_handles[s], &n, nullptr) != 0 || n == 0 || n > 1024) continue;
      std::vector<AmdSmiHandle> handles(n);
      if (processors(socket_handles[s], &n, handles.data()) != 0) continue;
      gpus_.insert(gpus_.end(), handles.begin(), handles.begin() + n);
    }
    return !gpus_.empty();
  }

  void* lib_;
  bool initialised_ = false;
  int (*mem_total_)(AmdSmiHandle, int, uint64_t*) = nullptr;
  int (*mem_usage_)(AmdSmiHandle, int, uint64_t*) = nullptr;
  int (*activity_)(AmdSmiHandle, AmdSmiEngineUsage*) = nullptr;
  int (*shutdown_)() = nullptr;
  std::vector<AmdSmiHandle> gpus_;
};

// ---------------------------------------------------------------------------------------
// amdgpu sysfs: one decimal number per file.
bool ReadNumber(const std::filesystem::path& path, int64_t& value) {
  std::string text;
  try {
    text = ReadFile(path.string(), 4096);  // sysfs reports 4096 bytes for every attribute
  } catch (const UserError&) {
    return false;  // absent, unreadable, or not a regular file
  }
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || v < 0) return false;
  value = v;
  return true;
}

class SysfsSampler : public GpuSampler {
 public:
  SysfsSampler(std::string root, std::vector<std::filesystem::path> devices)
      : root_(std::move(root)), devices_(std::move(devices)) {}
  std::string Name() const override { return "sysfs:" + root_; }
  std::vector<GpuSample> Sample() override {
    std::vector<GpuSample> out;
    for (size_t i = 0; i < devices_.size(); ++i) {
      GpuSample s;
      s.gpu = static_cast<int>(i);
      if (!ReadNumber(devices_[i] / "mem_info_vram_used", s.memory_used_bytes)) continue;
      if (!ReadNumber(devices_[i] / "mem_info_vram_total", s.memory_total_bytes)) continue;
      int64_t busy = 0;
      if (ReadNumber(devices_[i] / "gpu_busy_percent", busy)) s.utilization_percent = double(busy);
      out.push_back(s);
    }
    return out;
  }

 private:
  std::string root_;
  std::vector<std::filesystem::path> devices_;
};

}  // namespace

std::unique_ptr<GpuSampler> OpenNvmlSampler() { return NvmlSampler::Open(); }
std::unique_ptr<GpuSampler> OpenAmdSmiSampler() { return AmdSmiSampler::Open(); }

std::unique_ptr<GpuSampler> OpenSysfsSampler(const std::string& drm_root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::pair<long, fs::path>> cards;
  for (const auto& entry : fs::directory_iterator(drm_root, ec)) {
    std::string name = entry.path().filename().string();
    // card0, card1, ... but not connectors such as card0-DP-1.
    if (name.size() <= 4 || name.compare(0, 4, "card") != 0) continue;
    if (!std::all_of(name.begin() + 4, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      continue;
    fs::path device = entry.path() / "device";
    if (!fs::exists(device / "mem_info_vram_total", ec)) continue;
    cards.emplace_back(std::strtol(name.c_str() + 4, nullptr, 10), device);
  }
  if (cards.empty()) return nullptr;
  std::sort(cards.begin(), cards.end());
  std::vector<fs::path> devices;
  for (auto& c : cards) devices.push_back(c.second);
  return std::make_unique<SysfsSampler>(drm_root, std::move(devices));
}

std::unique_ptr<GpuSampler> OpenGpuSampler(const std::string& drm_root) {
  if (auto s = OpenNvmlSampler()) return s;
  if (auto s = OpenAmdSmiSampler()) return s;
  return OpenSysfsSampler(drm_root);
}

}  // namespace sextant
