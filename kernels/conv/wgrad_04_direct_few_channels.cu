// Conv wgrad v4 — direct, for few output channels: a thread per filter tap
// (c, r, s) computing every output channel's weight gradient at it, over
// bands of image rows staged in shared memory. wgrad v3's tiles remain for
// everything else.
//
// Idea: wgrad v3 is a GEMM, dW^T (C·R·S, K) = X (C·R·S, N·P·Q) @ DY (N·P·Q,
//   K), whose columns are the K output channels. At LeNet-5's layers K is 6
//   and 16: each element the GEMM gathers from x (a table read, two
//   compares, a load, a shared store, a barrier's share) feeds K
//   multiply-adds, as in conv v7 and dgrad v3 before their direct kernels
//   (conv v8, dgrad v4). Turned around, with every k of a tap in registers:
//     dw[k,c,r,s] = sum over n, p, q of dy[n,k,p,q] · x[n, c, p·stride − pad + r·dil, q·stride − pad + s·dil].
//   A block walks a run of "bands" — BP output rows of one image — staging
//   per band the x window those rows read, (BP−1)·stride + dil·(R−1) + 1 rows
//   x (Q−1)·stride + dil·(S−1) + 1 columns per channel, zeros in the padding,
//   and the band's dy with the channels innermost, s_dy[pixel][k], k padded
//   to KMAX (1, 2, 4, 8 or 16: the least >= K; few_channels.hpp). Thread t
//   owns tap t % (C·R·S) and, where the taps are fewer than the threads,
//   every G-th pixel of the band (G = 256 / (C·R·S) groups: LeNet-5's conv1
//   has 25 taps, so 10 groups of pixels). Per pixel: one shared load of x,
//   the pixel's KMAX values of dy as float4s that the lanes of a group read
//   at one address (a broadcast), KMAX multiply-adds. No bounds test (the
//   window holds the zeros), no barrier inside a band.
// The sums: after its last band a block adds its groups' partial sums in
//   shared memory, in group order, and writes part[z] (K, C·R·S) for its run
//   z; sum_splits (kernels/common) adds the runs in a fixed order. Splits come
//   from the sizes alone (split_of: about 264 blocks, two per SM of an H200),
//   so a problem is always summed the same way.
// Applies: K <= 16, C·R·S <= 256 (a tap per thread), and one output row's
//   window and dy in 48 KiB of shared memory (applies()); the registration
//   runs wgrad v3's tiles otherwise, and times both kinds on a GPU.
// Changed from wgrad v3: not a GEMM: a tap per thread with all its output
//   channels in registers; the x rows staged once per band instead of a
//   gathered column per step; the pixels summed in groups inside the block.
// Trace (emulator, `warpnet trace conv2d_wgrad/04 --size ...` and /03, LeNet-5's
//   layers at batch 2, beside the tile wgrad v3's table picks):
//   conv1 (2,1,28,28,6,5,5,1,2,1): 16 warps issuing 308 memory instructions
//     each against v3's 80 at 377 (6.1x fewer in all); 3,868 shared loads (v3
//     26,656), 1.08-way; global bytes asked 4.7e4 (v3 1.9e5).
//   conv2 (2,6,14,14,16,5,5,1,0,1): 16 warps at 373 against 48 at 766 (6.2x
//     fewer); 5,150 shared loads (v3 33,600), 1.00-way; 7.0e4 global bytes
//     (v3 1.7e5).
//   Staging dy a warp takes 4 channels of 8 pixels, so its stores fill the 32
//   banks (channel-major it was 4-way); the rows then start off a sector
//   boundary: 6.1 sectors per load at conv2, where 4 would do.
// Staging: each thread issues 8 loads before it stores any
//   (conv_few_channels::stage), where one at a time a block waited a memory
//   latency per staged float, as dgrad v4 did.
// Measured: NVIDIA H200, 2026-12-04 (bench/results/train-nvidia-h200-2026-12-04-cnn.json,
//   `warpnet bench train`, the tuner's times: the mean of back-to-back launches), before the staging above: LeNet-5's
//   conv1 0.0144 / 0.0185 ms at batch 64 / 256 (taken at both), conv2 0.0185 / 0.0224 ms (taken at
//   256; at 64 wgrad v3's 64x32x16 tile, 0.0138 ms).
// Run: build/bin/test_simt -tc="conv wgrad direct*"; build/bin/warpnet trace conv2d_wgrad/04 --size 2,6,14,14,16,5,5,1,0,1
#include "kernels/common/cuda_compat.hpp"
#include "kernels/conv/conv_shape.hpp"
#include "kernels/conv/few_channels.hpp"
#include "kernels/conv/wgrad_03_autotuned.cu"  // the GEMM tiles, for what this kernel does not cover

