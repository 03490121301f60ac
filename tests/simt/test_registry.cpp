// Every kernel in the registry, through the emulator, against its op's CPU
// reference at the op's test sizes. A new kernel registers itself and is
// checked here without any edit to this file.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "device/registry.hpp"
#include "device/run.hpp"
#include "simt/launch.hpp"
#include "simt/minifloat.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;

namespace {
constexpr uint64_t kSeed = 2026;

// The ids whose traced copy the checker refused: their plain copy is not
// run, since the bad access it reported (a store past an array, say) would
// in the plain copy touch memory that is not the kernel's, and could end the
// whole test binary with SIGSEGV, naming no kernel.
std::set<std::string>& refused_by_checker() {
  static std::set<std::string> ids;
  return ids;
}

// Runs every emulatable kernel of `copy` at its op's test sizes against the
// CPU reference. The traced copy also runs the emulator's checker: an
// out-of-bounds access, a shared-memory race or a read of uninitialized shared
// memory fails the launch (run_emulated throws, naming kernel and sizes). A
// kernel that fails is reported and the others are still checked.
void check_every_kernel(device::Copy copy) {
  const auto all = device::kernels(copy);
  REQUIRE(!all.empty());
  for (const device::Kernel* kernel : all) {
    if (!kernel->emulator) continue;
    if (copy == device::Copy::emulator && refused_by_checker().contains(kernel->id())) {
      FAIL_CHECK(kernel->id(), ": not run plain, since its traced copy failed above");
      continue;
    }
    const device::Op& op = device::op(kernel->op);
    for (const device::Sizes& sizes : op.test_sizes) {
      const std::string what = cat(kernel->id(), " at ", device::describe_sizes(op, sizes), ", seed ", kSeed);
      INFO(what);
      Rng rng(kSeed);
      const auto inputs = device::make_inputs(*kernel, sizes, rng);
      std::vector<Tensor> got;
      try {
        got = device::run_emulated(*kernel, sizes, inputs);
      } catch (const std::exception& e) {
        // One string: doctest prints a char* (the copy's name, what()) as a pointer.
        FAIL_CHECK(cat(what, " (", device::to_string(copy), "): ", e.what()));
        if (copy == device::Copy::traced) refused_by_checker().insert(kernel->id());
        continue;  // the sizes it fails at tell where to look (odd ones: an edge unguarded)
      }
      const device::Comparison c = device::compare(*kernel, sizes, inputs, got);
      if (c.mismatches) std::printf("%s: %lld of %lld wrong\n%s", what.c_str(), (long long)c.mismatches,
                                    (long long)c.checked, c.first.c_str());
      CHECK(c.mismatches == 0);
      CHECK(c.checked == device::total_elements(op.output_shapes(sizes)));
    }
  }
}

}  // namespace

// The traced copy first (doctest runs a file's test cases in the order they
// are written): the checker names the line of a bad access, which the plain
// copy would at best turn into a crash. Its dependent launches
// (warpnet::launch_dependent_kernel) are made programmatic, as in a graph
// captured with StepGraph::Launches::programmatic, so the checker holds each
// such kernel to what that launch needs: no global access before
// wait_for_prior_grids().
TEST_CASE("registry: every kernel's traced copy runs clean under the checker and matches too") {
  struct Programmatic {
    Programmatic() { simt::programmatic_launch_slot() = true; }
    ~Programmatic() { simt::programmatic_launch_slot() = false; }
  } programmatic;
  check_every_kernel(device::Copy::traced);
}

TEST_CASE("registry: every emulatable kernel matches its CPU reference at awkward sizes") {
  check_every_kernel(device::Copy::emulator);
}

TEST_CASE("registry: the plain and traced copies register the same kernels") {
  std::vector<std::string> plain, traced;
  for (const device::Kernel* k : device::kernels(device::Copy::emulator)) plain.push_back(k->id());
  for (const device::Kernel* k : device::kernels(device::Copy::traced)) traced.push_back(k->id());
  CHECK(plain == traced);
}

