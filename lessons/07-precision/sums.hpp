// Lesson 07, part 7: where a long sum is kept (sums.cpp).
#pragma once

namespace warpnet::lesson07 {

// Runs kernels/examples/half_sums.cu on the emulator: one dot product summed
// in fp32, fp16 pairs and bf16 pairs, by one thread and by one warp, each
// against the exact sum; checks the chapter's claims about them (failures
// counted in lesson::failures()). `markdown`: the table alone, as the
// README holds it.
void where_sums_are_kept(bool markdown);

}  // namespace warpnet::lesson07
