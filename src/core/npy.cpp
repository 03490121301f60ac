// .npy files as NumPy writes them (numpy/lib/format.py):
//
//   "\x93NUMPY" major minor | header length (u16 LE for v1.0, u32 LE for v2.0)
//   | header: a Python dict literal, space-padded and '\n'-terminated so the data
//     starts at a multiple of 64 bytes
//   | the raw elements, little-endian, C order (or Fortran order, which the
//     reader turns into C order)
//
// e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
//
// write_npy produces the same bytes np.save does for the dtypes warpnet has,
// including NumPy's quirks (the spare spaces after the dict, and a whole extra
// 64 bytes of padding when the header would already end on a boundary), so
// files compare equal byte for byte with NumPy's.
#include "core/npy.hpp"

#include <bit>
#include <cctype>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/atomic_file.hpp"

namespace warpnet {

// The data is copied to and from memory unchanged, which is only right on a
// little-endian host (x86-64 and AArch64 Linux are).
static_assert(std::endian::native == std::endian::little, "npy I/O assumes a little-endian host");

namespace {

constexpr std::string_view kMagic = kNpyFile.magic;
constexpr size_t kAlign = 64;
// NumPy leaves room for the growth axis to reach 21 digits, so that appending
// rows can rewrite the header in place.
constexpr size_t kGrowthAxisMaxDigits = 21;

struct DTypeName {
  std::string_view descr;
  DType dtype;
};
// What write_npy emits; '<u1' is read too because some writers use it for bytes.
constexpr DTypeName kDescrs[] = {
    {"<f4", DType::f32}, {"<f8", DType::f64}, {"<i4", DType::i32},
    {"<i8", DType::i64}, {"|u1", DType::u8},  {"<u1", DType::u8},
};

std::string_view descr_of(DType dtype) {
  for (const DTypeName& d : kDescrs)
    if (d.dtype == dtype) return d.descr;
  fail("npy: no descr for dtype ", name_of(dtype));
}

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// A reader for the one dict literal NumPy writes: string keys; a string, a
// bool or a tuple of non-negative ints as values; any spacing; trailing commas.
class HeaderParser {
 public:
  HeaderParser(const std::string& path, std::string_view text) : path_(path), text_(text) {}

  Header parse() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        h.descr = string_literal();
        seen_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = bool_literal();
        seen_order = true;
      } else if (key == "shape") {
        h.shape = int_tuple();
        seen_shape = true;
      } else {
        bad(cat("unexpected key '", key, "'"));
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    skip_space();
    if (pos_ != text_.size()) bad("text after the closing '}'");
    if (!seen_descr) bad("no 'descr' key");
    if (!seen_order) bad("no 'fortran_order' key");
    if (!seen_shape) bad("no 'shape' key");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    // The header as written, without the spaces and newline that pad it to 64 bytes.
    std::string_view shown = text_.substr(0, 120);
    while (!shown.empty() && std::isspace(static_cast<unsigned char>(shown.back()))) shown.remove_suffix(1);
    fail(path_, ": malformed header (", what, "): ", shown);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) bad(cat("expected '", c, "' at offset ", pos_));
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      bad(cat("expected a quoted string at offset ", pos_));
    const char quote = text_[pos_++];
    const size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) bad("unterminated string");
    std::string s(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }
  bool bool_literal() {
    skip_space();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad(cat("expected True or False at offset ", pos_));
  }
  std::vector<int64_t> int_tuple() {
    std::vector<int64_t> dims;
    bool comma = false;
    expect('(');
    while (!peek(')')) {
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
        bad(cat("expected a non-negative integer in the shape at offset ", pos_));
      int64_t v = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v))
          bad("a shape extent does not fit in 64 bits");
        ++pos_;
      }
      dims.push_back(v);
      if (!peek(')')) {
        expect(',');
        comma = true;
      }
    }
    expect(')');
    // (5) is the number 5 in Python, which NumPy refuses as a shape.
    if (dims.size() == 1 && !comma) bad(cat("the shape (", dims[0], ") is a number, not a tuple: write (", dims[0], ",)"));
    // NumPy 1's NPY_MAXDIMS (NumPy 2 reads up to 64): a file past it no NumPy reads.
    if (dims.size() > kMostDims) bad(cat("a shape of ", dims.size(), " dimensions, past NumPy's ", kMostDims));
    return dims;
  }

  static constexpr size_t kMostDims = 32;
  const std::string& path_;
  std::string_view text_;
  size_t pos_ = 0;
};