TEST_CASE("registry: a registration that repeats an id, or an op's version, is refused naming both files") {
  const device::Kernel& v5 = device::find_kernel("matmul/05");
  const std::string first = "src/device/kernels/matmul/05_2d_blocktiling.cpp";
  const std::string copied = "src/device/kernels/matmul/19_mine.cpp";
  // The copy-paste slip: a neighbour's registration copied, its fields unchanged.
  CHECK(device::registration_clash(v5, first, v5, copied) ==
        "matmul/05_2d_blocktiling is registered twice, by " + first + " and by " + copied +
            " (a copied registration: give the new one its own version number and name)");
  device::Kernel renamed = v5;
  renamed.name = "mine";  // the number left as it was: "matmul/05" would name two kernels
  CHECK(device::registration_clash(v5, first, renamed, copied) ==
        "matmul version 5 is registered twice: matmul/05_2d_blocktiling by " + first + " and matmul/05_mine by " +
            copied + " (each version has a number of its own: kernels/matmul/NN_<name>.cu)");
  renamed.version = 19;
  CHECK(device::registration_clash(v5, first, renamed, copied).empty());
  // Each copy (plain, traced, nvcc's) registers every kernel once.
  device::Kernel traced = v5;
  traced.copy = device::Copy::traced;
  CHECK(device::registration_clash(v5, first, traced, first).empty());
  // Version 0, the vendor library, has one registration per precision.
  device::Kernel cublas = v5, cublas_bf16 = v5;
  cublas.version = cublas_bf16.version = 0;
  cublas.name = "cublas";
  cublas_bf16.name = "cublas_bf16";
  CHECK(device::registration_clash(cublas, first, cublas_bf16, copied).empty());
  CHECK(!device::registration_clash(cublas, first, cublas, copied).empty());
  // Registration makes this check against every kernel before it: none clashes.
  CHECK_NOTHROW(device::kernels(device::Copy::traced));
}

TEST_CASE("registry: kernels are found by id, op/version and name") {
  CHECK(device::find_kernel("matmul/01_naive").name == "naive");
  CHECK(device::find_kernel("matmul/3").name == "smem_tiled");
  CHECK(device::find_kernel("matmul/03").name == "smem_tiled");
  CHECK(device::find_kernel("smem_tiled").version == 3);
  CHECK_THROWS_WITH_AS(device::find_kernel("nope"), doctest::Contains("matmul/01_naive"), Error);
  // A name several ops share must be asked for by id.
  // Ambiguous: the kernels it matches, and only those.
  const std::string ambiguous = test::error_of([] { device::find_kernel("naive"); });
  CHECK(ambiguous.find("'naive' matches more than one kernel: matmul/01_naive, ") != std::string::npos);
  CHECK(ambiguous.find("softmax/01_naive") != std::string::npos);
  CHECK(ambiguous.find("relu/") == std::string::npos);
  // An op's name: its versions, not the whole registry.
  CHECK_THROWS_WITH_AS(device::find_kernel("bias_relu"),
                       doctest::Contains("'bias_relu' is an op; name one of its versions (emulator): bias_relu/02_vectorized"),
                       Error);
  const device::Kernel& tiled = device::find_kernel("matmul/3");
  const device::Sizes s{256, 256, 256, 0, 0};
  CHECK(tiled.flops(s) == 2.0 * 256 * 256 * 256);
  // Tiling by 16 divides the A and B traffic of the naive kernel by 16.
  const double operands_v1 = device::find_kernel("matmul/01_naive").bytes(s) - 4.0 * 256 * 256;
  CHECK(operands_v1 / (tiled.bytes(s) - 4.0 * 256 * 256) == doctest::Approx(16.0));
}

