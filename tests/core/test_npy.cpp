// .npy: round trips, byte-for-byte agreement with NumPy, and every error.
#include <doctest/doctest.h>

#include <cstring>

#include "core/atomic_file.hpp"
#include "core/npy.hpp"
#include "tests/test_support.hpp"

using namespace warpnet;
using warpnet::test::error_of;
using warpnet::test::scratch_dir;

namespace {

std::string path_of(const std::string& name) { return (scratch_dir() / name).string(); }

// A version 1.0 file around `dict`, unpadded: the reader must not rely on alignment.
std::string npy_v1(const std::string& dict, const std::string& payload) {
  const size_t len = dict.size() + 1;
  return std::string("\x93NUMPY\x01\x00", 8) + char(len & 0xff) + char(len >> 8) + dict + "\n" + payload;
}

// np.save('a.npy', np.arange(6, dtype='<f4').reshape(2, 3)), byte for byte:
// the dict, NumPy's 20 spare spaces for the growth axis plus padding to 128
// bytes (58 spaces in all), '\n', then 0.0f..5.0f little-endian.
const std::string kNumpyDict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
const std::string kArange6 = std::string(
    "\x00\x00\x00\x00"
    "\x00\x00\x80\x3f"
    "\x00\x00\x00\x40"
    "\x00\x00\x40\x40"
    "\x00\x00\x80\x40"
    "\x00\x00\xa0\x40",
    24);
const std::string kNumpyArange = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + kNumpyDict + std::string(58, ' ') +
                                 "\n" + kArange6;

void check_arange6(const Tensor& t) {
  REQUIRE(t.dtype() == DType::f32);
  REQUIRE(t.shape() == Shape{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(t.item(i) == i);
}

}  // namespace

TEST_CASE("npy round trip: every dtype, shapes (), (5,) and (2,3,4)") {
  for (DType dtype : {DType::f32, DType::f64, DType::i32, DType::i64, DType::u8}) {
    for (const Shape& shape : {Shape{}, Shape{5}, Shape{2, 3, 4}}) {
      CAPTURE(name_of(dtype));
      CAPTURE(shape.str());
      Tensor t = Tensor::empty(shape, dtype);
      // Distinct values with negatives and fractions where the dtype holds them.
      const bool is_float = dtype == DType::f32 || dtype == DType::f64;
      for (int64_t i = 0; i < t.numel(); ++i)
        t.set(i, dtype == DType::u8 ? double(i * 11 % 256) : double(i) * (is_float ? 1.25 : 3) - 7);
      const std::string path = path_of(cat("round_", name_of(dtype), "_", shape.rank(), ".npy"));
      write_npy(path, t);

      // The data starts on a 64-byte boundary, right after the header's '\n'.
      const std::string bytes = read_file(path);
      const size_t data_at = bytes.size() - static_cast<size_t>(t.nbytes());
      CHECK(data_at % 64 == 0);
      CHECK(bytes[data_at - 1] == '\n');

      const Tensor back = read_npy(path);
      CHECK(back.dtype() == dtype);
      CHECK(back.shape() == shape);
      CHECK(std::memcmp(back.raw(), t.raw(), static_cast<size_t>(t.nbytes())) == 0);
    }
  }
}

TEST_CASE("npy reads NumPy's bytes and writes the same bytes") {
  const std::string path = path_of("numpy_arange.npy");
  write_file_atomically(path, kNumpyArange);
  check_arange6(read_npy(path));

  const std::string ours = path_of("ours_arange.npy");
  write_npy(ours, Tensor::from<float>({2, 3}, {0, 1, 2, 3, 4, 5}));
  CHECK(read_file(ours) == kNumpyArange);
}

TEST_CASE("npy writes a strided view in C order") {
  // (3,2) transposed view of (2,3): row-major walk is 0 3 1 4 2 5.
  const Tensor t = Tensor::from<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5}).transpose(0, 1);
  const std::string path = path_of("transposed.npy");
  write_npy(path, t);
  const Tensor back = read_npy(path);
  REQUIRE(back.shape() == Shape{3, 2});
  const std::vector<double> expect{0, 3, 1, 4, 2, 5};
  for (int i = 0; i < 6; ++i) CHECK(back.item(i) == expect[i]);
}

