// The Winograd F(2x2, 3x3) bound (winograd_bound.hpp, which derives it).
// Compiled once into warpnet_device, not with the registration files beside
// it (it registers nothing and launches nothing), and linked whole with them.
#include "device/kernels/conv/winograd_bound.hpp"

#include <cmath>
#include <cstddef>

#include "core/rounding.hpp"

namespace warpnet::device::conv::winograd_bound {
namespace {

// F(2x2, 3x3)'s matrices as the kernels apply them (10_winograd.cu's header).
constexpr double kBt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kAt[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

// A forward convolution by 3x3 filters at stride 1: x (N, C, H, W), w (K, C,
// 3, 3), y (N, K, P, Q).
struct View {
  int N, C, H, W, K, pad, P, Q;
};
View view(int N, int C, int H, int W, int K, int pad) { return {N, C, H, W, K, pad, H + 2 * pad - 2, W + 2 * pad - 2}; }

// Where the candidates apply (winograd::applies; dgrad's view needs pad <= 2).
void require_winograd(const Sizes& s, const char* op_name, bool pad_at_most_2) {
  WN_CHECK(s.size() == 10 && s[5] == 3 && s[6] == 3 && s[7] == 1 && s[9] == 1 && s[8] >= 0 &&
               (!pad_at_most_2 || s[8] <= 2),
           op_name, ": the Winograd F(2x2,3x3) bound takes 3x3 filters at stride 1 and dilation 1",
           pad_at_most_2 ? ", pad <= 2" : "", ", got ", describe_sizes(op(op_name), s));
}

// |M| |X| |M|ᵀ, M (R, K), X (K, K): what a transform M X Mᵀ sums, in magnitude.
template <int R, int K>
void abs_sandwich(const double (&M)[R][K], const double (&X)[K][K], double (&out)[R][R]) {
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < R; ++j) {
      out[i][j] = 0;
      for (int a = 0; a < K; ++a)
        for (int b = 0; b < K; ++b) out[i][j] += std::abs(M[i][a]) * std::abs(X[a][b]) * std::abs(M[j][b]);
    }
}

// |G| |g| |G|ᵀ for every filter of w (K, C, 3, 3): 16 per (k, c).
std::vector<double> filter_magnitudes(const View& g, std::span<const float> w) {
  std::vector<double> out(size_t(g.K) * g.C * 16);
  for (size_t f = 0; f < size_t(g.K) * g.C; ++f) {
    double taps[3][3], u[4][4];
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s) taps[r][s] = w[f * 9 + 3 * r + s];
    abs_sandwich(kG, taps, u);
    for (int xi = 0; xi < 16; ++xi) out[f * 16 + xi] = u[xi / 4][xi % 4];
  }
  return out;
}

// |Bᵀ| |d| |B| for the window of tile (ti, tj) in plane (H, W) of x, zeros past its edges.
void window_magnitudes(const View& g, const float* plane, int ti, int tj, double (&v)[4][4]) {
  double d[4][4];
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) {
      const int h = 2 * ti - g.pad + r, w = 2 * tj - g.pad + s;
      d[r][s] = h >= 0 && h < g.H && w >= 0 && w < g.W ? double(plane[size_t(h) * g.W + w]) : 0.0;
    }
  abs_sandwich(kBt, d, v);
}

// The header's bound for every output of the view, tile by tile.
std::vector<double> bound(const View& g, std::span<const float> x, std::span<const float> w) {
  WN_CHECK(x.size() == size_t(g.N) * g.C * g.H * g.W && w.size() == size_t(g.K) * g.C * 9,
           "the Winograd bound: ", x.size(), " inputs and ", w.size(), " filter taps for N=", g.N, " C=", g.C,
           " H=", g.H, " W=", g.W, " K=", g.K);
  const std::vector<double> U = filter_magnitudes(g, w);
  const double gamma = gamma_fp32(double(g.C) + 10);
  std::vector<double> out(size_t(g.N) * g.K * g.P * g.Q);
  std::vector<double> V(size_t(g.C) * 16);  // one tile's windows, every channel
  for (int n = 0; n < g.N; ++n)
    for (int ti = 0; 2 * ti < g.P; ++ti)
      for (int tj = 0; 2 * tj < g.Q; ++tj) {
        for (int c = 0; c < g.C; ++c) {
          double v[4][4];
          window_magnitudes(g, x.data() + (size_t(n) * g.C + c) * g.H * g.W, ti, tj, v);
          for (int xi = 0; xi < 16; ++xi) V[size_t(c) * 16 + xi] = v[xi / 4][xi % 4];
        }
        for (int k = 0; k < g.K; ++k) {
          double S[4][4] = {}, y[2][2];
          for (int c = 0; c < g.C; ++c)
            for (int xi = 0; xi < 16; ++xi) S[xi / 4][xi % 4] += U[(size_t(k) * g.C + c) * 16 + xi] * V[c * 16 + xi];
          abs_sandwich(kAt, S, y);
          for (int a = 0; a < 2 && 2 * ti + a < g.P; ++a)
            for (int b = 0; b < 2 && 2 * tj + b < g.Q; ++b)
              out[((size_t(n) * g.K + k) * g.P + 2 * ti + a) * g.Q + 2 * tj + b] = gamma * y[a][b] + 1e-30;
        }
      }
  return out;
}

std::span<const float> floats(const Tensor& t) {
  WN_CHECK(t.dtype() == DType::f32 && t.is_contiguous(), "the Winograd bound: an input is ", t.describe(),
           ", not contiguous fp32");
  return {t.data<float>(), size_t(t.numel())};
}

}  // namespace

std::vector<double> forward(const Sizes& s, std::span<const float> x, std::span<const float> w) {
  require_winograd(s, "conv2d", false);
  return bound(view(int(s[0]), int(s[1]), int(s[2]), int(s[3]), int(s[4]), int(s[8])), x, w);
}

std::vector<double> dgrad(const Sizes& s, std::span<const float> dy, std::span<const float> w) {
  require_winograd(s, "conv2d_dgrad", true);
  const int N = int(s[0]), C = int(s[1]), H = int(s[2]), W = int(s[3]), K = int(s[4]), pad = int(s[8]);
  WN_CHECK(w.size() == size_t(K) * C * 9, "conv2d_dgrad: the Winograd bound: ", w.size(), " filter taps for K=", K,
           " C=", C);
  std::vector<float> turned(w.size());  // (C, K, 3, 3): turned[c][k][r][s] = w[k][c][2 - r][2 - s]
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c)
      for (int tap = 0; tap < 9; ++tap) turned[(size_t(c) * K + k) * 9 + 8 - tap] = w[(size_t(k) * C + c) * 9 + tap];
  // dy (N, K, P, Q) as the view's x, C its output channels, padded by 2 − pad: its output is H x W.
  return bound(view(N, K, H + 2 * pad - 2, W + 2 * pad - 2, C, 2 - pad), dy, turned);
}

std::vector<Tensor> forward_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const std::vector<double> b = forward(s, floats(in.at(0)), floats(in.at(1)));
  return {Tensor::from(Shape{s[0], s[4], s[2] + 2 * s[8] - 2, s[3] + 2 * s[8] - 2}, b)};
}

std::vector<Tensor> dgrad_tolerance(const Sizes& s, const std::vector<Tensor>& in) {
  const std::vector<double> b = dgrad(s, floats(in.at(0)), floats(in.at(1)));
  return {Tensor::from(Shape{s[0], s[1], s[2], s[3]}, b)};
}

}  // namespace warpnet::device::conv::winograd_bound
