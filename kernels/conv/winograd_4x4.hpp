// Winograd F(4x4, 3x3) (conv v12, dgrad v8; the method is in
// kernels/conv/10_winograd.cu's header, the matrices and their cost in
// 12_winograd_4x4.cu's): the input transform Bᵀ d B of a 6x6 window, the
// output transform Aᵀ m A with its store of a 4x4 block of y, the filter
// transform U = G f Gᵀ; the three as kernels, and the whole convolution
// (those and the 36 GEMMs of winograd_gemms.hpp) launched on a workspace,
// over the whole batch or in chunks of it whose workspace fits in L2.
// Each one-dimensional transform is written with the sums it shares, in
// the order whose roundings src/device/kernels/conv/winograd_bound.hpp
// counts (at most 2 on any term of Bᵀ's rows, 4 of G's, 3 of Aᵀ's); a
// compiler that fuses a product and an add into an FMA only removes
// roundings.
#pragma once
#include <cstddef>

#include "kernels/common/cuda_compat.hpp"
#include "kernels/common/float4_rows.hpp"  // store_float4, store_float2
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/winograd.hpp"        // tiles, windows, kTransformBlock
#include "kernels/conv/winograd_gemms.hpp"  // the GEMMs

namespace winograd::f4x4 {

constexpr int kTile = 4;    // a tile of y: 4x4
constexpr int kWindow = 6;  // the window of x it needs: 6x6
constexpr int kXi = 36;     // positions of a transformed 6x6 tile

// F(4x4)'s tiles: ⌈P/4⌉ x ⌈Q/4⌉ per image.
__host__ __device__ inline winograd::Tiles tiles_of(const ConvShape& g) {
  return winograd::tiles_of(g, kTile);
}

// Images [n0, n0 + count) of the batch g describes, as a convolution of their own.
inline ConvShape images(const ConvShape& g, int count) {
  ConvShape part = g;
  part.N = count;
  return part;
}

// V and M, written by one launch and read by the next, need not make the
// trip to DRAM: a chunk of the batch whose V and M fit in L2 keeps them
// there (and its workspace is that much smaller). 24 MiB: 40% of an H200's
// 60 MiB L2, leaving room for U and the chunk's x and y.
constexpr double kChunkBytes = 24.0 * 1024 * 1024;

// Images per chunk: the whole batch, or, `chunked`, as many as keep a
// chunk's V and M within kChunkBytes (at least one).
inline int chunk_images(const ConvShape& g, bool chunked) {
  if (!chunked) return g.N;
  const double per_image = 4.0 * kXi * (double(g.C) + g.K) * tiles_of(images(g, 1)).count;
  const double fit = kChunkBytes / per_image;
  return fit >= g.N ? g.N : fit < 1 ? 1 : int(fit);
}

// Workspace floats for chunks of `chunk` images: U (36, K, C), then V (36,
// C, pitch) and M (36, K, pitch) of a chunk, one after another.
inline size_t workspace_floats(const ConvShape& g, int chunk) {
  const size_t T = size_t(tiles_of(images(g, chunk < g.N ? chunk : g.N)).pitch);
  return size_t(kXi) * (size_t(g.K) * g.C + size_t(g.C) * T + size_t(g.K) * T);
}

// Whether F(4x4)'s GEMMs multiply less than F(2x2)'s at these planes: 36
// products per 4x4 tile against 16 per 2x2 tile, both counting the tiles cut
// at the planes' edges whole (the tables of conv v12 and dgrad v8).
inline bool fewer_products_than_2x2(const ConvShape& g) {
  return 36LL * tiles_of(g).count < 16LL * winograd::tiles_of(g).count;
}

// The F(4x4) candidates of conv v12 and dgrad v8: each GEMM tile
// (winograd_gemms.hpp) over the whole batch, then each in L2-sized chunks.
constexpr int kCandidates = 2 * kGemmTiles;
inline int gemm_tile(int candidate) { return candidate % kGemmTiles; }
inline bool chunked(int candidate) { return candidate >= kGemmTiles; }

// A tuner's name for F(4x4) candidate i.
inline const char* candidate_name(int i) {
  constexpr const char* kNames[kCandidates] = {
      "winograd F(4x4,3x3), GEMM 128x128", "winograd F(4x4,3x3), GEMM 64x128",
      "winograd F(4x4,3x3), GEMM 128x128, L2-sized chunks of the batch",
      "winograd F(4x4,3x3), GEMM 64x128, L2-sized chunks of the batch"};
  return kNames[i];
}

// Whether F(4x4) candidate i differs from the whole-batch one at these
// sizes (where Winograd applies): a chunked candidate needs two chunks.
inline bool candidate_differs(int i, const ConvShape& g) { return !chunked(i) || chunk_images(g, true) < g.N; }

// Bᵀ d for one column d (6) of a window, or (Bᵀ d) B for one row of Bᵀ d:
//   Bᵀ = [4 0 -5 0 1 0; 0 -4 -4 1 1 0; 0 4 -4 -1 1 0; 0 -2 -1 2 1 0; 0 2 -1 -2 1 0; 0 4 0 -5 0 1].
__device__ inline void apply_bt(const float (&d)[6], float (&t)[6]) {
  const float d13 = d[3] - d[1], d24 = d[4] - d[2];
  t[0] = (4.0f * d[0] + d[4]) - 5.0f * d[2];
  t[1] = (d[3] + d[4]) - 4.0f * (d[1] + d[2]);
  t[2] = (d[4] - d[3]) + 4.0f * (d[1] - d[2]);
  t[3] = d24 + 2.0f * d13;
  t[4] = d24 - 2.0f * d13;
  t[5] = (4.0f * d[1] + d[5]) - 5.0f * d[3];
}

// v[6·i + j] = (Bᵀ d B)[i][j].
__device__ inline void input_transform(const float (&d)[6][6], float (&v)[kXi]) {
  float Bd[6][6];  // Bᵀ d, column by column
  for (int s = 0; s < 6; ++s) {
    const float column[6] = {d[0][s], d[1][s], d[2][s], d[3][s], d[4][s], d[5][s]};
    float t[6];
    apply_bt(column, t);
    for (int r = 0; r < 6; ++r) Bd[r][s] = t[r];
  }
  for (int r = 0; r < 6; ++r) {  // (Bᵀ d) B, row r
    float t[6];
    apply_bt(Bd[r], t);
    for (int s = 0; s < 6; ++s) v[6 * r + s] = t[s];
  }
}

// Aᵀ m for one column m (6), or (Aᵀ m) A for one row of Aᵀ m:
//   Aᵀ = [1 1 1 1 1 0; 0 1 -1 2 -2 0; 0 1 1 4 4 0; 0 1 -1 8 -8 1].
__device__ inline void apply_at(const float (&m)[6], float (&o)[4]) {
  const float sum12 = m[1] + m[2], sum34 = m[3] + m[4], diff12 = m[1] - m[2], diff34 = m[3] - m[4];
  o[0] = (m[0] + sum12) + sum34;
  o[1] = diff12 + 2.0f * diff34;
  o[2] = sum12 + 4.0f * sum34;
  o[3] = (diff12 + 8.0f * diff34) + m[5];
}

// How a row of a 4x4 block of y may be stored (output_stores).
enum class RowStores { quads, pairs, floats };

// Quads where Q is a multiple of 4 and y 16-byte aligned (every row of
// every block lies in y, aligned); pairs where Q is even and y 8-byte
// aligned (the block's last pair may be past Q, never half of a pair);
// else one float at a time.
__host__ __device__ inline RowStores output_stores(const ConvShape& g, const float* y) {
  const size_t at = reinterpret_cast<size_t>(y);
  if (g.Q % 4 == 0 && at % 16 == 0) return RowStores::quads;
  return g.Q % 2 == 0 && at % 8 == 0 ? RowStores::pairs : RowStores::floats;
}

// y's 4x4 block of tile (n, ti, tj), channel k: (Aᵀ m A) from m[6·i + j];
// the parts past P or Q are not stored; each row as `stores` says.
__device__ inline void store_output_tile(const ConvShape& g, float* y, int n, int k, int ti, int tj,
                                         const float (&m)[kXi], RowStores stores) {
  float Am[4][6];  // Aᵀ m, column by column
  for (int s = 0; s < 6; ++s) {
    const float column[6] = {m[s], m[6 + s], m[12 + s], m[18 + s], m[24 + s], m[30 + s]};
    float o[4];
    apply_at(column, o);
    for (int a = 0; a < 4; ++a) Am[a][s] = o[a];
  }
  float* out = y + (size_t(n) * g.K + k) * g.P * g.Q + 4 * tj;
  for (int a = 0; a < 4; ++a) {
    const int p = 4 * ti + a;
    if (p >= g.P) break;
    float row[4];  // (Aᵀ m) A, row a
    apply_at(Am[a], row);
    float* at = out + size_t(p) * g.Q;
    if (stores == RowStores::quads) {
      ::warpnet::store_float4(at, make_float4(row[0], row[1], row[2], row[3]));
    } else if (stores == RowStores::pairs) {
      for (int b = 0; b < 4 && 4 * tj + b < g.Q; b += 2) ::warpnet::store_float2(at + b, row[b], row[b + 1]);
    } else {
      for (int b = 0; b < 4 && 4 * tj + b < g.Q; ++b) at[b] = row[b];
    }
  }
}

// G f for one column f (3) of a filter, or (G f) Gᵀ for one row of G f:
//   G = [¼ 0 0; -⅙ -⅙ -⅙; -⅙ ⅙ -⅙; 1/24 1/12 ⅙; 1/24 -1/12 ⅙; 0 0 1].
// ⅙ is not a float: the constant rounds once, its product once more.
__host__ __device__ inline void apply_g(const float (&f)[3], float (&u)[6]) {
  constexpr float kSixth = 1.0f / 6.0f;
  const float outer = f[0] + f[2], quarter_outer = 0.25f * f[0] + f[2], half_middle = 0.5f * f[1];
  u[0] = 0.25f * f[0];
  u[1] = -((outer + f[1]) * kSixth);
  u[2] = -((outer - f[1]) * kSixth);
  u[3] = (quarter_outer + half_middle) * kSixth;
  u[4] = (quarter_outer - half_middle) * kSixth;
  u[5] = f[2];
}

}  // namespace winograd::f4x4

