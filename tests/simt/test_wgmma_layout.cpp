// matmul v13 (wgmma + TMA, sm_90a) piece by piece, with the kernel's own
// constexpr functions (kernels/matmul/13_wgmma_tma.cu, namespace wgmma_v13).
// The whole kernel runs on the emulator in the registry tests and, over
// several tiles and k-steps in every layout, in the last case here (through
// src/simt/hopper.hpp's model); the others pin down the arithmetic that
// model and kernel must agree on, each where a mistake would be found first:
//   - the 128-byte swizzle and the descriptor's bit fields;
//   - that every (row, k) element each wgmma reads through the kernel's
//     descriptors (start, LBO, SBO, per consumer warpgroup and k16 step) is
//     the element TMA put there, in all four layouts;
//   - the mma-level arithmetic: one consumer's k-step rebuilt from mma.sync
//     m16n8k16 on the emulator (a wgmma m64n128k16 is, per warp, 16 rows x 16
//     n8 tiles of it), reading operands from a swizzled stage image at the
//     descriptor addresses and storing through the epilogue's accumulator map.
// That the hardware reads the canonical layouts as modelled (Operand::read
// here, src/simt/wgmma.cpp there) only a GPU checks: an H200 did, 2026-11-30.
#include <doctest/doctest.h>

#include <set>

#include "kernels/common/all.hpp"  // before the kernel files (see there)
#include "tests/simt/device_buffer.hpp"
#include "tests/simt/matches_reference.hpp"
#include "tests/simt/small_integers.hpp"