TEST_CASE("registry: fp8 mma.sync and wgmma versions name the GPUs they run on") {
  const device::Kernel& fp8 = device::find_kernel("matmul/14");
  CHECK(device::cannot_run_on(fp8, 8, 0) ==
        "matmul/14_fp8 needs sm_89 or newer (" + fp8.precision + "); this GPU is sm_80");
  CHECK(device::cannot_run_on(fp8, 8, 9).empty());
  CHECK(device::cannot_run_on(fp8, 10, 0).empty());
  // Built for sm_90a: Hopper only, neither older nor newer.
  for (const char* hopper : {"matmul/13", "matmul/15", "matmul/16", "matmul/18", "matmul/19", "matmul/20", "matmul/21",
                             "matmul/22", "conv2d_nhwc/13", "conv2d_nhwc/14", "conv2d_nhwc/15", "conv2d_nhwc/16"}) {
    const device::Kernel& k = device::find_kernel(hopper);
    CHECK(device::cannot_run_on(k, 8, 9).find("runs on sm_90 only") != std::string::npos);
    CHECK(device::cannot_run_on(k, 10, 0).find("runs on sm_90 only") != std::string::npos);
    CHECK(device::cannot_run_on(k, 10, 0).ends_with("; this GPU is sm_100"));
    CHECK(device::cannot_run_on(k, 9, 0).empty());
  }
  CHECK(device::cannot_run_on(device::find_kernel("matmul/12"), 8, 0).empty());  // bf16 mma.sync: Ampere
}

TEST_CASE("registry: sizes an op cannot take are refused, naming the size, before anything launches") {
  const auto refused = [](const char* op, device::Sizes sizes, const char* says) {
    CHECK_THROWS_WITH_AS(device::complete_sizes(device::op(op), sizes), doctest::Contains(says), Error);
  };
  refused("conv2d", {1, 1, 5, 5, 1, 3, 3, 0}, "conv2d: stride = 0 at N=1 C=1 H=5 W=5 K=1 R=3 S=3 stride=0");
  refused("conv2d_wgrad", {1, 0, 5, 5, 1, 3, 3}, "conv2d_wgrad: C = 0");
  refused("conv2d_dgrad", {1, 1, 2, 2, 1, 3, 3, 1, 0}, "conv2d_dgrad: the output would be empty");
  refused("conv2d_nhwc", {1, 1, 5, 5, 1, 3, 3, 1, 1, 0}, "dilation = 0");
  refused("conv2d", {65536, 64, 256, 256, 64}, "conv2d: the input of (65536,64,256,256) at N=65536");
  // conv v3's im2col matrix of one image, 2304 x 2^20, though each tensor fits.
  refused("conv2d", {1, 256, 1024, 1024, 1, 3, 3, 1, 1, 1}, "the im2col matrix of one image of (2304,1048576)");
  // Each extent an int, the product not: C of 46341 x 46341 has 2^31 + 10^4 elements.
  refused("matmul", {46341, 46341, 1}, "matmul: C of (46341,46341)");
  // Extents whose product passes int64 are refused, not wrapped round to a small count.
  refused("conv2d", {2147483647, 2147483647, 2147483647, 2147483647, 1, 1, 1}, "more than 2^63 elements");
  refused("matmul", {0, 4, 4}, "matmul: M = 0");
  refused("matmul", {4, 4, 4, 2}, "matmul: trans_a = 2");
  refused("max_rows", {3, 0}, "max_rows: C = 0");
  refused("softmax_cross_entropy", {0, 10}, "softmax_cross_entropy: N = 0");
  refused("bias_add_backward", {2, 3, 0}, "bias_add_backward: S = 0");
  // An empty elementwise op, optimizer or gather ran and "measured" nothing.
  refused("relu", {0}, "relu: n = 0");
  refused("adam", {0}, "adam: n = 0");
  refused("gather_rows", {4, 0, 3}, "gather_rows: width = 0");
  refused("dropout", {0, 500000}, "dropout: n = 0");
  // p = 1 drops everything, and the kept ones' scale 1 / (1 - p) is infinite.
  refused("dropout", {16, 1000000}, "dropout: p_millionths = 1000000 at n=16 p_millionths=1000000: p must be below 1");
  // Past int: it was cut to 32 bits (a stride of 2^32 + 1 ran as 1).
  refused("conv2d", {1, 1, 8, 8, 1, 3, 3, 4294967297}, "conv2d: stride = 4294967297 at N=1");
  refused("relu", {int64_t(1) << 31}, "relu: n = 2147483648 at n=2147483648: at most 2^31 - 1");
  // Extents each within int whose product is not: a softmax's rows index its tensor in int.
  refused("softmax", {65536, 65536}, "softmax: the tensor of (65536,65536) at N=65536 C=65536");
  // Sizes it can take pass unchanged, the left-out ones from the defaults.
  CHECK(device::complete_sizes(device::op("conv2d"), {1, 1, 3, 3, 1, 3, 3, 1, 0}) ==
        device::Sizes{1, 1, 3, 3, 1, 3, 3, 1, 0, 1});
}