// U[ξ][k][c] = (G f Gᵀ)[ξ], ξ = 6·i + j, f = w[k, c]: (3, 3), w: (K, C, 3, 3).
// TURNED (dgrad v8): the filters transposed and turned by 180°, read in
//   place (winograd.hpp's filter_taps).
// Launch: block (BLOCK); grid (⌈K·C / BLOCK⌉): a thread per (k, c), c fastest
//   (its 9 loads are one filter's, its 36 stores coalesced across the warp).
template <int BLOCK, bool TURNED>
__global__ void __launch_bounds__(BLOCK)
    winograd_4x4_filter_transform(ConvShape g, const float* __restrict__ w, float* __restrict__ U) {
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·C + c
  if (i >= g.K * g.C) return;
  const auto at = winograd::filter_taps<TURNED>(g, w, i);
  float Gf[6][3];  // G f, column by column
  for (int s = 0; s < 3; ++s) {
    const float column[3] = {at(0, s), at(1, s), at(2, s)};
    float u[6];
    winograd::f4x4::apply_g(column, u);
    for (int r = 0; r < 6; ++r) Gf[r][s] = u[r];
  }
  const size_t plane = size_t(g.K) * g.C;  // one ξ's (K, C)
  for (int r = 0; r < 6; ++r) {
    float u[6];  // (G f) Gᵀ, row r
    winograd::f4x4::apply_g(Gf[r], u);
    for (int s = 0; s < 6; ++s) U[(6 * r + s) * plane + i] = u[s];
  }
}

