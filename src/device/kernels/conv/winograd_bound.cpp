// The Winograd F(2x2, 3x3) and F(4x4, 3x3) bounds (winograd_bound.hpp, which derives them).
// Compiled once into warpnet_device, not with the registration files beside
// it (it registers nothing and launches nothing), and linked whole with them.
#include "device/kernels/conv/winograd_bound.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <functional>

#include "core/rounding.hpp"

namespace warpnet::device::conv::winograd_bound {
namespace {

// F(m x m, 3x3)'s matrices as the kernels apply them (10_winograd.cu's and
// 12_winograd_4x4.cu's headers), with the roundings on any product's way
// outside the sum over channels (the header's r).
struct F2x2 {
  static constexpr int m = 2, a = 4, roundings = 10;
  static constexpr double Bt[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  static constexpr double At[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};
struct F4x4 {
  static constexpr int m = 4, a = 6, roundings = 18;
  static constexpr double Bt[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                      {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr double G[6][3] = {{1.0 / 4, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
  static constexpr double At[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

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
           op_name, ": the Winograd bound takes 3x3 filters at stride 1 and dilation 1",
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

// The view's filter taps: tap(k, c, r, s) of output channel k, input channel c.
using Taps = std::function<float(int k, int c, int r, int s)>;

// w (K, C, 3, 3) as it is.
Taps taps_of(const View& g, std::span<const float> w) {
  WN_CHECK(w.size() == size_t(g.K) * g.C * 9, "the Winograd bound: ", w.size(), " filter taps for K=", g.K,
           " C=", g.C);
  return [g, w](int k, int c, int r, int s) { return w[(size_t(k) * g.C + c) * 9 + 3 * r + s]; };
}

// |G| |g| |G|ᵀ of filter (k, c).
template <class F>
void filter_magnitude(const Taps& tap, int k, int c, double (&u)[F::a][F::a]) {
  double taps[3][3];
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 3; ++s) taps[r][s] = tap(k, c, r, s);
  abs_sandwich(F::G, taps, u);
}

// |Bᵀ| |d| |B| for the window of tile (ti, tj) in plane (H, W) of x, zeros past its edges.
template <class F>
void window_magnitudes(const View& g, const float* plane, int ti, int tj, double (&v)[F::a][F::a]) {
  double d[F::a][F::a];
  for (int r = 0; r < F::a; ++r)
    for (int s = 0; s < F::a; ++s) {
      const int h = F::m * ti - g.pad + r, w = F::m * tj - g.pad + s;
      d[r][s] = h >= 0 && h < g.H && w >= 0 && w < g.W ? double(plane[size_t(h) * g.W + w]) : 0.0;
    }
  abs_sandwich(F::Bt, d, v);
}

void require_inputs(const View& g, std::span<const float> x) {
  WN_CHECK(x.size() == size_t(g.N) * g.C * g.H * g.W, "the Winograd bound: ", x.size(), " inputs for N=", g.N,
           " C=", g.C, " H=", g.H, " W=", g.W);
}

// The header's bound of the m x m outputs of a tile from S = Σ_c U_c ⊙ V_c.
template <class F>
void tile_bound(const View& g, const double (&S)[F::a][F::a], double (&y)[F::m][F::m]) {
  abs_sandwich(F::At, S, y);
  const double gamma = gamma_fp32(double(g.C) + F::roundings);
  for (auto& row : y)
    for (double& e : row) e = gamma * e + 1e-30;
}

// The bound of every output of the view, tile by tile, each filter's and
// each window's magnitudes computed once.
template <class F>
std::vector<double> bound(const View& g, std::span<const float> x, const Taps& tap) {
  constexpr int m = F::m, a = F::a, xis = a * a;
  require_inputs(g, x);
  std::vector<double> U(size_t(g.K) * g.C * xis);  // |G| |g| |G|ᵀ per (k, c)
  for (int k = 0; k < g.K; ++k)
    for (int c = 0; c < g.C; ++c) {
      double u[a][a];
      filter_magnitude<F>(tap, k, c, u);
      for (int xi = 0; xi < xis; ++xi) U[(size_t(k) * g.C + c) * xis + xi] = u[xi / a][xi % a];
    }
  std::vector<double> out(size_t(g.N) * g.K * g.P * g.Q);
  std::vector<double> V(size_t(g.C) * xis);  // one tile's windows, every channel
  for (int n = 0; n < g.N; ++n)
    for (int ti = 0; m * ti < g.P; ++ti)
      for (int tj = 0; m * tj < g.Q; ++tj) {
        for (int c = 0; c < g.C; ++c) {
          double v[a][a];
          window_magnitudes<F>(g, x.data() + (size_t(n) * g.C + c) * g.H * g.W, ti, tj, v);
          for (int xi = 0; xi < xis; ++xi) V[size_t(c) * xis + xi] = v[xi / a][xi % a];
        }
        for (int k = 0; k < g.K; ++k) {
          double S[a][a] = {}, y[m][m];
          for (int c = 0; c < g.C; ++c)
            for (int xi = 0; xi < xis; ++xi)
              S[xi / a][xi % a] += U[(size_t(k) * g.C + c) * xis + xi] * V[size_t(c) * xis + xi];
          tile_bound<F>(g, S, y);
          for (int i = 0; i < m && m * ti + i < g.P; ++i)
            for (int j = 0; j < m && m * tj + j < g.Q; ++j)
              out[((size_t(n) * g.K + k) * g.P + m * ti + i) * g.Q + m * tj + j] = y[i][j];
        }
      }
  return out;
}

// The bound of output (n, k, p, q) alone: its tile's sum over the channels.
template <class F>
double bound_at(const View& g, std::span<const float> x, const Taps& tap, const std::array<int, 4>& at) {
  constexpr int m = F::m, a = F::a;
  require_inputs(g, x);
  const auto [n, k, p, q] = at;
  WN_CHECK(n >= 0 && n < g.N && k >= 0 && k < g.K && p >= 0 && p < g.P && q >= 0 && q < g.Q,
           "the Winograd bound: no output [", n, ",", k, ",", p, ",", q, "] in (", g.N, ", ", g.K, ", ", g.P, ", ",
           g.Q, ")");
  double S[a][a] = {}, y[m][m];
  for (int c = 0; c < g.C; ++c) {
    double u[a][a], v[a][a];
    filter_magnitude<F>(tap, k, c, u);
    window_magnitudes<F>(g, x.data() + (size_t(n) * g.C + c) * g.H * g.W, p / m, q / m, v);
    for (int i = 0; i < a; ++i)
      for (int j = 0; j < a; ++j) S[i][j] += u[i][j] * v[i][j];
  }
  tile_bound<F>(g, S, y);
  return y[p % m][q % m];
}

// visit.template operator()<F>() for the arithmetic `tile` names.
template <class Visit>
auto with_tile(WinogradTile tile, Visit&& visit) {
  WN_CHECK(tile != WinogradTile::none, "the Winograd bound: the candidate runs no Winograd arithmetic");
  if (tile == WinogradTile::f4x4) return visit.template operator()<F4x4>();
  return visit.template operator()<F2x2>();
}

View forward_view(const Sizes& s) {
  require_winograd(s, "conv2d", false);
  return view(int(s[0]), int(s[1]), int(s[2]), int(s[3]), int(s[4]), int(s[8]));
}

// dy (N, K, P, Q) as the view's x, C its output channels, padded by 2 − pad
// (its output is H x W), and the filters transposed and turned by 180°:
// tap(c, k, r, s) = w[k][c][2 − r][2 − s].
View dgrad_view(const Sizes& s) {
  require_winograd(s, "conv2d_dgrad", true);
  const int N = int(s[0]), C = int(s[1]), H = int(s[2]), W = int(s[3]), K = int(s[4]), pad = int(s[8]);
  return view(N, K, H + 2 * pad - 2, W + 2 * pad - 2, C, 2 - pad);
}
Taps turned_taps_of(const View& g, std::span<const float> w) {
  const int C = g.K, K = g.C;  // the dgrad's own channels: the view's are swapped
  WN_CHECK(w.size() == size_t(K) * C * 9, "conv2d_dgrad: the Winograd bound: ", w.size(), " filter taps for K=", K,
           " C=", C);
  return [C, w](int c, int k, int r, int s) { return w[(size_t(k) * C + c) * 9 + 3 * (2 - r) + (2 - s)]; };
}

std::span<const float> floats(const Tensor& t) {
  WN_CHECK(t.dtype() == DType::f32 && t.is_contiguous(), "the Winograd bound: an input is ", t.describe(),
           ", not contiguous fp32");
  return {t.data<float>(), size_t(t.numel())};
}

}  // namespace

std::vector<double> forward(const Sizes& s, std::span<const float> x, std::span<const float> w, WinogradTile tile) {
  const View g = forward_view(s);
  return with_tile(tile, [&]<class F>() { return bound<F>(g, x, taps_of(g, w)); });
}

std::vector<double> dgrad(const Sizes& s, std::span<const float> dy, std::span<const float> w, WinogradTile tile) {
  const View g = dgrad_view(s);
  return with_tile(tile, [&]<class F>() { return bound<F>(g, dy, turned_taps_of(g, w)); });
}

double forward_at(const Sizes& s, std::span<const float> x, std::span<const float> w, const std::array<int, 4>& y,
                  WinogradTile tile) {
  const View g = forward_view(s);
  return with_tile(tile, [&]<class F>() { return bound_at<F>(g, x, taps_of(g, w), y); });
}

double dgrad_at(const Sizes& s, std::span<const float> dy, std::span<const float> w, const std::array<int, 4>& dx,
                WinogradTile tile) {
  const View g = dgrad_view(s);
  return with_tile(tile, [&]<class F>() { return bound_at<F>(g, dy, turned_taps_of(g, w), dx); });
}

std::vector<Tensor> forward_tolerance(const Sizes& s, const std::vector<Tensor>& in, WinogradTile tile) {
  const std::vector<double> b = forward(s, floats(in.at(0)), floats(in.at(1)), tile);
  return {Tensor::from(Shape{s[0], s[4], s[2] + 2 * s[8] - 2, s[3] + 2 * s[8] - 2}, b)};
}

std::vector<Tensor> dgrad_tolerance(const Sizes& s, const std::vector<Tensor>& in, WinogradTile tile) {
  const std::vector<double> b = dgrad(s, floats(in.at(0)), floats(in.at(1)), tile);
  return {Tensor::from(Shape{s[0], s[1], s[2], s[3]}, b)};
}

}  // namespace warpnet::device::conv::winograd_bound
