// Lesson 05, part 3: every convolution kernel of the registry traced on the
// emulator at one layer, and the GPU figures bench/results holds for them.
#pragma once
#include <string>

#include "device/registry.hpp"

namespace warpnet::lesson05 {

// The chapter's claims, checked as the program goes: a failed one is printed
// at once and counted; main exits non-zero when any failed.
struct Claims {
  int failed = 0;
  void expect(bool ok, const std::string& what);
};

// Traces every version of every conv op (conv2d, conv2d_nhwc, conv2d_dgrad,
// conv2d_wgrad, and any later one whose name starts with "conv2d") at
// `sizes`, prints one table per op — as the README holds it when `markdown`
// — and checks the claims the chapter makes about the figures.
void trace_ladder(const device::Sizes& sizes, bool markdown, Claims& claims);

// Every conv table of every GPU record in bench/results/ (the source tree's),
// labelled with the GPU and the date; a line saying there is none otherwise.
void print_gpu_records();

}  // namespace warpnet::lesson05
