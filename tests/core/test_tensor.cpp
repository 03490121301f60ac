#include <doctest/doctest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "core/host_memory.hpp"
#include "core/memory.hpp"
#include "core/rng.hpp"
#include "core/tensor.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;

TEST_CASE("shape prints and counts") {
  Shape s{3, 4, 5};
  CHECK(s.str() == "(3,4,5)");
  CHECK(s.numel() == 60);
  CHECK(s[-1] == 5);
  CHECK(contiguous_strides(s) == std::vector<int64_t>{20, 5, 1});
}

TEST_CASE("tensor reshape, transpose and contiguous copy") {
  Tensor t = Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  Tensor r = t.reshape({3, -1});
  CHECK(r.shape() == Shape{3, 2});
  CHECK(r.storage() == t.storage());
  Tensor tt = t.transpose(0, 1);
  CHECK_FALSE(tt.is_contiguous());
  Tensor c = tt.contiguous();
  CHECK(c.shape() == Shape{3, 2});
  // Row-major walk of the transposed view: 0 3 1 4 2 5.
  const std::vector<double> expect{0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) CHECK(c.item(i) == expect[i]);
  CHECK_THROWS_WITH_AS(t.reshape({4, 2}), "reshape: (2,3) has 6 elements, (4,2) has 8", Error);
}

