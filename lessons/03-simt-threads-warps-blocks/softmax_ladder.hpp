// Lesson 03, part 8: the softmax ladder (softmax_ladder.cpp).
#pragma once

namespace warpnet::lesson03 {

// Traces every registered softmax version on the emulator, prints what its
// warps asked of memory, checks the chapter's claims about it (failures
// counted in lesson::failures()), and prints the newest GPU record's figures
// for the same versions. `markdown`: only the two tables, as the README
// holds them.
void softmax_ladder(bool markdown);

}  // namespace warpnet::lesson03
