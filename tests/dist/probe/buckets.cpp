// Run by tests/dist/test_buckets.cpp under `mpirun -np 2`: the gradient
// buckets of data-parallel training (nn/data_parallel.hpp) with parameters
// that only some ranks' backward reaches. Three parameters:
//   "both"   reached on both ranks: Σ_r g_r;
//   "first"  reached on rank 0 alone: g_0 (rank 1 adds zeros);
//   "none"   reached on no rank: left without a gradient, as one process
//            leaves it, so the optimizer skips it.
// Small bucket bytes put the parameters in separate buckets too, with and
// without overlap. Prints "ok" and exits 0, or names the first difference
// and exits 1.
#include <cmath>
#include <cstdio>
#include <vector>

#include "dist/communicator.hpp"
#include "nn/data_parallel.hpp"

using namespace warpnet;

namespace {

// This rank's gradient element i of a parameter: different on each rank,
// and sums of two of them are exact in f32.
float local_gradient(int rank, int64_t i) { return float(rank + 1) + 0.25f * float(i); }

bool check(const char* what, bool ok) {
  if (!ok) std::printf("rank %d: %s\n", dist::rank(), what);
  return ok;
}

bool run(int64_t bucket_bytes, bool overlap) {
  const int rank = dist::rank();
  nn::Parameter both{"both.weight", ag::Var(Tensor::zeros({5}), true)};
  nn::Parameter first{"first.weight", ag::Var(Tensor::zeros({3}), true)};
  nn::Parameter none{"none.weight", ag::Var(Tensor::zeros({4}), true)};
  nn::GradientBuckets buckets({&both, &first, &none}, {0, 1, 2}, bucket_bytes, overlap);
  buckets.begin_step();
  auto fill = [rank](nn::Parameter& p) {
    std::vector<float> g(size_t(p.var.value().numel()));
    for (size_t i = 0; i < g.size(); ++i) g[i] = local_gradient(rank, int64_t(i));
    p.var.grad() = Tensor::from({int64_t(g.size())}, g);
  };
  fill(both);
  if (rank == 0) fill(first);
  buckets.layers_done_from(0);
  buckets.finish();

  bool ok = check("'none' got a gradient though no rank reached it", !none.var.grad().defined());
  ok &= check("'first' has no gradient though rank 0 reached it", first.var.grad().defined());
  ok &= check("'both' has no gradient", both.var.grad().defined());
  if (!ok) return false;
  for (int64_t i = 0; i < 5; ++i) {
    const float want = local_gradient(0, i) + local_gradient(1, i);
    ok &= check("'both' is not the sum", both.var.grad().data<float>()[i] == want);
  }
  for (int64_t i = 0; i < 3; ++i) {
    ok &= check("'first' is not rank 0's gradient", first.var.grad().data<float>()[i] == local_gradient(0, i));
  }
  return ok;
}

}  // namespace

int main() {
  try {
    dist::Session session(60);
    if (dist::size() != 2) {
      std::printf("buckets probe: run under mpirun -np 2 (got %d ranks)\n", dist::size());
      return 2;
    }
    bool ok = true;
    for (const int64_t bytes : {int64_t(1) << 20, int64_t(16)})  // one bucket; one per parameter
      for (const bool overlap : {false, true}) ok &= run(bytes, overlap);
    if (dist::rank() == 0 && ok) std::printf("ok\n");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("buckets probe: %s\n", e.what());
    return 1;
  }
}
