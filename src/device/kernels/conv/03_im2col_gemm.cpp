#include "device/kernels/conv/conv_registration.hpp"

namespace {
#include "kernels/conv/03_im2col_gemm.cu"
}  // namespace

namespace warpnet::device::conv {
namespace {

// Matmul v9's registered configuration: 128x128 C tiles of 8 warps.
constexpr int BM = 128, BN = 128;
constexpr int IM2COL_BLOCK = 256;

const Registration im2col_gemm{Kernel{
    .op = "conv2d",
    .version = 3,
    .name = "im2col_gemm",
    .precision = "fp32",
    .shape_text = "per image: im2col block (256), grid (ceil(C*R*S*P*Q/256)) into a C*R*S x P*Q workspace, then "
                  "matmul v9 block (256), grid (ceil(P*Q/128), ceil(K/128)): y_n = W @ col_n",
    // The GEMM's launch; im2col's is derived from the sizes in .launch.
    .shape = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      return Launch{dim3(ceil_div(g.P * g.Q, BN), ceil_div(g.K, BM)), dim3(256), 0};
    },
    .flops = flops,
    // im2col reads x once per tap (an upper bound: padding taps are not read)
    // and writes col_n; the GEMM reads W once per column of C tiles and col_n
    // once per row of them, and writes y (matmul's tiled_bytes), per image.
    .bytes = [](const Sizes& s) {
      const ConvShape g = shape_of(s);
      const double col = double(g.crs()) * g.P * g.Q;
      const double gemm_bytes = double(g.K) * g.crs() * ceil_div(g.P * g.Q, BN) + col * ceil_div(g.K, BM) +
                                double(g.K) * g.P * g.Q;
      return 4.0 * g.N * (2.0 * col + gemm_bytes);
    },
    .launch = [](const Sizes& s, const Launch& l, Buffers b) {
      const ConvShape g = shape_of(s);
      const int PQ = g.P * g.Q;
      Workspace col(size_t(g.crs()) * PQ * sizeof(float));  // col_n: (C·R·S, P·Q), reused by every image
      for (int n = 0; n < g.N; ++n) {
        // Launches on one stream run in order: image n+1's im2col waits for
        // image n's GEMM to be done with the workspace.
        launch_kernel(conv2d_im2col<IM2COL_BLOCK>, dim3(ceil_div(g.crs() * PQ, IM2COL_BLOCK)), dim3(IM2COL_BLOCK),
                      0, g, n, x_of(b), col.floats());
        check_launch();
        launch_kernel(sgemm_warptiling<BM, BN, 16, 64, 32, 2, 2, 4, 4, false, false>, l.grid, l.block,
                      l.dynamic_shared, g.K, PQ, g.crs(), w_of(b), col.floats(), y_of(b) + size_t(n) * g.K * PQ);
        check_launch();
      }
    },
    .copy = kThisCopy,
}};

}  // namespace
}  // namespace warpnet::device::conv
