// Published GPU figures: what `warpnet bench` takes a device's peak from and
// what the lessons compare against. Datasheet numbers, never measurements;
// one place, so a lesson and a benchmark cannot quote two peaks for one GPU.
#pragma once

namespace warpnet::device::datasheet {

// One architecture's dense rates (no sparsity; tensor cores accumulating in
// fp32), in FLOP per clock per SM: a datasheet rate divided by its part's SMs
// and clock. FP32: two FLOP per FMA lane.
struct Arch {
  int cc_major, cc_minor;
  double fp32, tensor16, fp8;  // 0: no such unit
  const char* source;
};

inline constexpr Arch kArchs[] = {
    {7, 0, 128, 1024, 0, "V100 SXM2: 15.7 TFLOP/s fp32, 125 fp16 = 80 SMs x 1.53 GHz x 128 / 1024"},
    {8, 0, 128, 2048, 0, "A100 SXM: 19.5 TFLOP/s fp32, 312 bf16 = 108 SMs x 1.41 GHz x 128 / 2048"},
    {8, 6, 256, 1024, 0,
     "A10: 31.2 TFLOP/s fp32, 125 fp16 = 72 SMs x 1.695 GHz x 256 / 1024 (GeForce parts: half the tensor rate with "
     "fp32 accumulation)"},
    {8, 9, 256, 1024, 2048,
     "L40S: 91.6 TFLOP/s fp32, 362 bf16, 733 fp8 = 142 SMs x 2.52 GHz x 256 / 1024 / 2048"},
    {9, 0, 256, 4096, 8192,
     "H100/H200 SXM: 67 TFLOP/s fp32 = 132 SMs x 1.98 GHz x 256; 989.4 bf16 and 1979 fp8 dense = 132 SMs x 1.83 GHz "
     "x 4096 / 8192"},
};

constexpr const Arch* find_arch(int cc_major, int cc_minor) {
  for (const Arch& a : kArchs)
    if (a.cc_major == cc_major && a.cc_minor == cc_minor) return &a;
  return nullptr;
}

// Parts whose datasheets state their tensor rates at a clock below the
// boost clock the device reports (and its FP32 rate is stated at). Hopper's
// three boards share the per-clock rates and differ in clocks: an H200 SXM
// reports 1.98 GHz, an H200 NVL 1.785, yet their tensor rates hold at 1.83
// and about 1.545. A part is known by its compute capability, its SM count
// and a piece of the name CUDA reports ("NVIDIA H200 NVL", "NVIDIA H100
// PCIe"; the SXM boards' names, "NVIDIA H200" and "NVIDIA H100 80GB HBM3",
// carry neither); the first that matches is taken.
struct Part {
  int cc_major, cc_minor;
  int sms;
  const char* name_has;     // "" matches any name
  double tensor_clock_ghz;  // the datasheet's dense tensor rate / (sms x FLOP per clock)
  const char* source;
};

inline constexpr Part kParts[] = {
    {9, 0, 132, "NVL", 1.545,
     "H100 NVL and H200 NVL: 835.5 bf16, 1671 fp8 TFLOP/s dense (1671 and 3341 with sparsity) = 132 SMs x "
     "1.545 GHz x 4096 / 8192"},
    {9, 0, 114, "PCIe", 1.62,
     "H100 PCIe: 756 bf16, 1513 fp8 TFLOP/s dense (1513 and 3026 with sparsity) = 114 SMs x 1.62 GHz x 4096 / 8192"},
    {9, 0, 132, "", 1.83,
     "H100 and H200 SXM: 989.4 bf16, 1979 fp8 TFLOP/s dense = 132 SMs x 1.83 GHz x 4096 / 8192"},
};

constexpr bool contains(const char* text, const char* piece) {
  for (; *text; ++text) {
    int i = 0;
    while (piece[i] && text[i] == piece[i]) ++i;
    if (!piece[i]) return true;
  }
  return !*piece;
}

constexpr const Part* find_part(int cc_major, int cc_minor, int sms, const char* name) {
  for (const Part& p : kParts)
    if (p.cc_major == cc_major && p.cc_minor == cc_minor && p.sms == sms && contains(name, p.name_has)) return &p;
  return nullptr;
}

// The clock a device's tensor-core peak is taken at: its part's datasheet
// clock where that is below the reported one; otherwise (another part, or
// clocks held below the datasheet's) the reported clock.
constexpr double tensor_clock_ghz(const Part* part, double reported_clock_ghz) {
  return part && part->tensor_clock_ghz < reported_clock_ghz ? part->tensor_clock_ghz : reported_clock_ghz;
}

constexpr double tflops(int sms, double clock_ghz, double flop_per_clock_per_sm) {
  return sms * clock_ghz * flop_per_clock_per_sm * 1e-3;
}

// The NVIDIA H200 SXM, the GPU of DESIGN.md's "Measuring" and the lessons'
// comparisons, as its datasheet states it (dense rates).
namespace h200 {
inline constexpr double kFp32Flops = 67e12;
inline constexpr double kBf16Flops = 989.4e12;  // also fp16; tf32 is half
inline constexpr double kFp8Flops = 1979e12;
inline constexpr double kMemoryBytesPerSecond = 4.8e12;  // HBM3e
// Memory as CUDA reports it: the datasheet's "141 GB" counts binary
// gigabytes (GiB, 2^30 bytes), of which the driver keeps a little; the H200
// of 2026-11-30 reported 139.80 GiB, 150.1e9 bytes (totalGlobalMem:
// bench/results/nvidia-h200-2026-11-30.json, gpu.memory_gib).
inline constexpr double kMemoryBytes = 139.80 * 1073741824.0;
}  // namespace h200

// What one Hopper SM (compute capability 9.0) can hold at once: the CUDA
// C++ Programming Guide's table of compute capabilities, and its occupancy
// rules (registers are given to a warp in units of 256; each block also
// takes 1 KiB of shared memory for the system).
namespace sm90 {
inline constexpr int kMaxThreadsPerSm = 2048;
inline constexpr int kMaxWarpsPerSm = 64;
inline constexpr int kMaxBlocksPerSm = 32;
inline constexpr int kRegistersPerSm = 65536;  // 32-bit: 256 KiB
inline constexpr int kMaxRegistersPerThread = 255;
inline constexpr int kRegisterUnitPerWarp = 256;
inline constexpr int kSharedBytesPerSm = 228 * 1024;
inline constexpr int kSharedBytesReservedPerBlock = 1024;
}  // namespace sm90

// The H100 SXM's "80 GB", in the same binary units (85.9e9 bytes; CUDA
// reports somewhat less, as on the H200; no H100 was measured here).
namespace h100 {
inline constexpr double kMemoryBytes = 80 * 1073741824.0;
}  // namespace h100

// The stated figures agree with the per-clock table (to their rounding).
static_assert(tflops(132, 1.98, find_arch(9, 0)->fp32) * 1e12 - h200::kFp32Flops < 0.5e12);
static_assert(tflops(132, 1.98, find_arch(9, 0)->fp32) * 1e12 - h200::kFp32Flops > -0.5e12);
static_assert(tflops(132, 1.83, find_arch(9, 0)->tensor16) * 1e12 - h200::kBf16Flops < 0.05e12);
static_assert(tflops(132, 1.83, find_arch(9, 0)->tensor16) * 1e12 - h200::kBf16Flops > -0.05e12);
static_assert(tflops(132, 1.83, find_arch(9, 0)->fp8) * 1e12 - h200::kFp8Flops < 0.5e12);
static_assert(tflops(132, 1.83, find_arch(9, 0)->fp8) * 1e12 - h200::kFp8Flops > -0.5e12);

}  // namespace warpnet::device::datasheet