TEST_CASE("registry: every launch meets the size limits, not only sizes a user types") {
  // The layers' ops launch through device::launch without complete_sizes;
  // it refuses before a kernel takes a size cut to 32 bits. Copies of the
  // kernels whose launch fails the test stand in, so nothing runs on the
  // null buffers should the check be missing.
  const auto guarded = [](const char* id) {
    device::Kernel k = device::find_kernel(id);
    k.launch = [](const device::Sizes&, const device::Launch&, device::Buffers) {
      FAIL("launched with sizes the kernels cannot take");
    };
    return k;
  };
  const std::vector<void*> none(3, nullptr);
  CHECK_THROWS_WITH_AS(device::launch(guarded("relu/01"), {int64_t(1) << 31}, none),
                       doctest::Contains("relu: n = 2147483648 at n=2147483648: at most 2^31 - 1"), Error);
  CHECK_THROWS_WITH_AS(device::launch(guarded("matmul/01"), {46341, 46341, 1, 0, 0}, none),
                       doctest::Contains("matmul: C of (46341,46341)"), Error);
}

TEST_CASE("registry: every kernel, at its op's first test size with one size 0, is refused or runs and matches") {
  // No crash (a division by a zero stride), no launch of an empty grid, no
  // wrong answer: each such size either stops at complete_sizes with an
  // error naming the op, or the kernel handles it.
  for (const device::Kernel* kernel : device::kernels(device::Copy::emulator)) {
    if (!kernel->emulator) continue;
    const device::Op& op = device::op(kernel->op);
    if (refused_by_checker().contains(kernel->id())) continue;  // failed above; plain, it could crash
    const device::Sizes& base = op.test_sizes.at(0);
    for (size_t i = 0; i < base.size(); ++i) {
      if (base[i] == 0) continue;
      device::Sizes sizes = base;
      sizes[i] = 0;
      INFO(kernel->id(), " at ", device::describe_sizes(op, sizes));
      try {
        sizes = device::complete_sizes(op, sizes);
      } catch (const Error& e) {
        CHECK(std::string(e.what()).find(op.name + ": ") != std::string::npos);
        continue;
      }
      Rng rng(kSeed);
      const auto inputs = device::make_inputs(*kernel, sizes, rng);
      std::vector<Tensor> got;
      try {
        got = device::run_emulated(*kernel, sizes, inputs);
      } catch (const std::exception& e) {
        FAIL_CHECK(cat(kernel->id(), " at ", device::describe_sizes(op, sizes), ": ", e.what()));
        continue;  // and check the other kernels
      }
      CHECK(device::compare(*kernel, sizes, inputs, got).mismatches == 0);
    }
  }
}