uint32_t read_le(std::string_view bytes, size_t offset, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= uint32_t(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
  return v;
}

// Python's repr of a shape tuple: (), (5,), (2, 3, 4).
std::string python_tuple(const Shape& shape) {
  std::string s = "(";
  for (int i = 0; i < shape.rank(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + (shape.rank() == 1 ? ",)" : ")");
}

}  // namespace

Tensor read_npy(const std::string& path) {
  const std::string file = read_file(path, kMagic);
  const std::string_view bytes = file;
  if (bytes.empty()) fail(path, ": the file is empty (0 bytes), not a .npy file");
  // A file shorter than the magic string that begins as it does is cut short, not another format.
  if (bytes.substr(0, kMagic.size()) != kMagic.substr(0, bytes.size())) fail(path, ": not a .npy file (bad magic)");
  if (bytes.size() < kMagic.size() + 2) fail(path, ": truncated: the file ends inside the magic string");
  const int major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  // 2.0 only widens the header length to 32 bits; 3.0 (UTF-8 field names) is
  // only written for structured dtypes, which warpnet has no use for.
  if ((major != 1 && major != 2) || minor != 0)
    fail(path, ": .npy format version ", major, ".", minor, " is not supported (1.0 or 2.0)");
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t prefix = kMagic.size() + 2 + len_width;
  if (bytes.size() < prefix) fail(path, ": truncated: the file ends inside the header length");
  const size_t header_len = read_le(bytes, prefix - len_width, len_width);
  if (bytes.size() < prefix + header_len)
    fail(path, ": truncated: the header is ", header_len, " bytes, the file has ", bytes.size() - prefix,
         " after the prefix");

  const Header h = HeaderParser(path, bytes.substr(prefix, header_len)).parse();
  std::optional<DType> dtype;
  for (const DTypeName& d : kDescrs)
    if (d.descr == h.descr) dtype = d.dtype;
  if (!dtype) fail(path, ": dtype '", h.descr, "' is not supported (use <f4, <f8, <i4, <i8 or |u1)");

  const Shape shape(h.shape);
  // The extents' product past int64 is refused whatever their order, and
  // even with a zero among them (NumPy's rule too): once read, (0, 2^62, 4)
  // in Fortran order is reversed, and its product would overflow there, in
  // an error that names no file.
  int64_t expected = static_cast<int64_t>(size_of(*dtype));
  bool empty = false;
  for (int64_t d : h.shape) {
    empty = empty || d == 0;
    if (d != 0 && __builtin_mul_overflow(expected, d, &expected)) fail(path, ": shape ", shape, " is too large");
  }
  if (empty) expected = 0;
  const size_t data_offset = prefix + header_len;
  const int64_t have = static_cast<int64_t>(bytes.size() - data_offset);
  // "(3,4) f4 = 48 bytes": the descr without its byte-order character.
  const std::string what = cat(shape, " ", h.descr.substr(1), " = ", expected, " bytes");
  if (have < expected) fail(path, ": truncated: header says ", what, ", file has ", have);
  // np.load would ignore extra bytes; here they mean the header and the data
  // disagree, so the file is not what its header claims.
  if (have > expected) fail(path, ": trailing data: header says ", what, ", file has ", have);

  // Fortran order (what np.save writes for a transposed array, for one): the
  // first index runs fastest, so the bytes are the C-order array of the
  // reversed shape; reversing its axes back gives the array, copied to C order.
  const std::vector<int64_t> stored_shape =
      h.fortran_order ? std::vector<int64_t>(h.shape.rbegin(), h.shape.rend()) : h.shape;
  Tensor t = Tensor::empty(Shape(stored_shape), *dtype);
  std::memcpy(t.raw(), bytes.data() + data_offset, static_cast<size_t>(expected));
  if (!h.fortran_order) return t;
  const int rank = static_cast<int>(stored_shape.size());
  for (int i = 0; i < rank / 2; ++i) t = t.transpose(i, rank - 1 - i);
  return t.clone();
}

void write_npy(const std::string& path, const Tensor& tensor) {
  WN_CHECK(tensor.defined(), path, ": write_npy: the tensor is undefined");
  WN_CHECK(tensor.device() == Device::cpu, path, ": write_npy: needs a cpu tensor, got ", name_of(tensor.device()));
  const Tensor t = tensor.contiguous();
  std::string dict = cat("{'descr': '", descr_of(t.dtype()), "', 'fortran_order': False, 'shape': ",
                         python_tuple(t.shape()), ", }");
  if (t.rank() > 0) dict.append(kGrowthAxisMaxDigits - std::to_string(t.dim(0)).size(), ' ');
  // NumPy's padding rule, kept exactly: when the header already ends on a
  // boundary it still adds a full 64 spaces.
  const size_t prefix = kMagic.size() + 2 + 2;
  const size_t padded = dict.size() + 1 + kAlign - (prefix + dict.size() + 1) % kAlign;
  WN_CHECK(padded <= 0xffff, path, ": write_npy: a ", t.rank(), "-D header does not fit format 1.0");

  std::string header;
  header.reserve(prefix + padded);
  header += kMagic;
  header += '\x01';
  header += '\x00';
  header += static_cast<char>(padded & 0xff);
  header += static_cast<char>(padded >> 8);
  header += dict;
  header.append(padded - dict.size() - 1, ' ');
  header += '\n';
  // The data straight from the tensor: a joined copy doubled a large array's memory.
  write_file_atomically(path, {header, std::string_view(static_cast<const char*>(t.raw()), size_t(t.nbytes()))});
}

}  // namespace warpnet
