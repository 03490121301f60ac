// IDX files, raw and gzip: loading, every fault the loader reports, and the
// real Fashion-MNIST test split when it is installed.
#include <doctest/doctest.h>
#include <sys/stat.h>  // mkfifo
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "core/atomic_file.hpp"
#include "datasets/dataset.hpp"
#include "datasets/idx.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using namespace warpnet::data;
using warpnet::test::error_of;
using warpnet::test::scratch_dir;

namespace {

std::string path_of(const std::string& name) { return (scratch_dir() / name).string(); }

// An IDX file: 00 00 <type> <ndims>, big-endian u32 extents, then `payload`.
std::string idx_bytes(const std::vector<uint32_t>& dims, const std::string& payload, uint8_t type = 0x08) {
  std::string s{'\0', '\0', char(type), char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) s += char((d >> shift) & 0xff);
  return s + payload;
}

// Bytes that deflate barely compresses (an LCG), so a cut or a flipped byte
// lands inside real compressed data.
std::string noise_bytes(size_t n) {
  std::string s(n, '\0');
  uint32_t x = 12345;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = char(x >> 24);
  }
  return s;
}

std::string write_raw(const std::string& name, const std::string& bytes) {
  const std::string path = path_of(name);
  write_file_atomically(path, bytes);
  return path;
}

std::string write_gz(const std::string& name, const std::string& bytes) {
  const std::string path = path_of(name);
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
  return path;
}

// 3 images of 4x5 and their labels.
const std::string kPixels = noise_bytes(3 * 4 * 5);
const std::string kImages = idx_bytes({3, 4, 5}, kPixels);
const std::string kLabels = idx_bytes({3}, std::string{0, 9, 4});

}  // namespace

TEST_CASE("idx: raw and gzip files load the same") {
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    auto write = gz ? write_gz : write_raw;
    const std::string images = write(gz ? "img.gz" : "img.idx", kImages);
    const std::string labels = write(gz ? "lab.gz" : "lab.idx", kLabels);

    const Tensor raw = read_idx(images);
    REQUIRE(raw.dtype() == DType::u8);
    REQUIRE(raw.shape() == Shape{3, 4, 5});
    CHECK(std::string(static_cast<const char*>(raw.raw()), 60) == kPixels);

    const Dataset d = load_idx_pair(images, labels, "tiny");
    CHECK(d.name == "tiny");
    CHECK(d.num_classes == 10);
    REQUIRE(d.inputs.shape() == Shape{3, 1, 4, 5});
    REQUIRE(d.labels.shape() == Shape{3});
    CHECK(d.labels.dtype() == DType::i32);
    CHECK(d.labels.item(1) == 9);
    for (int i = 0; i < 60; ++i) CHECK(d.inputs.item(i) == doctest::Approx(uint8_t(kPixels[i]) / 255.0).epsilon(1e-6));
  }
}

TEST_CASE("idx: max_items reads only the first records, and their pair") {
  for (bool gz : {false, true}) {
    CAPTURE(gz);
    auto write = gz ? write_gz : write_raw;
    const std::string images = write(gz ? "img2.gz" : "img2.idx", kImages);
    const std::string labels = write(gz ? "lab2.gz" : "lab2.idx", kLabels);
    const Tensor two = read_idx(images, 2);
    REQUIRE(two.shape() == Shape{2, 4, 5});
    CHECK(std::string(static_cast<const char*>(two.raw()), 40) == kPixels.substr(0, 40));
    CHECK(read_idx(images, 3).shape() == Shape{3, 4, 5});  // as many as there are, or more: the whole file
    CHECK(read_idx(images, 7).shape() == Shape{3, 4, 5});
    const Dataset d = load_idx_pair(images, labels, "tiny", 10, 2);
    REQUIRE(d.labels.shape() == Shape{2});
    CHECK(d.labels.item(1) == 9);
    // What follows the records read is not read: bytes past the header's
    // count fail a whole read only.
    const std::string longer = write(gz ? "img3.gz" : "img3.idx", kImages + "xyz");
    CHECK(read_idx(longer, 2).shape() == Shape{2, 4, 5});
    CHECK(error_of([&] { read_idx(longer); }).find("more data after the 60 bytes") != std::string::npos);
  }
}