TEST_CASE("tensor rows: a view of a range along the first axis") {
  Tensor t = Tensor::from<float>({4, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor middle = t.rows(1, 2);
  CHECK(middle.shape() == Shape{2, 3});
  CHECK(middle.storage() == t.storage());
  CHECK(middle.is_contiguous());
  for (int i = 0; i < 6; ++i) CHECK(middle.item(i) == 3 + i);
  middle.rows(1, 1).copy_from(Tensor::from<float>({1, 3}, {-1, -2, -3}));  // writes through to t's row 2
  CHECK(t.item(6) == -1);
  CHECK(t.item(8) == -3);
  CHECK(t.item(9) == 9);
  Tensor flat = Tensor::from<int32_t>({5}, {10, 11, 12, 13, 14}).rows(3, 2);
  CHECK(flat.item(0) == 13);
  CHECK(flat.rows(0, 0).numel() == 0);
  CHECK_THROWS_WITH_AS(t.rows(3, 2), "rows: rows [3, 5) of f32 (4,3)", Error);
  CHECK_THROWS_WITH_AS(t.transpose(0, 1).rows(0, 1), doctest::Contains("rows: needs a contiguous tensor"), Error);
}

TEST_CASE("tensor typed access names the dtype on mismatch") {
  Tensor t = Tensor::zeros({2, 2}, DType::f64);
  CHECK_THROWS_WITH_AS(t.data<float>(), "tensor: asked for f32 data of a f64 (2,2)", Error);
  Tensor f = t.to(DType::f32);
  CHECK(f.dtype() == DType::f32);
  CHECK(f.item(3) == 0.0);
}

TEST_CASE("memory tracker splits bytes by tag and layer, current and peak") {
  MemoryTracker& tracker = MemoryTracker::instance();
  tracker.reset_peaks();
  const int64_t params_before = tracker.tag(MemTag::parameter).current;
  const int64_t acts_before = tracker.tag(MemTag::activation).current;
  {
    MemoryScope scope(MemTag::parameter, "test.layer");
    Tensor w = Tensor::zeros({10, 10});  // 400 bytes
    CHECK(tracker.tag(MemTag::parameter).current == params_before + 400);
    {
      MemoryScope act(MemTag::activation);
      Tensor a = Tensor::zeros({25});  // 100 bytes
      CHECK(tracker.tag(MemTag::activation).current == acts_before + 100);
    }
    CHECK(tracker.tag(MemTag::activation).current == acts_before);
    CHECK(tracker.tag(MemTag::activation).peak >= acts_before + 100);
    w.retag(MemTag::gradient, "test.other");
    CHECK(tracker.tag(MemTag::parameter).current == params_before);
  }
  bool found = false;
  for (const MemRow& row : tracker.layers()) {
    if (row.layer != "test.layer") continue;
    found = true;
    CHECK(row.by_tag[static_cast<int>(MemTag::parameter)].peak == 400);
    CHECK(row.by_tag[static_cast<int>(MemTag::activation)].peak == 100);
    CHECK(row.total.current == 0);
  }
  CHECK(found);
}

TEST_CASE("rng is reproducible from its seed") {
  Rng a(42), b(42), c(43);
  for (int i = 0; i < 10; ++i) {
    uint64_t x = a.next_u64();
    CHECK(x == b.next_u64());
    CHECK(x != c.next_u64());
  }
  Rng n(7);
  double sum = 0, sq = 0;
  const int count = 20000;
  for (int i = 0; i < count; ++i) {
    double v = n.normal();
    sum += v;
    sq += v * v;
  }
  // Mean and variance of 20000 standard normals: standard errors 0.007 and 0.01.
  CHECK(std::abs(sum / count) < 0.04);
  CHECK(std::abs(sq / count - 1.0) < 0.05);
}

TEST_CASE("a tensor larger than the machine can hold is refused by name, not left to the OOM killer") {
  // Linux would grant the allocation and kill the process as its pages were
  // touched. 2^40 floats: 4 TiB.
  REQUIRE(available_memory_bytes() > 0);  // Linux says; the check needs it
  const std::string e = test::error_of([] { Tensor::empty({int64_t(1) << 40}); });
  CHECK(e.starts_with("storage: out of host memory allocating 4096.00 GiB ("));
  CHECK(e.find("this machine has ") != std::string::npos);
  // Small allocations are not checked.
  CHECK(host_allocation_refusal(kCheckedAllocationBytes - 1).empty());
}

TEST_CASE("a checked tensor is backed by memory when it is made, so the next check counts it") {
  // Linux counts a page as used only once it is touched: unbacked, two large
  // tensors made before either is written were checked against the same
  // free memory. mincore says which pages are resident. A kernel before 5.14
  // cannot back them (back_with_pages then does nothing, by design).
  {
    const auto page = size_t(sysconf(_SC_PAGESIZE));
    void* probe = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(probe != MAP_FAILED);
#ifdef MADV_POPULATE_WRITE
    const bool supported = madvise(probe, page, MADV_POPULATE_WRITE) == 0;
#else
    const bool supported = false;
#endif
    munmap(probe, page);
    if (!supported) {
      MESSAGE("skipped: this kernel has no MADV_POPULATE_WRITE (Linux 5.14)");
      return;
    }
  }
  const Tensor t = Tensor::empty({kCheckedAllocationBytes / 4});
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(t.data<float>()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(t.data<float>()) + uintptr_t(t.nbytes())) / page * page;
  std::vector<unsigned char> resident((end - begin) / page);
  REQUIRE(mincore(reinterpret_cast<void*>(begin), end - begin, resident.data()) == 0);
  int64_t missing = 0;
  for (unsigned char r : resident) missing += (r & 1) == 0;
  CHECK(missing == 0);
}

TEST_CASE("a dropped tensor's memory serves the next tensor of its size, small ones made in between") {
  // A training step or a timing loop makes the same sizes over and over,
  // with small allocations between them (control blocks, names) that stay.
  // The heap must reuse each dropped block: with glibc's aligned_alloc it
  // did not (it asks for more than the size), and ten 64 MiB tensors made
  // one after another grew the heap by 640 MiB. mallinfo2's arena is the
  // heap's size (tensor.cpp takes every block from it, none mmap'ed).
  constexpr int64_t kFloats = int64_t(16) << 20;  // 64 MiB
  std::vector<Tensor> small;
  { const Tensor warm = Tensor::empty({kFloats}); }
  const size_t before = mallinfo2().arena;
  for (int i = 0; i < 10; ++i) {
    const Tensor big = Tensor::empty({kFloats});
    small.push_back(Tensor::empty({4}));
  }
  const size_t grown = mallinfo2().arena - before;
  INFO("heap grew by ", grown >> 20, " MiB over ten 64 MiB tensors");
  CHECK(grown < size_t(kFloats) * 4);  // at most one more block, not one per tensor
}