// V[ξ][c][t] = (Bᵀ d B)[ξ], d the 6x6 window of x[n, c] whose top left is
// (4·ti − pad, 4·tj − pad), zeros outside x; t = (n·rows + ti)·cols + tj,
// and zeros for the pitch's columns past the last tile.
// Launch: block (BLOCK); grid (⌈C·pitch / BLOCK⌉): a thread per (c, t), t fastest
//   (stores coalesced; neighbouring threads' windows overlap by two columns,
//   so their loads share sectors).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_4x4_input_transform(ConvShape g, const float* __restrict__ x, float* __restrict__ V) {
  using namespace winograd::f4x4;
  const winograd::Tiles tiles = winograd::f4x4::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // c·pitch + t
  if (i >= g.C * tiles.pitch) return;
  const size_t plane_v = size_t(g.C) * tiles.pitch;  // one ξ's (C, pitch)
  const int t = i % tiles.pitch, c = i / tiles.pitch;
  if (t >= tiles.count) {
    for (int xi = 0; xi < kXi; ++xi) V[xi * plane_v + i] = 0.0f;
    return;
  }
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  float d[kWindow][kWindow], v[kXi];
  const int h0 = kTile * ti - g.pad, w0 = kTile * tj - g.pad;
  winograd::load_window(x + (size_t(n) * g.C + c) * g.H * g.W, g.W, h0 * g.W + w0,
                        winograd::window_mask<kWindow>(g, h0, w0), d);
  input_transform(d, v);
  for (int xi = 0; xi < kXi; ++xi) V[xi * plane_v + i] = v[xi];
}