namespace conv_wgrad_v04 {

using conv_few_channels::kSharedFloats;
constexpr int kThreads = 256;
constexpr int kMaxChannels = 16;  // K beyond this: wgrad v3's tiles
constexpr int kTargetBlocks = 264;  // two per SM of an H200

// n rounded up to the next value that is `bank` modulo 32 (shared memory's banks).
__host__ __device__ constexpr long long to_bank(long long n, long long bank) { return n + ((bank - n) % 32 + 32) % 32; }

// A band of BP output rows: its x window per channel (x_pitch floats, rows
// of `cols`), dy's pitch per pixel (KMAX floats, 4 more where the float4
// reads allow it), where s_dy starts (16-byte aligned), the pixel groups, and
// the shared floats the kernel asks for: the staging, or the groups' sums if
// larger. The window's rows are `cols` >= its width apart, cols = S·dil and
// x_pitch = R·S·dil (mod 32), so tap (c, r, s) reads bank dil·(c·R·S + r·S +
// s) past the pixel's: a warp's consecutive taps, consecutive banks (the
// extra columns are staged, past the image, as zeros no tap reads).
// Worked out in 64 bits: a huge stride, dilation or channel count overflows
// int, and a wrapped size once passed the 48 KiB test as a small one. A
// band whose window alone is past the staging reports floats = INT_MAX, its
// other sizes 0: it is never staged.
struct Band {
  int bp, bands, cols, x_pitch, dy_pitch, dy_offset, groups, floats;
  __host__ __device__ static Band of(const ConvShape& g, int bp) {
    const long long kmax = conv_few_channels::slots(g.K), crs = g.crs() > 0 ? g.crs() : 1;
    const long long rows = (bp - 1) * (long long)g.stride + (long long)g.dil * (g.R - 1) + 1;
    const long long width = (g.Q - 1) * (long long)g.stride + (long long)g.dil * (g.S - 1) + 1;
    const int bands = int((g.P + (long long)bp - 1) / bp), groups = int(kThreads / crs > 0 ? kThreads / crs : 1);
    constexpr int kNever = 2147483647;
    if (rows > kSharedFloats || width > kSharedFloats) return Band{bp, bands, 0, 0, 0, 0, groups, kNever};
    const long long cols = to_bank(width, (long long)g.S * g.dil % 32);
    const long long x_pitch = to_bank(rows * cols, (long long)g.R * g.S * g.dil % 32);
    const long long dy_pitch = kmax >= 4 ? kmax + 4 : kmax, dy_offset = (g.C * x_pitch + 3) / 4 * 4;
    const long long staging = dy_offset + bp * (long long)g.Q * dy_pitch, sums = crs * groups * (kmax + 1);
    const long long floats = staging > sums ? staging : sums;
    if (floats > kSharedFloats) return Band{bp, bands, 0, 0, 0, 0, groups, kNever};
    return Band{bp, bands, int(cols), int(x_pitch), int(dy_pitch), int(dy_offset), groups, int(floats)};
  }
};

// The tallest band (at most P rows) that fits 48 KiB, else one row. It
// starts from the most rows whose window could fit at all, and steps down.
inline Band band_of(const ConvShape& g) {
  const long long span = (long long)g.dil * (g.R - 1) + 1;
  const long long most = span > kSharedFloats ? 1 : (kSharedFloats - span) / g.stride + 1;
  int bp = int(g.P < most ? g.P : most);
  bp = bp > 1 ? bp : 1;
  while (bp > 1 && Band::of(g, bp).floats > kSharedFloats) --bp;
  return Band::of(g, bp);
}

inline bool applies(const ConvShape& g) {
  return g.K <= kMaxChannels && g.crs() <= kThreads && g.P > 0 && g.Q > 0 && band_of(g).floats <= kSharedFloats;
}

inline size_t shared_bytes(const ConvShape& g) { return 4 * size_t(band_of(g).floats); }

// The runs of bands the blocks walk: about kTargetBlocks of them, none empty.
struct Split {
  int splits, run;  // run: bands per block
};
inline Split split_of(const ConvShape& g) {
  const long long units = (long long)g.N * band_of(g).bands;
  const long long want = units < kTargetBlocks ? (units > 0 ? units : 1) : kTargetBlocks;
  const int run = int(::warpnet::ceil_div(units, want));
  return Split{int(::warpnet::ceil_div(units, run)), run > 0 ? run : 1};
}

}  // namespace conv_wgrad_v04

