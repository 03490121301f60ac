// Device-side builtins for kernels compiled by g++: thread indices, barriers,
// warp collectives, dynamic shared memory. Anything that touches emulator
// state is an out-of-line call into the (never instrumented) library, so a
// traced kernel's loads and stores are only its own.
#pragma once
#include <cstdint>
#include <cstring>
#include <source_location>
#include <type_traits>

#include "simt/cuda_types.hpp"

// CUDA's 16-bit float types and their pairs (low_precision.hpp), which warp shuffles take.
struct __half;
struct __nv_bfloat16;
struct __half2;
struct __nv_bfloat162;

namespace warpnet::simt {

// gnu::const: the value never changes while one emulated thread runs the kernel,
// so the compiler may keep it in a register instead of calling again.
[[gnu::const]] uint3 thread_idx();
[[gnu::const]] uint3 block_idx();
[[gnu::const]] dim3 block_dim();
[[gnu::const]] dim3 grid_dim();

// The block's dynamic shared memory (the third <<<>>> argument, in bytes).
void* dynamic_shared_memory();

enum class WarpOp : uint8_t {
  syncwarp, shfl, shfl_up, shfl_down, shfl_xor, ballot, any, all, activemask, matrix,
  // sm_80's integer reductions (arg: 1 for the signed overloads of min and
  // max) and sm_70's matches, which compare values bit for bit.
  reduce_add, reduce_min, reduce_max, reduce_and, reduce_or, reduce_xor, match_any, match_all
};

// Parks the calling lane until every lane named in `mask` arrives at a
// collective with the same mask, then returns this lane's result.
uint64_t warp_collective(WarpOp op, unsigned mask, uint64_t value, int arg, int width);

// A warp-wide matrix instruction (wmma::*_sync, mma.sync, ldmatrix): each of
// the warp's 32 lanes parks with a pointer to its operands (on its own stack);
// once all have arrived, `run` is called once with every lane's operands,
// indexed by lane, and computes every lane's result. All 32 lanes must take
// part (.sync.aligned): a partial warp or lanes in different instructions are errors.
struct WarpMatrixOp {
  const char* name;                    // "mma.sync.aligned.m16n8k16...", for messages
  void (*run)(void* const* operands);  // out of line in the library: never instrumented
  void* operands;                      // this lane's
  // The warp then waits until every other thread of the block has run as far
  // as it can (wgmma.wait_group): async units get their chance to race it.
  bool yields = false;
};
void warp_matrix_op(const WarpMatrixOp& op);

// cp.async, per thread: a copy is queued when issued and made when a
// cp.async.wait_group waits for its group — the latest moment a GPU may make
// it, so a kernel that reads the destination too early reads stale data here too.
struct AsyncCopy {
  void* dst;               // shared
  const void* src;         // global
  uint32_t bytes;          // 4, 8 or 16
  uint32_t src_bytes;      // read from src; the rest of `bytes` is zero-filled
  uint32_t group;          // 0 until cp.async.commit_group, then 1, 2, ...
};
void async_copy_issue(const char* instruction, void* dst, const void* src, unsigned bytes, unsigned src_bytes);
void async_copy_commit();
// Takes the next copy that `cp.async.wait_group pending` must complete (all
// committed groups but the newest `pending`); false when none is left. The
// caller (inline kernel code) makes the copy, so traced kernels see its accesses.
bool async_copy_next(unsigned pending, AsyncCopy* copy);

// A global read of `bytes` at `address` by the calling lane, for a traced
// kernel's checker and tracer, at the caller's code address: for a read the
// code makes where the instrumentation cannot see it (cp.async's src-size
// bytes, through memcpy). Traced copies only call it. One function per
// instruction width (4, 8, 16: hooks.cpp) keeps the calls of different
// widths from being merged into one code address.
template <unsigned Width>
[[gnu::noinline]] void traced_read(const void* address, size_t bytes);

// The calling thread's lane in its warp (PTX %laneid).
[[gnu::const]] unsigned lane_id();

// Stops the launch with cudaErrorLaunchFailure and a message naming the thread:
// for misuse a GPU leaves undefined (a misaligned ldmatrix row, a bad ldm).
[[noreturn]] void device_misuse(const char* instruction, const char* why, const void* address);

// Stops the launch with cudaErrorMisalignedAddress, as a GPU does when a
// vector access (a float4's 16 bytes, a float2's 8) is not aligned to its size.
[[noreturn]] void misaligned_access(const char* instruction, const void* address, unsigned bytes);
// The same for the instruction at `pc` (the traced build's access hooks).
[[noreturn]] void misaligned_access_at(const char* instruction, const void* pc, const void* address, unsigned bytes);

// The types CUDA's warp shuffles take (CUDA C++ Programming Guide, "Warp
// Shuffle Functions"). nvcc has no overload for a struct, a pointer or a float2, so
// neither does the emulator: a kernel shuffling one would pass here and not
// build for the GPU.
template <class T>
inline constexpr bool is_shuffle_type =
    std::is_same_v<T, int> || std::is_same_v<T, unsigned> || std::is_same_v<T, long> ||
    std::is_same_v<T, unsigned long> || std::is_same_v<T, long long> || std::is_same_v<T, unsigned long long> ||
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, ::__half> ||
    std::is_same_v<T, ::__nv_bfloat16> || std::is_same_v<T, ::__half2> || std::is_same_v<T, ::__nv_bfloat162>;

// The type a shuffle of a T returns: nvcc takes bool, char, short and
// unscoped enums through its int overload, so they come back as int.
template <class T>
using shuffled_t = std::conditional_t<(std::is_integral_v<T> && sizeof(T) < sizeof(int)) ||
                                          (std::is_enum_v<T> && std::is_convertible_v<T, int>),
                                      int, T>;

template <class T>
uint64_t to_bits(T value) {
  static_assert(is_shuffle_type<T>,
                "CUDA shuffles int, unsigned, long, long long (and unsigned), float, double, __half, "
                "__nv_bfloat16 and their pairs (bool, char, short and enums as int) only");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <class T>
T from_bits(uint64_t bits) {
  // The toolkit's __half2 and __nv_bfloat162 declare their own copies, so
  // they are not trivially copyable, but are two 16-bit patterns all the same.
  static_assert(std::is_trivially_copyable_v<T> || std::is_same_v<T, ::__half2> ||
                    std::is_same_v<T, ::__nv_bfloat162>,
                "a shuffled value is its bytes");
  T value;
  // Through void*: CUDA's __half keeps its bits in a protected member, and
  // GCC warns (-Wclass-memaccess) about copying bytes into such a class.
  std::memcpy(static_cast<void*>(&value), &bits, sizeof(T));
  return value;
}

}  // namespace warpnet::simt

#define threadIdx (::warpnet::simt::thread_idx())
#define blockIdx (::warpnet::simt::block_idx())
#define blockDim (::warpnet::simt::block_dim())
#define gridDim (::warpnet::simt::grid_dim())
inline constexpr int warpSize = 32;

// The default arguments name the call's place in the source: that, not the
// call instruction, is which __syncthreads() a thread waits at. g++ may copy
// one call into both arms of a branch (-O3's path splitting, loop unswitching)
// and the copies, reached by different threads, are still one barrier.
void __syncthreads(std::source_location place = std::source_location::current());
int __syncthreads_count(int predicate, std::source_location place = std::source_location::current());
int __syncthreads_and(int predicate, std::source_location place = std::source_location::current());
int __syncthreads_or(int predicate, std::source_location place = std::source_location::current());
void __threadfence();
void __threadfence_block();
void __threadfence_system();
// A clock that only increases: the host's, in nanoseconds (builtins.cpp), not the SM's cycles.
long long int clock64();
// Lets the block's other threads run before this one goes on (sm_70).
void __nanosleep(unsigned ns);

// The lanes of the warp that reached this call together (the same instruction).
unsigned __activemask();

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  ::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::syncwarp, mask, 0, 0, warpSize);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::ballot, mask, predicate != 0, 0, warpSize));
}
inline int __any_sync(unsigned mask, int predicate) {
  return int(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::any, mask, predicate != 0, 0, warpSize));
}
inline int __all_sync(unsigned mask, int predicate) {
  return int(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::all, mask, predicate != 0, 0, warpSize));
}

