// Every kernels/common header, for the registration files: they include a
// kernel file inside an anonymous namespace, and a common header seen first in
// there would declare its own {anonymous}::warpnet apart from the real one.
// Including them all here, before, makes any kernel file safe to include.
// A new header in kernels/common is added here.
#pragma once
#include "kernels/common/activations.hpp"
#include "kernels/common/counter_hash.hpp"
#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/cluster_pairs.hpp"
#include "kernels/common/float4_rows.hpp"
#include "kernels/common/hopper.hpp"
#include "kernels/common/in_flight.hpp"
#include "kernels/common/mma_store.hpp"
#include "kernels/common/pack_k_major.hpp"
#include "kernels/common/ptx.hpp"
#include "kernels/common/row_reduce.hpp"
#include "kernels/common/stream_k.hpp"
#include "kernels/common/sum_splits.hpp"
#include "kernels/common/tile_order.hpp"
#include "kernels/common/wmma.hpp"