TEST_CASE("registry: a failing launch names the kernel, the sizes and the CUDA error") {
  // 2^21 rows need 131072 blocks along grid y, past CUDA's 65535.
  const device::Kernel& naive = device::find_kernel("coalesced");
  const device::Sizes sizes{int64_t(1) << 21, 1, 1, 0, 0};
  Rng rng(kSeed);
  const auto inputs = device::op("matmul").make_inputs(sizes, rng);
  CHECK_THROWS_WITH_AS(device::run_emulated(naive, sizes, inputs),
                       doctest::Contains("matmul/02_coalesced at M=2097152 N=1 K=1 trans_a=0 trans_b=0: cudaErrorInvalidConfiguration"), Error);
}

namespace {
// `x` rounded to `bits` significand bits, to nearest (ties to even).
double round_to_bits(double x, int bits) {
  int exponent = 0;
  const double fraction = std::frexp(x, &exponent);  // x = fraction · 2^exponent, 0.5 <= |fraction| < 1
  return std::ldexp(std::nearbyint(std::ldexp(fraction, bits)), exponent - bits);
}
}  // namespace

TEST_CASE("registry: the bench's norm bound for 14-bit sums holds them at a bench's K and fails an all-zero result") {
  const device::Op& op = device::op("matmul");
  device::Kernel fp8 = device::find_kernel("matmul/01_naive");
  fp8.accumulator_bits = 14;
  fp8.copy = device::Copy::cuda;  // the copy whose sums keep 14 bits (the emulator adds in fp32)
  for (const int64_t k : {256, 4096, 8192}) {
    CAPTURE(k);
    const device::Sizes sizes{4, 4, k, 0, 0};
    Rng rng(kSeed);
    const auto inputs = op.make_inputs(sizes, rng);
    const Tensor want = op.reference(sizes, inputs).at(0);
    // Each product added to a sum that keeps 14 bits, rounding to nearest.
    const Tensor a = inputs[0].to(DType::f64), b = inputs[1].to(DType::f64);
    double diff2 = 0, want2 = 0;
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        double sum = 0;
        for (int64_t t = 0; t < k; ++t) sum = round_to_bits(sum + a.item(i * k + t) * b.item(t * 4 + j), 14);
        diff2 += (sum - want.item(i * 4 + j)) * (sum - want.item(i * 4 + j));
        want2 += want.item(i * 4 + j) * want.item(i * 4 + j);
      }
    const double bound = device::relative_bound_of(fp8, sizes);
    CHECK(std::sqrt(diff2 / want2) <= bound / 4);  // the bound's margin: four times the typical growth
    // Against a vendor with the same bound, an all-zero result's relative error is 1.
    CHECK(2 * bound < 0.1);
    // The worst case, which it replaces, is past the all-zero result's error at the bench's K.
    if (k >= 4096) CHECK(device::relative_bound(op, sizes) * fp8.accumulation_widening() >= 0.5);
  }
  // Sums in fp32 keep the worst case.
  const device::Sizes big{4096, 4096, 4096, 0, 0};
  CHECK(device::relative_bound_of(device::find_kernel("matmul/01_naive"), big) == device::relative_bound(op, big));
}