template <class T, class V = ::warpnet::simt::shuffled_t<T>>
V __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  using namespace ::warpnet::simt;
  return from_bits<V>(warp_collective(WarpOp::shfl, mask, to_bits(V(var)), src_lane, width));
}
template <class T, class V = ::warpnet::simt::shuffled_t<T>>
V __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  using namespace ::warpnet::simt;
  return from_bits<V>(warp_collective(WarpOp::shfl_up, mask, to_bits(V(var)), int(delta), width));
}
template <class T, class V = ::warpnet::simt::shuffled_t<T>>
V __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  using namespace ::warpnet::simt;
  return from_bits<V>(warp_collective(WarpOp::shfl_down, mask, to_bits(V(var)), int(delta), width));
}
template <class T, class V = ::warpnet::simt::shuffled_t<T>>
V __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize) {
  using namespace ::warpnet::simt;
  return from_bits<V>(warp_collective(WarpOp::shfl_xor, mask, to_bits(V(var)), lane_mask, width));
}

// The warp reductions (sm_80): every lane named in `mask` gets the sum,
// minimum, maximum or bitwise and/or/xor of their values, 32-bit integers
// only (CUDA has no float overloads). A sum wraps as the hardware's does.
inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_add, mask, value, 0, warpSize));
}
inline int __reduce_add_sync(unsigned mask, int value) { return int(__reduce_add_sync(mask, unsigned(value))); }
inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_min, mask, value, 0, warpSize));
}
inline int __reduce_min_sync(unsigned mask, int value) {
  return int(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_min, mask, unsigned(value), 1, warpSize));
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_max, mask, value, 0, warpSize));
}
inline int __reduce_max_sync(unsigned mask, int value) {
  return int(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_max, mask, unsigned(value), 1, warpSize));
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_and, mask, value, 0, warpSize));
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_or, mask, value, 0, warpSize));
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return unsigned(::warpnet::simt::warp_collective(::warpnet::simt::WarpOp::reduce_xor, mask, value, 0, warpSize));
}

