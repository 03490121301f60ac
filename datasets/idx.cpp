// IDX files, the format of MNIST and Fashion-MNIST (yann.lecun.com/exdb/mnist):
//
//   00 00 <type> <ndims> | ndims big-endian u32 extents | the elements, C order
//
// Only type 0x08 (unsigned byte) occurs in the MNIST family. zlib's gz*
// functions read gzip-compressed and plain files alike, so the .gz files
// Debian installs and hand-decompressed copies both work.
//
// Extra bytes after the data the header announces are an error: the header's
// extents then do not describe the file. (Bytes after the end of a gzip stream
// are not seen: zlib ignores trailing garbage that is not another gzip member.)
#include "datasets/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "core/atomic_file.hpp"

namespace warpnet::data {

namespace {

// Nothing in the MNIST family comes close; more means a corrupt header.
constexpr uint64_t kMaxElements = uint64_t(1) << 31;

struct GzClose {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using GzFile = std::unique_ptr<gzFile_s, GzClose>;

// Reads up to n bytes and returns how many came (fewer only at the end of the
// data). A damaged or cut-off gzip stream throws with zlib's description.
// zlib inflates ahead into its own buffer, so a fault may surface before the
// bytes it damaged are asked for: the messages do not say where it was.
size_t gz_read(gzFile f, const std::string& path, void* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    // gzread takes an unsigned count: read in chunks well below its limit.
    const unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, size_t(1) << 30));
    const int got = gzread(f, static_cast<char*>(dst) + done, chunk);
    int err = Z_OK;
    std::string_view msg = gzerror(f, &err);
    // zlib prefixes its message with the path; the caller's message has it already.
    if (msg.starts_with(path + ": ")) msg.remove_prefix(path.size() + 2);
    if (err == Z_ERRNO) fail(path, ": read error: ", std::strerror(errno));
    // zlib reports a stream that ends early as Z_BUF_ERROR ("unexpected end of file").
    if (err == Z_BUF_ERROR) fail(path, ": truncated: the gzip stream ends early (zlib: ", msg, ")");
    if (err != Z_OK || got < 0) fail(path, ": corrupt gzip data (zlib: ", msg, ")");
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

const char* idx_type_name(uint8_t code) {
  switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
  }
  return "not an IDX type";
}

std::string hex_byte(uint8_t b) {
  constexpr char digits[] = "0123456789abcdef";
  return {digits[b >> 4], digits[b & 15]};
}

}  // namespace

Tensor read_idx(const std::string& path, int64_t max_items) {
  require_regular_file(path);
  GzFile f(gzopen(path.c_str(), "rb"));
  if (!f) fail(path, ": cannot open: ", errno ? std::strerror(errno) : "out of memory");

  uint8_t magic[4];
  const size_t got_magic = gz_read(f.get(), path, magic, 4);
  if (got_magic < 4) fail(path, ": not an IDX file (", got_magic, " bytes, too short for the 4-byte magic)");
  if (magic[0] != 0 || magic[1] != 0)
    fail(path, ": not an IDX file (magic ", hex_byte(magic[0]), " ", hex_byte(magic[1]), " ", hex_byte(magic[2]),
         " ", hex_byte(magic[3]), ", expected 00 00 08 <ndims>)");
  if (magic[2] != 0x08)
    fail(path, ": unsupported IDX type code 0x", hex_byte(magic[2]), " (", idx_type_name(magic[2]),
         "); only 0x08 (unsigned byte) is supported");
  const int ndims = magic[3];
  if (ndims == 0) fail(path, ": IDX header declares 0 dimensions");
  // (The format allows 255; the MNIST family uses 1 for labels and 3 for images.)
  if (ndims > 4) fail(path, ": IDX header declares ", ndims, " dimensions; warpnet reads 1 to 4 (labels 1, images 3)");

  uint8_t be[4 * 255];
  const size_t dim_bytes = 4 * static_cast<size_t>(ndims);
  const size_t got_dims = gz_read(f.get(), path, be, dim_bytes);
  if (got_dims < dim_bytes)
    fail(path, ": truncated header: ", ndims, " dimensions need ", dim_bytes, " bytes, got ", got_dims);
  std::vector<int64_t> dims(ndims);
  uint64_t elements = 1;
  for (int i = 0; i < ndims; ++i) {
    const uint8_t* p = be + 4 * i;
    dims[i] = (int64_t(p[0]) << 24) | (int64_t(p[1]) << 16) | (int64_t(p[2]) << 8) | int64_t(p[3]);
    if (dims[i] == 0) fail(path, ": dimension ", i, " of the IDX header is 0");
    // Stops at the first overflow of the limit, so the product never wraps.
    elements *= static_cast<uint64_t>(dims[i]);
    if (elements > kMaxElements)
      fail(path, ": IDX header dimensions ", Shape(std::vector<int64_t>(dims.begin(), dims.begin() + i + 1)),
           "... exceed 2^31 elements: a corrupt header");
  }

  const bool whole = max_items <= 0 || max_items >= dims[0];
  if (!whole) {
    elements = elements / static_cast<uint64_t>(dims[0]) * static_cast<uint64_t>(max_items);
    dims[0] = max_items;
  }
  const Shape shape(dims);
  // The MNIST family stores labels as 1-D files and images as 3-D ones.
  const std::string what = cat(ndims == 1 ? "labels " : "pixels ", shape);
  // Read in chunks before the tensor is made: a header that announces more
  // than the file holds (up to 2 GiB) then fails after reading what is
  // there, not after allocating what it announces.
  std::vector<uint8_t> data;
  constexpr size_t kChunk = size_t(1) << 24;
  while (data.size() < elements) {
    const size_t at = data.size(), want = std::min<uint64_t>(kChunk, elements - at);
    data.resize(at + want);
    const size_t got = gz_read(f.get(), path, data.data() + at, want);
    data.resize(at + got);
    if (got < want) break;
  }
  if (data.size() < elements) fail(path, ": truncated: expected ", elements, " bytes of ", what, ", got ", data.size());
  Tensor t = Tensor::empty(shape, DType::u8);
  std::memcpy(t.raw(), data.data(), elements);
  if (!whole) return t;  // the rest is not read, nor the gzip trailer's CRC
  // Reading one byte more also makes zlib check the gzip trailer's CRC.
  char extra;
  if (gz_read(f.get(), path, &extra, 1) != 0)
    fail(path, ": more data after the ", elements, " bytes of ", what, " the header announces (", ndims,
         " dimension", ndims == 1 ? "" : "s", "; a damaged header, or files joined?)");
  return t;
}