TEST_CASE("npy reads a Fortran-order array into C order") {
  // np.save('f.npy', np.asfortranarray(np.arange(24, dtype='<i4').reshape(2, 3, 4))) writes the
  // (2,3,4) array with the first index fastest: element (i,j,k) at i + 2j + 6k.
  std::vector<int32_t> stored(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) stored[size_t(i + 2 * j + 6 * k)] = 12 * i + 4 * j + k;
  std::string payload(24 * sizeof(int32_t), '\0');
  std::memcpy(payload.data(), stored.data(), payload.size());
  const std::string path = path_of("fortran.npy");
  write_file_atomically(path, npy_v1("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", payload));
  const Tensor t = read_npy(path);
  REQUIRE(t.shape() == Shape{2, 3, 4});
  CHECK(t.is_contiguous());
  for (int n = 0; n < 24; ++n) CHECK(t.item(n) == n);  // C order: arange(24)

  // A 1-D Fortran-order array is its C-order self.
  write_file_atomically(path, npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", kArange6));
  const Tensor v = read_npy(path);
  REQUIRE(v.shape() == Shape{6});
  for (int n = 0; n < 6; ++n) CHECK(v.item(n) == n);
}

TEST_CASE("npy reads format 2.0, '<u1', double quotes and any key order") {
  // Version 2.0: a 4-byte header length; 12 + 116 = 128 bytes before the data.
  const std::string dict = kNumpyDict + std::string(20, ' ');
  const std::string v2 = std::string("\x93NUMPY\x02\x00\x74\x00\x00\x00", 12) + dict +
                         std::string(116 - dict.size() - 1, ' ') + "\n" + kArange6;
  const std::string path = path_of("v2.npy");
  write_file_atomically(path, v2);
  check_arange6(read_npy(path));

  write_file_atomically(path, npy_v1(R"({"shape":(3,),"fortran_order":False,"descr":"<u1"})", "\x07\x08\x09"));
  const Tensor u = read_npy(path);
  CHECK(u.dtype() == DType::u8);
  CHECK(u.shape() == Shape{3});
  CHECK(u.item(2) == 9);
}

TEST_CASE("npy errors name the file and the fault") {
  const std::string path = path_of("bad.npy");
  auto read_bytes = [&](const std::string& bytes) {
    write_file_atomically(path, bytes);
    return error_of([&] { read_npy(path); });
  };
  CHECK(read_bytes("P5\n28 28\n255\n") == path + ": not a .npy file (bad magic)");
  CHECK(read_bytes("") == path + ": the file is empty (0 bytes), not a .npy file");
  CHECK(read_bytes("\x93NUM") == path + ": truncated: the file ends inside the magic string");
  CHECK(read_bytes("\x93NUMPY\x01") == path + ": truncated: the file ends inside the magic string");
  CHECK(read_bytes(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", kArange6)) ==
        path + ": dtype '>f4' is not supported (use <f4, <f8, <i4, <i8 or |u1)");
  CHECK(read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", std::string(20, '\0'))) ==
        path + ": truncated: header says (3,4) f4 = 48 bytes, file has 20");
  CHECK(read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", kArange6)) ==
        path + ": trailing data: header says (5) f4 = 20 bytes, file has 24");
  CHECK(read_bytes(std::string("\x93NUMPY\x03\x00\x00\x00\x00\x00", 12)) ==
        path + ": .npy format version 3.0 is not supported (1.0 or 2.0)");
  CHECK(read_bytes(std::string("\x93NUMPY\x01\x00\x50\x00{'descr'", 19)) ==
        path + ": truncated: the header is 80 bytes, the file has 9 after the prefix");

  const std::string no_shape = read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False}", ""));
  CHECK(no_shape.find(path + ": malformed header (no 'shape' key)") == 0);
  CHECK(no_shape.ends_with("'fortran_order': False}"));  // the header shown without its padding
  const std::string negative = read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", ""));
  CHECK(negative.find(path + ": malformed header (expected a non-negative integer") == 0);
  // Python's (5) is a number, which NumPy refuses as a shape; and past NumPy's 32 dimensions no NumPy reads the file.
  CHECK(read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }", std::string(20, '\0')))
            .starts_with(path + ": malformed header (the shape (5) is a number, not a tuple: write (5,))"));
  std::string ones = "1";
  for (int i = 1; i < 33; ++i) ones += ", 1";
  CHECK(read_bytes(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (" + ones + "), }", std::string(4, '\0')))
            .starts_with(path + ": malformed header (a shape of 33 dimensions, past NumPy's 32)"));
  // Extents whose product passes int64 with a zero among them, in either order (NumPy refuses them too).
  for (const char* order : {"False", "True"})
    CHECK(read_bytes(npy_v1(cat("{'descr': '<f4', 'fortran_order': ", order,
                                ", 'shape': (0, 9223372036854775807, 9223372036854775807), }"),
                            "")) == path + ": shape (0,9223372036854775807,9223372036854775807) is too large");

  const std::string missing = path_of("no_such_file.npy");
  const std::string msg = error_of([&] { read_npy(missing); });
  CHECK(msg.find(missing) == 0);
  CHECK(msg.find("cannot open") != std::string::npos);
  CHECK(error_of([&] { read_npy(scratch_dir().string()); }) == scratch_dir().string() + ": is a directory, not a file");
}
