// Which lane holds which element of a tensor-core instruction's fragments:
// the A, B and C/D matrices of wmma m16n16k16, mma.sync m16n8k16 or
// mma.sync m16n8k32 (e4m3), each element filled with its lane's colour
// (layout::lane_colour: hue = groupID, shade = threadID_in_group). The
// element of each (lane, register) comes from the emulator's own layout
// functions (simt/tensor_cores.hpp), the ones its wmma loads and mma.sync
// rendezvous use, so the picture is what the emulator computes with.
#pragma once
#include <string>

#include "device/registry.hpp"
#include "simt/tensor_cores.hpp"

namespace warpnet::viz {

struct FragmentMatrix {
  const char* name;  // "A (m x k)"
  int rows, cols;
  int per_lane;  // distinct elements a lane holds
  simt::RowCol (*element)(unsigned lane, int i);
};

struct FragmentShape {
  const char* id;           // "m16n8k16": the --fragments name
  const char* instruction;  // "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
  FragmentMatrix a, b, c;
};

// The shapes the emulator implements; null for an unknown id.
const FragmentShape* fragment_shape(const std::string& id);
// The fragments of the instruction a registered kernel issues
// (Kernel::tensor_op): wmma's, or mma.sync's (m16n8k32 for e4m3 inputs, else
// m16n8k16); null for a kernel on CUDA cores and for wgmma, whose A and B
// no lane holds.
const FragmentShape* fragment_shape_of(const device::Kernel& kernel);
// Why a kernel has no fragments to draw (fragment_shape_of is null): it
// issues wgmma, or no tensor-core instruction.
std::string no_fragments_reason(const device::Kernel& kernel);

// Draws the three matrices at layout::kFragmentY (fixed: the tests sample
// them) and a key; hovering an element names its lane and register and
// outlines every element of that lane.
void draw_fragments(const FragmentShape& shape);

}  // namespace warpnet::viz