std::string fashion_mnist_dir() {
  const char* env = std::getenv("WARPNET_FASHION_MNIST");
  return env && *env ? env : kFashionMnistPackageDir;
}

Dataset load_idx_pair(const std::string& images_path, const std::string& labels_path, std::string name,
                      int num_classes, int64_t max_items) {
  WN_CHECK(num_classes > 0 && num_classes <= 256, "load_idx_pair: num_classes must be in [1,256], got ",
           num_classes);
  const Tensor images = read_idx(images_path, max_items);
  const Tensor labels = read_idx(labels_path, max_items);
  WN_CHECK(images.rank() == 3, images_path, ": images must be 3-D (N,H,W), got ", images.shape());
  WN_CHECK(labels.rank() == 1, labels_path, ": labels must be 1-D (N), got ", labels.shape());
  const int64_t n = images.dim(0);
  // Read up to max_items each: a count that reached it is a lower bound.
  const auto count = [&](const Tensor& t) {
    return max_items > 0 && t.dim(0) == max_items ? cat("at least ", t.dim(0)) : cat(t.dim(0));
  };
  WN_CHECK(labels.dim(0) == n, images_path, ": ", count(images), " images but ", count(labels), " labels in ",
           labels_path);

  Dataset d;
  d.name = std::move(name);
  d.source = images_path;
  d.num_classes = num_classes;
  d.labels = Tensor::empty({n}, DType::i32);
  const uint8_t* lab = labels.data<uint8_t>();
  int32_t* out_lab = d.labels.data<int32_t>();
  for (int64_t i = 0; i < n; ++i) {
    WN_CHECK(lab[i] < num_classes, labels_path, ": label ", int(lab[i]), " at index ", i, " is out of range [0,",
             num_classes, ")");
    out_lab[i] = lab[i];
  }
  // inputs: (N,1,H,W), one channel, bytes scaled to [0,1].
  d.inputs = Tensor::empty({n, 1, images.dim(1), images.dim(2)}, DType::f32);
  const uint8_t* pix = images.data<uint8_t>();
  float* out_pix = d.inputs.data<float>();
  for (int64_t i = 0; i < images.numel(); ++i) out_pix[i] = static_cast<float>(pix[i]) * (1.0f / 255.0f);
  return d;
}

Dataset load_fashion_mnist(const std::string& dir, bool train, int64_t max_items) {
  namespace fs = std::filesystem;
  // Debian ships the .gz files; an unpacked copy (same name without .gz) works too.
  auto locate = [&](const std::string& stem) {
    const fs::path gz = fs::path(dir) / (stem + ".gz");
    const fs::path raw = fs::path(dir) / stem;
    std::error_code ec;
    if (fs::exists(gz, ec)) return gz.string();
    if (ec) fail("Fashion-MNIST: cannot look for ", gz.string(), ": ", ec.message());
    if (fs::exists(raw, ec)) return raw.string();
    if (ec) fail("Fashion-MNIST: cannot look for ", raw.string(), ": ", ec.message());
    if (dir == kFashionMnistPackageDir)
      fail("Fashion-MNIST: ", gz.string(), " not found (nor ", raw.string(),
           "). Install it with `sudo apt-get install dataset-fashion-mnist` (or run scripts/setup.sh), "
           "or set WARPNET_FASHION_MNIST to a folder holding the IDX files");
    const char* env = std::getenv("WARPNET_FASHION_MNIST");
    fail("Fashion-MNIST: ", gz.string(), " not found (nor ", raw.string(), ") in the folder ",
         env && dir == env ? "$WARPNET_FASHION_MNIST" : "--data-dir",
         " names, which must hold the four IDX files (train-images-idx3-ubyte.gz and the others)");
  };
  // A folder the user named (--data-dir, or $WARPNET_FASHION_MNIST) that is
  // not there: say that, not "install the package", which is for the
  // package's own folder.
  std::error_code ec;
  const bool is_folder = fs::is_directory(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
    fail("Fashion-MNIST: cannot look at the folder ", dir, ": ", ec.message());
  if (!is_folder && dir != kFashionMnistPackageDir) {
    const char* env = std::getenv("WARPNET_FASHION_MNIST");
    const bool from_env = env && dir == env;
    fail("Fashion-MNIST: ", dir, fs::exists(dir, ec) ? " is not a folder" : ": no such folder", " (",
         from_env ? "$WARPNET_FASHION_MNIST" : "--data-dir",
         " names the folder holding the IDX files, train-images-idx3-ubyte.gz and the others)");
  }
  const std::string split = train ? "train" : "t10k";
  const std::string images = locate(split + "-images-idx3-ubyte");
  const std::string labels = locate(split + "-labels-idx1-ubyte");
  Dataset d = load_idx_pair(images, labels, train ? "fashion-mnist train" : "fashion-mnist test", 10, max_items);
  d.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return d;
}

}  // namespace warpnet::data
