// `warpnet bench`'s ratios on made-up records (bench_table.cpp): which
// version 0 a row is measured against and with which of its two timings, the
// peak each input format is divided by, when a rate is flagged as effective,
// and the speed-up over the CPU and the share of the copy rate. These are the
// figures the issues' targets are judged by, so each is checked here on
// numbers worked out by hand, with no GPU.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "cli/bench.hpp"

namespace bench = warpnet::cli::bench;
using nlohmann::json;

namespace {

// An H200 as it reports itself (bench/results/nvidia-h200-2026-12-04.json).
warpnet::device::gpu::Info h200() {
  warpnet::device::gpu::Info info;
  info.usable = true;
  info.name = "NVIDIA H200";
  info.cc_major = 9;
  info.cc_minor = 0;
  info.multiprocessors = 132;
  info.clock_ghz = 1.98;
  return info;
}

json row(const std::string& kernel, int version, const std::string& input, double median_ms) {
  return {{"kernel", kernel},     {"version", version}, {"input_format", input}, {"output_format", "fp32"},
          {"status", "ok"},       {"timing", {{"median_ms", median_ms}}}};
}

const json* find(const json& gpu, const std::string& kernel) {
  for (const json& r : gpu["kernels"])
    if (r["kernel"] == kernel) return &r;
  return nullptr;
}

constexpr double kFlops = 2.0 * 4096 * 4096 * 4096;

}  // namespace

TEST_CASE("each row is measured against the version 0 of its own formats, at that version's faster timing") {
  json vendor = row("matmul/00_cublas", 0, "fp32", 3.0);
  vendor["timing_after_group"] = {{"median_ms", 2.5}};  // the clock drifted down: the faster one is the yardstick
  json bf16_vendor = row("matmul/00_cublaslt_bf16", 0, "bf16", 0.20);
  bf16_vendor["timing_after_group"] = {{"median_ms", 0.25}};  // slower the second time: the first stands
  json bf16_out = row("matmul/00_cublaslt_bf16_out", 0, "bf16", 0.1);
  bf16_out["output_format"] = "bf16";  // listed first, but another output format: not the yardstick of fp32 outputs
  json gpu = {{"kernels",
               {vendor, bf16_out, bf16_vendor, row("matmul/10_autotuned", 10, "fp32", 5.0),
                row("matmul/16_wgmma_persistent", 16, "bf16", 0.40), row("matmul/14_fp8", 14, "e4m3", 0.1)}}};
  bench::add_ratios(gpu, h200(), json::object(), kFlops);

  const json& sgemm = *find(gpu, "matmul/10_autotuned");
  CHECK(sgemm["vendor"] == "matmul/00_cublas");
  CHECK(sgemm["percent_of_vendor"].get<double>() == doctest::Approx(50.0));  // 2.5 ms against 5.0
  CHECK((*find(gpu, "matmul/00_cublas"))["percent_of_vendor"] == 100.0);     // itself, whichever timing
  const json& wgmma = *find(gpu, "matmul/16_wgmma_persistent");
  CHECK(wgmma["vendor"] == "matmul/00_cublaslt_bf16");
  CHECK(wgmma["percent_of_vendor"].get<double>() == doctest::Approx(50.0));  // 0.20 ms against 0.40
  // No fp8 version 0 in this record: no share of a vendor rather than a borrowed one.
  const json& fp8 = *find(gpu, "matmul/14_fp8");
  CHECK(!fp8.contains("vendor"));
  CHECK(!fp8.contains("percent_of_vendor"));
}

TEST_CASE("a version 0 that failed is no yardstick, and rows that failed get no figures") {
  json broken = row("conv2d/00_cudnn", 0, "fp32", 1.0);
  broken["status"] = "failed";
  json failed = row("conv2d/05_im2col", 5, "fp32", 1.0);
  failed["status"] = "wrong";
  json gpu = {{"kernels", {broken, row("conv2d/00_cudnn_implicit_gemm", 0, "fp32", 4.0), failed,
                           row("conv2d/09_implicit_gemm_pipelined", 9, "fp32", 5.0)}}};
  bench::add_ratios(gpu, h200(), json::object(), kFlops);
  const json& v9 = *find(gpu, "conv2d/09_implicit_gemm_pipelined");
  CHECK(v9["vendor"] == "conv2d/00_cudnn_implicit_gemm");
  CHECK(v9["percent_of_vendor"].get<double>() == doctest::Approx(80.0));
  CHECK(!find(gpu, "conv2d/05_im2col")->contains("tflops"));
  CHECK(!find(gpu, "conv2d/00_cudnn")->contains("percent_of_vendor"));
}

