// Throwaway probe (not part of the tree): times conv dgrad v2's wide and
// narrow tiles at LeNet-5's conv2 (N=64 C=6 14x14 K=16 5x5) on a GPU and
// checks both against a double CPU reference.
#include "kernels/conv/dgrad_02_implicit_gemm.cu"
#include <cmath>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
template <int BM, int BN, int BK, int TM, int TN>
void run(const char* name, ConvShape g, const float* dy, const float* w, float* dx, const std::vector<double>& ref) {
  dim3 grid(warpnet::ceil_div(g.N * g.H * g.W, BM), warpnet::ceil_div(g.C, BN)), block((BM / TM) * (BN / TN));
  auto go = [&] { conv2d_dgrad_implicit_gemm<BM, BN, BK, TM, TN><<<grid, block>>>(g, dy, w, dx); };
  CK(cudaMemset(dx, 0xff, ref.size() * 4));
  go(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> h(ref.size());
  CK(cudaMemcpy(h.data(), dx, h.size() * 4, cudaMemcpyDeviceToHost));
  double worst = 0; for (size_t i = 0; i < h.size(); ++i) worst = std::fmax(worst, std::fabs(h[i] - ref[i]));
  for (int i = 0; i < 20; ++i) go();
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int reps = 500;
  cudaEventRecord(a); for (int i = 0; i < reps; ++i) go(); cudaEventRecord(b); CK(cudaEventSynchronize(b));
  float ms; cudaEventElapsedTime(&ms, a, b);
  printf("%-28s grid %dx%d block %d: %.2f us/launch (back to back, %d launches), max |err| %.3g\n", name, grid.x, grid.y,
         block.x, 1000.0 * ms / reps, reps, worst);
}
int main() {
  ConvShape g{64, 6, 14, 14, 16, 5, 5, 1, 0, 1, 10, 10};
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s\n", p.name);
  const size_t ndy = size_t(g.N) * g.K * g.P * g.Q, nw = size_t(g.K) * g.C * g.R * g.S, ndx = size_t(g.N) * g.C * g.H * g.W;
  std::vector<float> hdy(ndy), hw(nw); unsigned s = 1;
  auto rnd = [&] { s = s * 1664525u + 1013904223u; return float(s >> 8) / float(1 << 24) * 2 - 1; };
  for (auto& v : hdy) v = rnd(); for (auto& v : hw) v = rnd();
  std::vector<double> ref(ndx, 0.0);
  for (int n = 0; n < g.N; ++n) for (int k = 0; k < g.K; ++k) for (int p_ = 0; p_ < g.P; ++p_) for (int q = 0; q < g.Q; ++q)
    for (int c = 0; c < g.C; ++c) for (int r = 0; r < g.R; ++r) for (int t = 0; t < g.S; ++t)
      ref[((size_t(n) * g.C + c) * g.H + p_ + r) * g.W + q + t] +=
          double(hdy[((size_t(n) * g.K + k) * g.P + p_) * g.Q + q]) * hw[((size_t(k) * g.C + c) * g.R + r) * g.S + t];
  float *dy, *w, *dx; CK(cudaMalloc(&dy, ndy * 4)); CK(cudaMalloc(&w, nw * 4)); CK(cudaMalloc(&dx, ndx * 4));
  CK(cudaMemcpy(dy, hdy.data(), ndy * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(w, hw.data(), nw * 4, cudaMemcpyHostToDevice));
  for (int i = 0; i < 2; ++i) {
    run<128, 64, 8, 8, 4>("wide <128,64,8,8,4>", g, dy, w, dx, ref);
    run<64, 16, 16, 2, 2>("narrow <64,16,16,2,2>", g, dy, w, dx, ref);
    run<32, 8, 32, 1, 1>("narrower <32,8,32,1,1>", g, dy, w, dx, ref);
  }
}