// A named namespace, not an anonymous one: the registration includes the same
// kernels, and the emulator adds up the __shared__ variables of every kernel
// instance with the same mangled name when it checks the 48 KB static limit.
namespace wgmma_layout_test {
#include "kernels/matmul/13_wgmma_tma.cu"

using namespace wgmma_v13;
constexpr uint64_t kSeed = 13;


// Every element of a ROWS x BK operand tile: TMA's offset and the offset each
// wgmma reads it at, through the kernel's descriptor starts.
template <class Op, int ROWS, int WG_ROWS>
void check_operand(const char* what) {
  INFO(what);
  std::set<uint32_t> seen;
  for (int mn = 0; mn < ROWS; ++mn)
    for (int k = 0; k < BK; ++k) {
      const uint32_t at = Op::stored(mn, k);
      CHECK(at + 2 <= Op::BYTES);
      CHECK(seen.insert(swizzle128(at)).second);  // no two elements share bytes
    }
  // The kernel's wgmmas: a consumer's rows start at a multiple of WG_ROWS, k at a multiple of 16.
  for (int mn0 = 0; mn0 < ROWS; mn0 += WG_ROWS)
    for (int k0 = 0; k0 < BK; k0 += WGMMA_K) {
      const uint32_t start = Op::start(mn0, k0);
      CHECK(start % 16 == 0);  // the descriptor holds start >> 4
      for (int mn = 0; mn < WG_ROWS; ++mn)
        for (int k = 0; k < WGMMA_K; ++k) {
          INFO("rows from ", mn0, ", k from ", k0, ": element (", mn, ", ", k, ")");
          CHECK(swizzle128(Op::read(start, mn, k)) == swizzle128(Op::stored(mn0 + mn, k0 + k)));
        }
    }
}

// The stage as TMA leaves it: op(A) tile (BM, BK) and op(B) tile (BK, BN) of
// bf16 bit patterns at their swizzled offsets (A first, B at OpA::BYTES).
template <bool TA, bool TB>
std::vector<uint16_t> stage_image(const std::vector<float>& a, const std::vector<float>& b) {
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  std::vector<uint16_t> image(kStageBytes<TA, TB> / 2, 0);
  for (int m = 0; m < BM; ++m)
    for (int k = 0; k < BK; ++k)
      image[swizzle128(OpA::stored(m, k)) / 2] = __nv_bfloat16_raw(__float2bfloat16(a[m * BK + k])).x;
  for (int k = 0; k < BK; ++k)
    for (int n = 0; n < BN; ++n)
      image[(OpA::BYTES + swizzle128(OpB::stored(n, k))) / 2] = __nv_bfloat16_raw(__float2bfloat16(b[k * BN + n])).x;
  return image;
}

// One consumer warpgroup's k-step of 64 as mma.sync: warp w of the 128
// threads computes rows 16w.. of its 64 x 128 slice. Operands come from the
// stage image at Operand::read of the kernel's descriptor starts; results go
// out through acc_row/acc_col, the epilogue's map. out: (64, 128) fp32.
template <bool TA, bool TB>
__global__ void wgmma_as_mma_sync(const uint16_t* image, int m0, float* out) {
  using OpA = OperandA<TA>;
  using OpB = OperandB<TB>;
  __shared__ __align__(16) uint16_t stage[kStageBytes<false, false> / 2];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  for (int i = t; i < int(kStageBytes<TA, TB> / 2); i += 128) stage[i] = image[i];
  __syncthreads();
  auto element = [&](uint32_t offset) { return uint32_t(stage[swizzle128(offset) / 2]); };
  float acc[64] = {};  // acc[4j + c]: fragment c of n8 tile j, as wgmma's D register 4j + c
  for (int kk = 0; kk < BK; kk += WGMMA_K) {
    const uint32_t a_start = OpA::start(m0, kk), b_start = OpA::BYTES + OpB::start(0, kk);
    uint32_t a[4] = {};
    for (int i = 0; i < 8; ++i) {
      const auto e = warpnet::simt::mma_a_element(lane, i);
      a[i / 2] |= element(OpA::read(a_start, 16 * warp + e.row, e.col)) << (16 * (i % 2));
    }
    for (int j = 0; j < 16; ++j) {
      uint32_t b[2] = {};
      for (int i = 0; i < 4; ++i) {
        const auto e = warpnet::simt::mma_b_element(lane, i);
        b[i / 2] |= element(OpB::read(b_start, 8 * j + e.col, e.row)) << (16 * (i % 2));
      }
      float* d = &acc[4 * j];
      float c[4] = {d[0], d[1], d[2], d[3]}, r[4];
      warpnet::ptx::mma_m16n8k16_bf16_f32(r, a, b, c);
      for (int i = 0; i < 4; ++i) d[i] = r[i];
    }
  }
  for (int i = 0; i < 64; ++i) out[acc_row(t, i) * BN + acc_col(t, i)] = acc[i];
}

template <bool TA, bool TB>
void check_k_step() {
  INFO("TA=", TA, " TB=", TB, " seed ", kSeed);
  const auto a = small_integers(BM * BK, kSeed), b = small_integers(BK * BN, kSeed + 1);
  DeviceBuffer<uint16_t> image(stage_image<TA, TB>(a, b));
  for (int m0 = 0; m0 < BM; m0 += WG_M) {
    DeviceBuffer<float> out(WG_M * BN);
    warpnet::simt::launch(wgmma_as_mma_sync<TA, TB>, dim3(1), dim3(128), 0, image.get(), m0, out.get());
    std::vector<float> want(WG_M * BN, 0.0f);
    for (int m = 0; m < WG_M; ++m)
      for (int n = 0; n < BN; ++n)
        for (int k = 0; k < BK; ++k) want[m * BN + n] += a[(m0 + m) * BK + k] * b[k * BN + n];
    INFO("consumer rows from ", m0);
    CHECK(out.download() == want);
  }
}

}  // namespace wgmma_layout_test
using namespace wgmma_layout_test;

TEST_CASE("wgmma v13: the 128-byte swizzle permutes 16-byte chunks within each 1024-byte atom, conflict-free") {
  std::set<uint32_t> seen;
  for (uint32_t offset = 0; offset < 4096; offset += 16) {
    const uint32_t s = swizzle128(offset);
    CHECK(s / 1024 == offset / 1024);  // stays in its atom
    CHECK(s / 128 == offset / 128);    // and in its 128-byte row
    CHECK(seen.insert(s).second);
  }
  // A core matrix: 8 rows read at one logical chunk land on 8 different bank groups.
  for (uint32_t chunk = 0; chunk < 8; ++chunk) {
    std::set<uint32_t> groups;
    for (uint32_t row = 0; row < 8; ++row) groups.insert((swizzle128(row * 128 + chunk * 16) % 128) / 16);
    CHECK(groups.size() == 8);
  }
  CHECK(swizzle128(3 * 128 + 1 * 16 + 5) == 3 * 128 + (1 ^ 3) * 16 + 5);
}