// x: (N,C,H,W), dy: (N,K,P,Q), NCHW row-major (ConvShape); part: (splits, K,
// C·R·S) row-major: block z writes part[z] = the sum over bands [z·run,
// (z+1)·run) (band u: image u / bands, output rows from (u % bands)·BP).
// One split: part is dw.
// Launch: block (kThreads); grid (splits); dynamic shared shared_bytes(g).
// Preconditions: applies(g); KMAX = conv_few_channels::slots(g.K); band = band_of(g).
template <int KMAX>
__global__ void __launch_bounds__(conv_wgrad_v04::kThreads)
    conv2d_wgrad_few_channels(ConvShape g, conv_wgrad_v04::Band band, int run, const float* __restrict__ x,
                              const float* __restrict__ dy, float* __restrict__ part) {
  constexpr int THREADS = conv_wgrad_v04::kThreads;
  const int CRS = g.crs(), RS = g.R * g.S, PQ = g.P * g.Q, G = band.groups;
  float* s_x = warpnet::dynamic_shared<float>();  // s_x[c·x_pitch + i·cols + j] = x[n, c, h0 + i, −pad + j]: (C, rows, cols)
  float* s_dy = s_x + band.dy_offset;              // s_dy[(pp·Q + q)·dy_pitch + k] = dy[n, k, p0 + pp, q]: (BP·Q, KMAX)
  float* s_sum = s_x;  // after the last band: s_sum[(group·CRS + tap)·(KMAX+1) + k], (G·CRS, KMAX+1)

  const int t = threadIdx.x, tap = t % CRS, group = t / CRS;
  const bool computes = group < G;  // threads past G·CRS only stage
  const int c = tap / RS, r = tap % RS / g.S, s = tap % g.S;
  const float* x_tap = s_x + c * band.x_pitch + r * g.dil * band.cols + s * g.dil;  // at output pixel (0, 0)

  float acc[KMAX] = {};
  const int total = g.N * band.bands, u_begin = blockIdx.x * run, u_end = min(total, u_begin + run);
  for (int u = u_begin; u < u_end; ++u) {
    const int n = u / band.bands, p0 = u % band.bands * band.bp, bp = min(band.bp, g.P - p0);
    const int pixels = bp * g.Q;
    // The band's x rows (zeros in the padding) and dy, channels innermost (zeros past K).
    conv_few_channels::stage_windows<THREADS>(s_x, x + size_t(n) * g.C * g.H * g.W, g.C, band.x_pitch,
                                              (bp - 1) * g.stride + g.dil * (g.R - 1) + 1, band.cols,
                                              p0 * g.stride - g.pad, -g.pad, g.H, g.W);
    const float* dy_band = dy + size_t(n) * g.K * PQ + p0 * g.Q;
    // A warp takes KL channels of 32/KL consecutive pixels: KL rows of whole
    // sectors from dy, and stores dy_pitch apart that fill the 32 banks.
    constexpr int KL = KMAX < 4 ? KMAX : 4;
    conv_few_channels::stage<THREADS>(s_dy, KMAX * pixels, [&](int i) {
      const int kl = i % KL, rest = i / KL, j = rest % pixels, k = rest / pixels * KL + kl;
      return conv_few_channels::Staged{j * band.dy_pitch + k, k < g.K ? dy_band[size_t(k) * PQ + j] : 0.0f};
    });
    __syncthreads();  // the band is staged before anyone reads it

    if (computes) {
      // Pixels group, group + G, ... of the band, as (pp, q) counters: no division per pixel.
      int pp = group / g.Q, q = group % g.Q;
      for (int j = group; j < pixels; j += G) {
        const float v = x_tap[pp * g.stride * band.cols + q * g.stride];
        conv_few_channels::multiply_add<KMAX>(acc, v, s_dy + j * band.dy_pitch);
        for (q += G; q >= g.Q; q -= g.Q) ++pp;
      }
    }
    __syncthreads();  // everyone is done with the band before the next one overwrites it
  }

  // The groups' sums for each tap, added in group order; part[z][k][tap],
  // consecutive threads consecutive taps: coalesced.
  if (computes)
#pragma unroll
    for (int k = 0; k < KMAX; ++k) s_sum[(group * CRS + tap) * (KMAX + 1) + k] = acc[k];
  __syncthreads();  // every group's sums are in shared memory
  float* out = part + size_t(blockIdx.x) * g.K * CRS;
  for (int e = t; e < g.K * CRS; e += THREADS) {
    const int k = e / CRS, at = e % CRS;
    float sum = 0.0f;
    for (int grp = 0; grp < G; ++grp) sum += s_sum[(grp * CRS + at) * (KMAX + 1) + k];
    out[e] = sum;
  }
}

namespace conv_wgrad_v04 {

// The direct kernel, then wgrad v3's seven tiles.
constexpr int kDirectTiles = 1;
constexpr int kCandidates = kDirectTiles + conv_wgrad_v03::kCandidates;

inline const char* candidate_name(int i) {
  return i < kDirectTiles ? "direct, a tap per thread" : conv_wgrad_v03::candidate_name(i - kDirectTiles);
}

// Whether candidate i can run this problem (the GEMM tiles run anything).
inline bool candidate_applies(int i, const ConvShape& g) { return i >= kDirectTiles || applies(g); }

// The tuning table: the direct kernel where it applies, else wgrad v3's table.
inline int table_choice(const ConvShape& g) {
  return applies(g) ? 0 : kDirectTiles + conv_wgrad_v03::table_choice(g);
}

// visit.template operator()<KMAX>() at K = g.K.
template <class Visit>
auto with_direct(const ConvShape& g, Visit&& visit) {
  return conv_few_channels::with_slots(g.K, visit);
}

}  // namespace conv_wgrad_v04
