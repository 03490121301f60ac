// check_png: what the headless tests ask of a warpnet-viz screenshot.
//   check_png FILE --size WxH               the image is WxH and not blank
//             [--active-lanes N]            N of the stepper's 32 lane cells are the active colour
//             [--colour R,G,B,N]            at least N pixels within 6 of (R,G,B) (repeatable)
//             [--fragments m16n8k16|m16n8k32|wmma]  every fragment element is its owner's colour
// Not blank: the luminance varies (standard deviation over 8) and at least
// 8 distinct colours appear: a cleared frame, or one with a lone message, fails.
// Exits 0 when every check passes, 1 otherwise, printing each check.
#include <stb_image.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "visualizer/layout.hpp"

namespace {

bool near(const unsigned char* p, int r, int g, int b, int tolerance) {
  return std::abs(p[0] - r) <= tolerance && std::abs(p[1] - g) <= tolerance && std::abs(p[2] - b) <= tolerance;
}

// The lane that holds element (row, col) of matrix m (0: A, 1: B, 2: C) of
// a tensor-core shape, worked out backwards from the PTX ISA's fragment
// figures ("Matrix Fragments for mma.m16n8k16 / mma.m16n8k32"): the lane is
// groupID * 4 + threadID_in_group; in A and C the row gives groupID (row % 8)
// and the column the pair (or, for 8-bit A, the quad) of threadID_in_group;
// in B the column gives groupID and the row the pair or quad. wmma (16x16x16)
// is warpnet's two m16n8k16 side by side, so its columns repeat every 8.
// An independent statement of the layouts the viewer takes from the emulator.
int owner_lane(const std::string& shape, int m, int row, int col) {
  const int per_thread = shape == "m16n8k32" && m != 2 ? 4 : 2;  // k elements per lane in a row of 8 or 16
  const int k_span = 4 * per_thread;                               // k columns one group of 4 lanes covers
  if (m == 1) return (col % 8) * 4 + (row % k_span) / per_thread;
  return (row % 8) * 4 + (col % k_span) / per_thread;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: check_png FILE --size WxH [--active-lanes N] [--colour R,G,B,N]...\n");
    return 2;
  }
  int w = 0, h = 0, channels = 0;
  unsigned char* image = stbi_load(argv[1], &w, &h, &channels, 3);
  if (!image) {
    std::printf("FAIL cannot read %s: %s\n", argv[1], stbi_failure_reason());
    return 1;
  }
  auto pixel = [&](int x, int y) { return image + (size_t(y) * w + x) * 3; };
  bool ok = true;
  auto report = [&](bool pass, const std::string& what) {
    std::printf("%s %s\n", pass ? "ok  " : "FAIL", what.c_str());
    ok = ok && pass;
  };

  // Not blank.
  double sum = 0, sum2 = 0;
  std::set<unsigned> colours;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const unsigned char* p = pixel(x, y);
      const double l = 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
      sum += l, sum2 += l * l;
      if (colours.size() < 4096) colours.insert(unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2]);
    }
  const double n = double(w) * h, sd = std::sqrt(std::max(0.0, sum2 / n - (sum / n) * (sum / n)));
  char line[160];
  std::snprintf(line, sizeof line, "not blank: luminance standard deviation %.1f (> 8), %zu%s distinct colours (>= 8)",
                sd, colours.size(), colours.size() >= 4096 ? "+" : "");
  report(sd > 8 && colours.size() >= 8, line);

  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : "";
    if (arg == "--size") {
      int ew = 0, eh = 0;
      std::sscanf(value, "%dx%d", &ew, &eh);
      std::snprintf(line, sizeof line, "size %dx%d (expected %dx%d)", w, h, ew, eh);
      report(w == ew && h == eh, line);
      ++i;
    } else if (arg == "--active-lanes") {
      const int expected = std::atoi(value);
      namespace L = warpnet::viz::layout;
      int active = 0;
      std::string missing;
      for (int lane = 0; lane < 32; ++lane) {
        const L::Point c = L::lane_cell_centre(lane);
        const int x = int(c.x), y = int(c.y);
        if (x >= w || y >= h) continue;
        if (near(pixel(x, y), L::kActive.r, L::kActive.g, L::kActive.b, 6)) ++active;
        else missing.append(" ").append(std::to_string(lane));
      }
      std::snprintf(line, sizeof line, "lane cells of the active colour: %d (expected %d)%s%s", active, expected,
                    missing.empty() ? "" : "; not active:", missing.substr(0, 80).c_str());
      report(active == expected, line);
      ++i;
    } else if (arg == "--colour") {
      int r = 0, g = 0, b = 0, least = 0;
      std::sscanf(value, "%d,%d,%d,%d", &r, &g, &b, &least);
      long count = 0;
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) count += near(pixel(x, y), r, g, b, 6);
      std::snprintf(line, sizeof line, "pixels of colour (%d,%d,%d): %ld (expected at least %d)", r, g, b, count, least);
      report(count >= least, line);
      ++i;
    } else if (arg == "--fragments") {
      namespace L = warpnet::viz::layout;
      const std::string shape = value;
      // (rows, cols) of A, B, C: the ISA's shapes.
      int rows[3] = {16, 16, 16}, cols[3] = {16, 8, 8};
      if (shape == "m16n8k32") rows[1] = 32, cols[0] = 32;
      if (shape == "wmma") cols[1] = cols[2] = 16;
      const float cell = L::fragment_cell(std::max({rows[0], rows[1], rows[2]}));
      int right = 0, cells = 0;
      std::string wrong;
      for (int m = 0; m < 3; ++m)
        for (int r = 0; r < rows[m]; ++r)
          for (int c = 0; c < cols[m]; ++c) {
            const L::Point p = L::fragment_cell_centre(cols, cell, m, r, c);
            const L::Rgb want = L::lane_colour(owner_lane(shape, m, r, c));
            ++cells;
            if (int(p.x) < w && int(p.y) < h && near(pixel(int(p.x), int(p.y)), want.r, want.g, want.b, 6)) ++right;
            else if (wrong.size() < 60) {
              wrong += ' ';
              wrong += "ABC"[m];
              wrong += std::to_string(r) + "," + std::to_string(c);
            }
          }
      std::snprintf(line, sizeof line, "%s fragment elements in their owner lane's colour: %d of %d%s%s", shape.c_str(),
                    right, cells, wrong.empty() ? "" : "; wrong:", wrong.c_str());
      report(right == cells, line);
      ++i;
    } else {
      std::printf("FAIL unknown option %s\n", arg.c_str());
      ok = false;
    }
  }
  stbi_image_free(image);
  return ok ? 0 : 1;
}