TEST_CASE("idx: header faults name the file and the fault") {
  const std::string p = path_of("bad.idx");
  auto read = [&](const std::string& bytes) {
    write_file_atomically(p, bytes);
    return error_of([&] { read_idx(p); });
  };
  CHECK(read("P5\n28 28\n") == p + ": not an IDX file (magic 50 35 0a 32, expected 00 00 08 <ndims>)");
  CHECK(read(std::string(2, '\0')) == p + ": not an IDX file (2 bytes, too short for the 4-byte magic)");
  CHECK(read(idx_bytes({2, 2}, std::string(16, '\0'), 0x0D)) ==
        p + ": unsupported IDX type code 0x0d (float32); only 0x08 (unsigned byte) is supported");
  CHECK(read(idx_bytes({}, "")) == p + ": IDX header declares 0 dimensions");
  CHECK(read(idx_bytes({2, 0, 3}, "")) == p + ": dimension 1 of the IDX header is 0");
  CHECK(read(idx_bytes({1, 1, 1, 1, 1}, "x")) ==
        p + ": IDX header declares 5 dimensions; warpnet reads 1 to 4 (labels 1, images 3)");
  CHECK(read(idx_bytes({65536, 65536}, "")) ==
        p + ": IDX header dimensions (65536,65536)... exceed 2^31 elements: a corrupt header");
  CHECK(read(idx_bytes({3, 4, 5}, "").substr(0, 10)) == p + ": truncated header: 3 dimensions need 12 bytes, got 6");
}

TEST_CASE("idx: truncated, overlong and corrupt data") {
  const std::string p = path_of("data.idx");
  write_file_atomically(p, kImages.substr(0, kImages.size() - 35));
  CHECK(error_of([&] { read_idx(p); }) == p + ": truncated: expected 60 bytes of pixels (3,4,5), got 25");
  write_file_atomically(p, kLabels + "xyz");
  CHECK(error_of([&] { read_idx(p); }) ==
        p + ": more data after the 3 bytes of labels (3) the header announces (1 dimension; a damaged header, or "
                "files joined?)");

  // A gzip stream cut in the middle, and one whose CRC no longer matches.
  const std::string big = idx_bytes({10, 20, 30}, noise_bytes(6000));
  const std::string gz = read_file(write_gz("whole.gz", big));
  const std::string cut = write_raw("cut.gz", gz.substr(0, gz.size() / 2));
  std::string msg = error_of([&] { read_idx(cut); });
  CHECK(msg == cut + ": truncated: the gzip stream ends early (zlib: unexpected end of file)");

  std::string bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x55;  // the trailer: CRC-32, then the length
  const std::string crc = write_raw("crc.gz", bad_crc);
  msg = error_of([&] { read_idx(crc); });
  CHECK(msg == crc + ": corrupt gzip data (zlib: incorrect data check)");
}

TEST_CASE("idx: pair checks counts, ranks and label range") {
  const std::string images = write_raw("pair_img.idx", kImages);
  const std::string labels2 = write_raw("pair_lab2.idx", idx_bytes({2}, std::string{1, 2}));
  CHECK(error_of([&] { load_idx_pair(images, labels2, "x"); }) ==
        images + ": 3 images but 2 labels in " + labels2);
  // Read up to a limit, the images' count is one the file holds at least.
  CHECK(error_of([&] { load_idx_pair(images, labels2, "x", 10, 3); }) ==
        images + ": at least 3 images but 2 labels in " + labels2);

  const std::string labels10 = write_raw("pair_lab10.idx", idx_bytes({3}, std::string{1, 10, 2}));
  CHECK(error_of([&] { load_idx_pair(images, labels10, "x"); }) ==
        labels10 + ": label 10 at index 1 is out of range [0,10)");
  const std::string labels = write_raw("pair_lab.idx", kLabels);
  CHECK(error_of([&] { load_idx_pair(images, labels, "x", 5); }) ==
        labels + ": label 9 at index 1 is out of range [0,5)");

  CHECK(error_of([&] { load_idx_pair(labels, labels, "x"); }) == labels + ": images must be 3-D (N,H,W), got (3)");
  CHECK(error_of([&] { load_idx_pair(images, images, "x"); }) ==
        images + ": labels must be 1-D (N), got (3,4,5)");
}

TEST_CASE("idx: images of one constant value are refused with their file") {
  const std::string images = write_raw("flat_img.idx", idx_bytes({3, 4, 5}, std::string(3 * 4 * 5, char(7))));
  const std::string labels = write_raw("flat_lab.idx", kLabels);
  const Dataset d = load_idx_pair(images, labels, "flat");
  CHECK(d.source == images);
  CHECK(error_of([&] { input_statistics(d); }) ==
        "input_statistics: every input of 'flat' (" + images + ") is " + cat(7.0f / 255.0f) + ": nothing to scale");
}

