// nn::Dropout's masks: a function of the layer's seed, the step's number and
// the row, so a data-parallel rank's shard drops what one process drops in
// those rows of the batch, and every rank's rows differ.
#include <doctest/doctest.h>

#include <cstring>

#include "autograd/tape.hpp"
#include "nn/layers.hpp"

using namespace warpnet;

namespace {

Tensor dropped(nn::Dropout& layer, const Tensor& x, nn::Module::Step step) {
  layer.prepare_step(x.device(), step);
  return layer(ag::Var(x)).value().contiguous();
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), size_t(a.nbytes())) == 0;
}

}  // namespace

TEST_CASE("a data-parallel shard of rows r.. draws rows r.. of the whole batch's dropout mask") {
  const Tensor x = Tensor::full({6, 40}, 1.0);
  nn::Dropout one_process("drop", 0.5, 42), rank1("drop", 0.5, 42);
  one_process.set_training(true);
  rank1.set_training(true);
  const Tensor whole = dropped(one_process, x, {5, 0});
  const Tensor shard = dropped(rank1, x.rows(3, 3).contiguous(), {5, 3});
  CHECK(same_bits(shard, whole.rows(3, 3).contiguous()));
  // Two ranks' rows are not one mask repeated (as they were when every rank
  // drew from the start of the step's stream): 120 draws agreeing by chance
  // has probability 2^-120.
  CHECK_FALSE(same_bits(whole.rows(0, 3).contiguous(), whole.rows(3, 3).contiguous()));
}

TEST_CASE("a dropout step's mask depends on its number, not on how many steps came before") {
  const Tensor x = Tensor::full({2, 64}, 1.0);
  nn::Dropout a("drop", 0.3, 7), b("drop", 0.3, 7);
  a.set_training(true);
  b.set_training(true);
  for (int64_t step = 0; step < 4; ++step) dropped(a, x, {step, 0});
  CHECK(same_bits(dropped(a, x, {4, 0}), dropped(b, x, {4, 0})));  // b skipped steps 0..3: a resumed run
  CHECK_FALSE(same_bits(dropped(a, x, {5, 0}), dropped(b, x, {6, 0})));
  CHECK(a.seed_of_step(9) == b.seed_of_step(9));
  CHECK(a.seed_of_step(9) != nn::Dropout("drop", 0.3, 8).seed_of_step(9));
}