TEST_CASE("wgmma v13: descriptor bit fields (start >> 4, LBO >> 4 at 16, SBO >> 4 at 32, 128B swizzle at 62)") {
  const uint64_t d = descriptor(0x1A400, 8192, 1024);
  CHECK((d & 0x3FFF) == 0x1A40);
  CHECK(((d >> 16) & 0x3FFF) == 8192 / 16);
  CHECK(((d >> 32) & 0x3FFF) == 1024 / 16);
  CHECK(((d >> 49) & 0x7) == 0);  // base offset: stages start at 1024-byte boundaries
  CHECK((d >> 62) == 1);
  const uint64_t fields = 0x3FFFull | 0x3FFFull << 16 | 0x3FFFull << 32 | 0x7ull << 49 | 0x3ull << 62;
  CHECK((d & ~fields) == 0);  // the reserved bits stay clear
}

TEST_CASE("wgmma v13: each wgmma reads through its descriptors exactly the elements TMA stored, all layouts") {
  check_operand<OperandA<false>, BM, WG_M>("A K-major (row-major A)");
  check_operand<OperandA<true>, BM, WG_M>("A MN-major (stored-transposed A)");
  check_operand<OperandB<true>, BN, WG_N>("B K-major (stored-transposed B)");
  check_operand<OperandB<false>, BN, WG_N>("B MN-major (row-major B)");
  // The producer arms each stage's barrier with all its boxes' bytes.
  CHECK(kStageBytes<false, false> == OperandA<false>::BOXES * OperandA<false>::BOX_BYTES +
                                         OperandB<false>::BOXES * OperandB<false>::BOX_BYTES);
  CHECK(OperandA<false>::BOX_INNER * 2 == 128);  // SWIZZLE_128B allows at most 128 inner bytes per box
  CHECK(kSharedBytes<true, true> <= 227 * 1024);  // Hopper's per-block dynamic shared limit
}

TEST_CASE("wgmma v13: the accumulator map covers the 64x128 tile once, as mma.m16n8's C fragments per warp") {
  std::set<int> seen;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < 64; ++i) {
      CHECK(seen.insert(acc_row(t, i) * 128 + acc_col(t, i)).second);
      const auto e = warpnet::simt::mma_c_element(unsigned(t % 32), i % 4);
      CHECK(acc_row(t, i) == 16 * (t / 32) + e.row);
      CHECK(acc_col(t, i) == 8 * (i / 4) + e.col);
    }
  CHECK(seen.size() == 64 * 128);
}

TEST_CASE("wgmma v13: a consumer's k-step, rebuilt from emulated mma.sync at the descriptor addresses, equals a plain loop") {
  check_k_step<false, false>();
  check_k_step<true, false>();
  check_k_step<false, true>();
  check_k_step<true, true>();
}

// The registered kernel whole, in the four layouts, at a size TMA describes
// in each (every contiguous dimension a whole number of 16-byte rows; off
// that, v12 runs instead): 3 x 5 C tiles, the far ones partial, and K = 328,
// six 64-wide k-steps, the last partial, so the ring goes round and the
// producer's coordinates move along K for both operands whichever way each
// is stored. The registry's test sizes describable in the transposed
// layouts (144 x 80 x 48) are one k-step and one column of tiles.
TEST_CASE("wgmma v13: whole GEMMs of several tiles and k-steps through TMA, all four layouts") {
  REQUIRE(describable<true, true>(304, 520, 328, nullptr, nullptr));  // every row whole 16-byte chunks
  REQUIRE(describable<false, false>(304, 520, 328, nullptr, nullptr));
  for (const int trans_a : {0, 1})
    for (const int trans_b : {0, 1})
      warpnet::test::check_matches_reference(warpnet::device::find_kernel("matmul/13"), {304, 520, 328, trans_a, trans_b},
                                             kSeed);
}