namespace warpnet::simt {
// What __match_*_sync compares: CUDA's overloads take 32- and 64-bit
// integers, float and double, and compare their bits (+0.0 and -0.0 differ,
// a NaN matches the same NaN).
template <class T>
inline constexpr bool is_match_type = std::is_same_v<T, int> || std::is_same_v<T, unsigned> ||
                                      std::is_same_v<T, long> || std::is_same_v<T, unsigned long> ||
                                      std::is_same_v<T, long long> || std::is_same_v<T, unsigned long long> ||
                                      std::is_same_v<T, float> || std::is_same_v<T, double>;
}  // namespace warpnet::simt

// The lanes of `mask` whose value has this lane's bits (sm_70).
template <class T>
unsigned __match_any_sync(unsigned mask, T value) {
  using namespace ::warpnet::simt;
  static_assert(is_match_type<T>, "CUDA matches int, unsigned, long, long long (and unsigned), float and double only");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return unsigned(warp_collective(WarpOp::match_any, mask, bits, 0, warpSize));
}
// `mask` where every lane of it has the same bits (*pred = 1), else 0 (*pred = 0).
template <class T>
unsigned __match_all_sync(unsigned mask, T value, int* pred) {
  using namespace ::warpnet::simt;
  static_assert(is_match_type<T>, "CUDA matches int, unsigned, long, long long (and unsigned), float and double only");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  const unsigned same = unsigned(warp_collective(WarpOp::match_all, mask, bits, 0, warpSize));
  *pred = same != 0;
  return same;
}

// Read-only cache load: an ordinary load on the CPU.
template <class T>
inline T __ldg(const T* address) {
  return *address;
}
// The cache-hinted loads and stores (ld.global.ca/.cg/.cs/.lu/.cv,
// st.global.wb/.cg/.cs/.wt): hints about L1 and L2 a CPU has no use for, so
// ordinary accesses here, traced as such.
#define WARPNET_PLAIN_LOAD(name)          \
  template <class T>                      \
  inline T name(const T* address) {       \
    return *address;                      \
  }
#define WARPNET_PLAIN_STORE(name)         \
  template <class T>                      \
  inline void name(T* address, T value) { \
    *address = value;                     \
  }
WARPNET_PLAIN_LOAD(__ldca)
WARPNET_PLAIN_LOAD(__ldcg)
WARPNET_PLAIN_LOAD(__ldcs)
WARPNET_PLAIN_LOAD(__ldlu)
WARPNET_PLAIN_LOAD(__ldcv)
WARPNET_PLAIN_STORE(__stwb)
WARPNET_PLAIN_STORE(__stcg)
WARPNET_PLAIN_STORE(__stcs)
WARPNET_PLAIN_STORE(__stwt)
#undef WARPNET_PLAIN_LOAD
#undef WARPNET_PLAIN_STORE