TEST_CASE("registry: a GPU kernel whose sums keep fewer bits is checked against a bound widened by 2^(24 - bits)") {
  const device::Op& op = device::op("matmul");
  const device::Sizes sizes{33, 31, 35, 0, 0};
  Rng rng(kSeed);
  const auto inputs = op.make_inputs(sizes, rng);
  const Tensor want = op.reference(sizes, inputs).at(0), bound = op.tolerance(sizes, inputs).at(0);
  // A result off by `times` the fp32 bound in every element, in the
  // direction away from zero (so the f32 rounding only adds to it).
  auto off_by = [&](double times) {
    Tensor got = Tensor::empty(want.shape());
    float* g = got.data<float>();
    for (int64_t i = 0; i < want.numel(); ++i)
      g[i] = float(want.item(i) + std::copysign(times * bound.item(i), want.item(i)));
    return std::vector<Tensor>{got};
  };
  device::Kernel fp32 = device::find_kernel("matmul/01_naive");
  const int64_t all = want.numel();
  device::Kernel bits14 = fp32;
  bits14.accumulator_bits = 14;  // as cuBLASLt's fp8 on Hopper: 2^10 = 1024 times the bound
  // The emulator adds in fp32 whatever the GPU's hardware keeps (matmul v15, v18): its copy keeps the fp32 bound.
  CHECK(bits14.accumulation_widening() == 1.0);
  CHECK(device::compare(bits14, sizes, inputs, off_by(100)).mismatches == all);
  bits14.copy = device::Copy::cuda;
  CHECK(bits14.accumulation_widening() == 1024.0);
  CHECK(device::compare(fp32, sizes, inputs, off_by(0.5)).mismatches == 0);
  CHECK(device::compare(fp32, sizes, inputs, off_by(100)).mismatches == all);
  CHECK(device::compare(bits14, sizes, inputs, off_by(100)).mismatches == 0);
  CHECK(device::compare(bits14, sizes, inputs, off_by(2000)).mismatches == all);
  device::Kernel nonsense = fp32;
  nonsense.accumulator_bits = 30;
  CHECK_THROWS_WITH_AS(device::compare(nonsense, sizes, inputs, off_by(0)),
                       doctest::Contains("matmul/01_naive: accumulator_bits is 30, outside 2..24"), Error);
}

TEST_CASE("registry: outputs stored in bf16 are decoded and checked with their rounding allowed, and no more") {
  const device::Op& op = device::op("matmul");
  const device::Sizes sizes{33, 31, 35, 0, 0};
  Rng rng(kSeed);
  const auto inputs = op.make_inputs(sizes, rng);
  const Tensor want = op.reference(sizes, inputs).at(0);
  device::Kernel bf16_out = device::find_kernel("matmul/01_naive");
  bf16_out.output_format = &simt::kBfloat16;
  CHECK(bf16_out.output_rounding() == std::ldexp(1.0, -8));
  CHECK(device::output_element_bytes(bf16_out) == 2);
  // The reference as a bf16 kernel leaves it: each element rounded to
  // nearest, little-endian codes; decoded, it passes every element.
  std::vector<uint8_t> codes(size_t(want.numel()) * 2);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const uint32_t code = simt::encode(simt::kBfloat16, float(want.item(i)), false);
    codes[size_t(i) * 2] = uint8_t(code), codes[size_t(i) * 2 + 1] = uint8_t(code >> 8);
  }
  const Tensor rounded = device::decode_output(bf16_out, want.shape(), codes.data());
  int64_t moved = 0;  // elements the rounding changed: the check does allow something
  for (int64_t i = 0; i < want.numel(); ++i) moved += rounded.item(i) != want.item(i);
  CHECK(moved > want.numel() / 2);
  CHECK(device::compare(bf16_out, sizes, inputs, {rounded}).mismatches == 0);
  // The same kernel storing fp32 gets no such allowance, and a bf16 result
  // off by 2^-6 relative (four times the rounding allowed) fails too.
  const device::Kernel fp32_out = device::find_kernel("matmul/01_naive");
  CHECK(device::compare(fp32_out, sizes, inputs, {rounded}).mismatches > 0);
  Tensor unit_off = rounded.clone();
  float* u = unit_off.data<float>();
  for (int64_t i = 0; i < unit_off.numel(); ++i) u[i] *= 1.0f + std::ldexp(1.0f, -6);
  CHECK(device::compare(bf16_out, sizes, inputs, {unit_off}).mismatches > want.numel() / 2);
}

TEST_CASE("registry: a wrong result is named by its index per axis") {
  const device::Op& op = device::op("matmul");
  const device::Sizes sizes{33, 31, 35, 0, 0};
  Rng rng(kSeed);
  const auto inputs = op.make_inputs(sizes, rng);
  std::vector<Tensor> got = op.reference(sizes, inputs);
  got[0].data<double>()[32 * 31 + 30] += 1.0;  // C's last element, (32,30): an edge a tile loop forgot
  const device::Comparison c = device::compare(device::find_kernel("matmul/01_naive"), sizes, inputs, got);
  CHECK(c.mismatches == 1);
  CHECK(c.first.starts_with("  [32,30] got "));
}