TEST_CASE("idx: missing files say which and how to get them") {
  const std::string missing = path_of("no_such.idx.gz");
  const std::string msg = error_of([&] { read_idx(missing); });
  CHECK(msg == missing + ": cannot open: No such file or directory");
  // A named pipe would block the read for ever.
  const std::string fifo = path_of("fifo.idx");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { read_idx(fifo); }) ==
        fifo + ": not a regular file (a pipe, socket or device: reading it could wait for ever)");

  const auto empty = scratch_dir() / "empty_fashion";
  std::filesystem::create_directories(empty);
  const std::string fm = error_of([&] { load_fashion_mnist(empty.string(), true); });
  CHECK(fm.find((empty / "train-images-idx3-ubyte.gz").string()) != std::string::npos);
  // (The advice to install the package is for the package's own folder only.)
  CHECK(fm.find("in the folder --data-dir names, which must hold the four IDX files") != std::string::npos);
  // A folder the user named that does not exist is what the message says.
  const std::string nowhere = (scratch_dir() / "no_such_folder").string();
  CHECK(error_of([&] { load_fashion_mnist(nowhere, true); }) ==
        "Fashion-MNIST: " + nowhere + ": no such folder (--data-dir names the folder holding the IDX files, "
        "train-images-idx3-ubyte.gz and the others)");
  // Named by the environment variable instead: the message names it.
  ::setenv("WARPNET_FASHION_MNIST", nowhere.c_str(), 1);
  const std::string from_env = error_of([&] { load_fashion_mnist(fashion_mnist_dir(), true); });
  ::unsetenv("WARPNET_FASHION_MNIST");
  CHECK(from_env == "Fashion-MNIST: " + nowhere + ": no such folder ($WARPNET_FASHION_MNIST names the folder holding "
                    "the IDX files, train-images-idx3-ubyte.gz and the others)");
  // A folder the user named that lacks the files: no advice to install the package, which it is not.
  ::setenv("WARPNET_FASHION_MNIST", empty.c_str(), 1);
  const std::string lacking = error_of([&] { load_fashion_mnist(fashion_mnist_dir(), true); });
  ::unsetenv("WARPNET_FASHION_MNIST");
  CHECK(lacking.find("in the folder $WARPNET_FASHION_MNIST names, which must hold the four IDX files") !=
        std::string::npos);
  CHECK(lacking.find("apt-get") == std::string::npos);
}

TEST_CASE("idx: Fashion-MNIST layout, uncompressed names and the directory variable") {
  const auto dir = scratch_dir() / "fake_fashion";
  std::filesystem::create_directories(dir);
  write_raw("fake_fashion/t10k-images-idx3-ubyte", kImages);
  write_gz("fake_fashion/t10k-labels-idx1-ubyte.gz", kLabels);
  const Dataset d = load_fashion_mnist(dir.string(), false);
  CHECK(d.size() == 3);
  CHECK(d.num_classes == 10);
  REQUIRE(d.class_names.size() == 10);
  CHECK(d.class_names[0] == "T-shirt/top");
  CHECK(d.class_names[9] == "Ankle boot");

  const char* saved = std::getenv("WARPNET_FASHION_MNIST");
  const std::string restore = saved ? saved : "";
  setenv("WARPNET_FASHION_MNIST", dir.c_str(), 1);
  CHECK(fashion_mnist_dir() == dir.string());
  unsetenv("WARPNET_FASHION_MNIST");
  CHECK(fashion_mnist_dir() == "/usr/share/datasets/fashion-mnist");
  if (saved) setenv("WARPNET_FASHION_MNIST", restore.c_str(), 1);
}

TEST_CASE("idx: the real Fashion-MNIST test split, when installed") {
  const std::string dir = fashion_mnist_dir();
  if (!std::filesystem::exists(std::filesystem::path(dir) / "t10k-images-idx3-ubyte.gz")) {
    MESSAGE("skipped: no Fashion-MNIST in ", dir, " (sudo apt-get install dataset-fashion-mnist)");
    return;
  }
  const Dataset d = load_fashion_mnist(dir, false);
  REQUIRE(d.inputs.shape() == Shape{10000, 1, 28, 28});
  REQUIRE(d.labels.shape() == Shape{10000});
  std::array<int, 10> histogram{};
  const int32_t* labels = d.labels.data<int32_t>();
  for (int64_t i = 0; i < d.size(); ++i) ++histogram[labels[i]];
  for (int c = 0; c < 10; ++c) CHECK(histogram[c] == 1000);
  const float* x = d.inputs.data<float>();
  const auto [lo, hi] = std::minmax_element(x, x + d.inputs.numel());
  CHECK(*lo == 0.0f);
  CHECK(*hi == 1.0f);
}