TEST_CASE("TFLOP/s and % of peak: fp32 at the reported clock, 16-bit and fp8 tensor rates at the datasheet's") {
  json gpu = {{"kernels", {row("matmul/00_cublas", 0, "fp32", 2.704), row("matmul/00_cublas_fp16", 0, "fp16", 0.1846),
                           row("matmul/18_wgmma_fp8_persistent", 18, "e4m3", 0.1)}}};
  bench::add_ratios(gpu, h200(), json::object(), kFlops);
  const json& fp32 = *find(gpu, "matmul/00_cublas");
  CHECK(fp32["tflops"].get<double>() == doctest::Approx(kFlops / 2.704e-3 * 1e-12));  // 50.83
  CHECK(fp32["peak"]["tflops"].get<double>() == doctest::Approx(132 * 1.98 * 256 * 1e-3));  // 66.9
  CHECK(fp32["percent_of_peak"].get<double>() == doctest::Approx(100.0 * 50.827 / 66.908).epsilon(1e-4));
  CHECK(fp32["peak"]["basis"].get<std::string>().find("reported peak clock") != std::string::npos);
  const json& fp16 = *find(gpu, "matmul/00_cublas_fp16");
  CHECK(fp16["peak"]["tflops"].get<double>() == doctest::Approx(132 * 1.83 * 4096 * 1e-3));  // 989.4
  CHECK(fp16["percent_of_peak"].get<double>() == doctest::Approx(75.24).epsilon(1e-3));
  const json& fp8 = *find(gpu, "matmul/18_wgmma_fp8_persistent");
  CHECK(fp8["peak"]["tflops"].get<double>() == doctest::Approx(132 * 1.83 * 8192 * 1e-3));  // 1978.9
  CHECK(!fp8.contains("peak_note"));  // 69% of peak: a share of the hardware's rate
}

TEST_CASE("a peak the table lacks is null and says why, not borrowed from another format or part") {
  warpnet::device::gpu::Info pascal = h200();
  pascal.cc_major = 6;
  const json none = bench::peak(pascal, "fp32");
  CHECK(none["tflops"].is_null());
  CHECK(none["basis"].get<std::string>().find("sm_60") != std::string::npos);
  const json fp4 = bench::peak(h200(), "e2m1");
  CHECK(fp4["tflops"].is_null());
  CHECK(fp4["basis"].get<std::string>().find("e2m1") != std::string::npos);

  json gpu = {{"kernels", {row("matmul/00_cublas", 0, "fp32", 1.0)}}};
  bench::add_ratios(gpu, pascal, json::object(), kFlops);
  CHECK(!gpu["kernels"][0].contains("percent_of_peak"));
  CHECK(gpu["kernels"][0]["peak"]["tflops"].is_null());
}

TEST_CASE("an algorithm doing fewer multiplications is flagged an effective rate, below the peak or above it") {
  json warpnet_winograd = row("conv2d/10_winograd", 10, "fp32", 1.0);
  warpnet_winograd["candidate"] = "winograd F(2x2,3x3), GEMM 128x128";  // conv_v10::candidate_name
  json cudnn_fft = row("conv2d/00_cudnn", 0, "fp32", 1.0);
  cudnn_fft["tuned"] = "found IMPLICIT_GEMM, FFT_TILING; chosen: FFT_TILING";  // conv_cudnn.cu's plan text
  json fast = row("conv2d/09_implicit_gemm_pipelined", 9, "fp32", 0.5);  // direct count, above the peak
  json direct = row("conv2d/07_implicit_gemm_tiled", 7, "fp32", 100.0);  // far below it, nothing to say
  direct["candidate"] = "pipelined 128x64x8, warps 64x32, B's copies hoisted";  // conv_v09's
  json gpu = {{"kernels", {cudnn_fft, warpnet_winograd, fast, direct}}};
  const double flops = 40e12 * 1e-3;  // 40 TFLOP/s at 1 ms: 60% of the fp32 peak
  bench::add_ratios(gpu, h200(), json::object(), flops);
  const std::string fewer = "does fewer operations than the direct one, so this is not a share";
  CHECK((*find(gpu, "conv2d/10_winograd"))["peak_note"].get<std::string>().find(fewer) != std::string::npos);
  CHECK((*find(gpu, "conv2d/00_cudnn"))["peak_note"].get<std::string>().find(fewer) != std::string::npos);
  const json& above = *find(gpu, "conv2d/09_implicit_gemm_pipelined");
  CHECK(above["percent_of_peak"].get<double>() > 100);
  CHECK(above["peak_note"].get<std::string>().find("above the hardware's peak") != std::string::npos);
  CHECK(!find(gpu, "conv2d/07_implicit_gemm_tiled")->contains("peak_note"));
}

TEST_CASE("the speed-up over the CPU divides by the CPU's first row, and GB/s by the in-run copy") {
  const json cpu = {{"rows", {{{"library", "warpnet"}, {"timing", {{"median_ms", 220.0}}}},
                              {{"library", "openblas"}, {"timing", {{"median_ms", 110.0}}}}}}};
  json r = row("softmax/03_online", 3, "fp32", 0.5);
  r["bytes_least"] = 2e9;  // read once, written once
  json gpu = {{"copy", {{"gbps", 4000.0}}}, {"kernels", {r}}};
  bench::add_ratios(gpu, h200(), cpu, 1e9);
  const json& s = gpu["kernels"][0];
  CHECK(s["speedup_over_cpu"].get<double>() == doctest::Approx(440.0));  // Eigen's 220 ms, not OpenBLAS's
  CHECK(s["gbps"].get<double>() == doctest::Approx(4000.0));
  CHECK(s["percent_of_copy"].get<double>() == doctest::Approx(100.0));

  // No CPU row (--no-cpu) and no copy rate (it failed): neither figure, rather than a division by zero.
  json alone = {{"copy", {{"error", "cudaErrorLaunchFailure"}}}, {"kernels", {r}}};
  bench::add_ratios(alone, h200(), {{"skipped", "--no-cpu"}}, 1e9);
  CHECK(!alone["kernels"][0].contains("speedup_over_cpu"));
  CHECK(alone["kernels"][0]["gbps"].get<double>() == doctest::Approx(4000.0));
  CHECK(!alone["kernels"][0].contains("percent_of_copy"));
}
