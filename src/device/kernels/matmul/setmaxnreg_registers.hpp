// The persistent TMA versions (16, 18, 19) move registers between warpgroups
// with setmaxnreg, which only shares out what the block was launched with:
// built with fewer than wgmma_v16::LAUNCH_REGISTERS a thread, a consumer's
// setmaxnreg.inc would wait for ever. Refused by name instead. Included by
// their registrations after kernels/matmul/16_wgmma_persistent.cu.
#pragma once
#include "core/error.hpp"

namespace warpnet::device::gemm {
namespace {

// `kernel`'s registers are asked of the driver once (per kernel: a static in
// each instantiation); the emulator has none to count and passes.
template <auto kernel>
void require_launch_registers(const char* id) {
  static const int registers = wgmma_v16::launch_registers(kernel);
  WN_CHECK(registers == 0 || registers >= wgmma_v16::LAUNCH_REGISTERS, id, ": built with ", registers,
           " registers a thread, under the ", wgmma_v16::LAUNCH_REGISTERS, " its setmaxnreg split (",
           wgmma_v16::PRODUCER_REGISTERS, " producer, ", wgmma_v16::CONSUMER_REGISTERS,
           " consumers) takes from: launched, it would hang");
}

}  // namespace
}  // namespace warpnet::device::gemm