namespace {

// Each row's softmax of z (N,C), and its loss −log P[label] where `labels` is
// given, in double with the row's last term left out of the sum, rounded to
// fp32: what a version that drops that term would write.
std::vector<Tensor> without_last_term(const Tensor& logits, const Tensor* labels) {
  const int64_t N = logits.shape()[0], C = logits.shape()[1];
  Tensor probs = Tensor::empty({N, C}), loss = Tensor::empty({N});
  const float* z = logits.data<float>();
  for (int64_t i = 0; i < N; ++i) {
    const float* row = z + i * C;
    double m = row[0], s = 0;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, double(row[j]));
    for (int64_t j = 0; j + 1 < C; ++j) s += std::exp(double(row[j]) - m);
    for (int64_t j = 0; j < C; ++j) probs.data<float>()[i * C + j] = float(std::exp(double(row[j]) - m) / s);
    if (labels) loss.data<float>()[i] = float(m - double(row[labels->data<int32_t>()[i]]) + std::log(s));
  }
  if (!labels) return {std::move(probs)};
  return {std::move(loss), std::move(probs)};
}

}  // namespace

// The bounds of a long sum grow with its length until one lost term hides
// under them; the long rows' inputs plant terms a lost end cannot hide
// (src/device/ops/softmax.cpp, reduce.cpp). Here a result that leaves out
// each sum's last term, computed in double, must fail the check.
TEST_CASE("registry: a long row's softmax or a long channel's bias gradient that loses its last term fails") {
  int64_t tried = 0;
  for (const char* id : {"softmax/01", "softmax_cross_entropy/01"}) {
    const device::Kernel& kernel = device::find_kernel(id);
    const device::Op& op = device::op(kernel.op);
    for (const device::Sizes& sizes : op.test_sizes) {
      if (sizes[1] < 2048) continue;
      Rng rng(kSeed);
      const auto inputs = op.make_inputs(sizes, rng);
      const auto got = without_last_term(inputs[0], inputs.size() > 1 ? &inputs[1] : nullptr);
      INFO(id, " at ", device::describe_sizes(op, sizes));
      CHECK(device::compare(kernel, sizes, inputs, got).mismatches >= sizes[1]);
      ++tried;
    }
  }
  for (const char* id : {"bias_add_backward/01", "bias_relu_backward/03"}) {
    const device::Kernel& kernel = device::find_kernel(id);
    const device::Op& op = device::op(kernel.op);
    for (const device::Sizes& sizes : op.test_sizes) {
      const int64_t N = sizes[0], C = sizes[1], S = sizes[2];
      if (N * S < 2048) continue;
      Rng rng(kSeed);
      const auto inputs = op.make_inputs(sizes, rng);
      std::vector<Tensor> got = op.reference(sizes, inputs);
      const Tensor& dy = inputs.back();  // bias_relu_backward: (y, dY), the planted ends unmasked
      Tensor& db = got.back();
      for (int64_t c = 0; c < C; ++c) db.data<double>()[c] -= double(dy.data<float>()[((N - 1) * C + c) * S + S - 1]);
      for (Tensor& t : got) t = t.to(DType::f32);
      INFO(id, " at ", device::describe_sizes(op, sizes));
      CHECK(device::compare(kernel, sizes, inputs, got).mismatches == C);
      ++tried;
    }
  }
  CHECK(tried == 9);  // softmax's 3 long rows, softmax_cross_entropy's 2, each bias op's 2 long channels
}

TEST_CASE("registry: a key naming an op's missing version lists that op's versions only") {
  const std::string message = [] {
    try {
      device::find_kernel("matmul/99");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  }();
  INFO(message);
  CHECK(message.find("no kernel matches 'matmul/99'; registered (emulator, matmul): matmul/01_naive") !=
        std::string::npos);
  CHECK(message.find("softmax") == std::string::npos);
}