// y[n, k, 4·ti + a, 4·tj + b] = (Aᵀ m A)[a][b], m[ξ] = M[ξ][k][t]; the
// parts of the last tiles past P or Q are not stored.
// Launch: block (BLOCK); grid (⌈K·pitch / BLOCK⌉): a thread per (k, t), t
//   fastest (the 36 loads coalesced; a tile's rows stored as float4s where
//   Q is a multiple of 4, the warp's stores then contiguous along a row of
//   tiles, as float2 pairs where Q is only even).
template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    winograd_4x4_output_transform(ConvShape g, const float* __restrict__ M, float* __restrict__ y) {
  using namespace winograd::f4x4;
  const winograd::Tiles tiles = winograd::f4x4::tiles_of(g);
  const int i = blockIdx.x * BLOCK + threadIdx.x;  // k·pitch + t
  if (i >= g.K * tiles.pitch) return;
  const int t = i % tiles.pitch, k = i / tiles.pitch;
  if (t >= tiles.count) return;  // the pitch's columns past the last tile
  const auto [n, ti, tj] = winograd::tile_at(tiles, t);
  const size_t plane_m = size_t(g.K) * tiles.pitch;  // one ξ's (K, pitch)
  float m[kXi];
  for (int xi = 0; xi < kXi; ++xi) m[xi] = M[xi * plane_m + i];
  store_output_tile(g, y, n, k, ti, tj, m, output_stores(g, y));
}

namespace winograd::f4x4 {

// U (36, K, C) from the filters: the filter transform, on the current stream.
template <bool TURNED>
void launch_filter_transform(const ConvShape& g, const float* w, float* U) {
  ::warpnet::launch_kernel(winograd_4x4_filter_transform<kTransformBlock, TURNED>,
                           dim3(unsigned(::warpnet::ceil_div(1LL * g.K * g.C, kTransformBlock))),
                           dim3(kTransformBlock), 0, g, w, U);
}

// The whole convolution with GEMM tile `tile` (winograd_gemms.hpp): the
// filter transform, then for each chunk of `chunk` images the input
// transform, the 36 GEMMs (one launch) and the output transform, on
// `workspace` (workspace_floats(g, chunk)), in launch order on the current
// stream; TURNED: the filters as the filter transform's TURNED reads them
// (dgrad v8). The caller checks the launches' errors.
template <bool TURNED = false>
void launch_winograd(int tile, int chunk, const ConvShape& g, const float* x, const float* w, float* y,
                     float* workspace) {
  using ::warpnet::launch_kernel;
  float* U = workspace;
  const dim3 block(kTransformBlock);
  const auto grid_for = [](long long threads) {
    return dim3(unsigned(::warpnet::ceil_div(threads, kTransformBlock)));
  };
  launch_filter_transform<TURNED>(g, w, U);
  for (int n0 = 0; n0 < g.N; n0 += chunk) {
    const ConvShape part = images(g, g.N - n0 < chunk ? g.N - n0 : chunk);
    const int T = tiles_of(part).pitch;  // the GEMMs' columns: the tiles, then the pitch's zero columns
    float* V = U + size_t(kXi) * g.K * g.C;
    float* M = V + size_t(kXi) * g.C * T;
    const float* x_part = x + size_t(n0) * g.C * g.H * g.W;
    float* y_part = y + size_t(n0) * g.K * g.P * g.Q;
    launch_kernel(winograd_4x4_input_transform<kTransformBlock>, grid_for(1LL * g.C * T), block, 0, part, x_part,
                  V);
    launch_gemms(tile, g.K, T, g.C, kXi, U, V, M);  // M[ξ] = U[ξ] @ V[ξ], the 36 in one launch
    launch_kernel(winograd_4x4_output_transform<kTransformBlock>, grid_for(1LL * g.K * T), block, 0, part,
                  static_cast<const float*>(M), y_part);
  }
}

}  // namespace winograd::f4x4
