#include "cli/openblas_peer.hpp"

#include <dlfcn.h>

#include "core/error.hpp"

namespace warpnet::cli {
namespace {

#if WARPNET_HAS_OPENBLAS
// dlsym's pointer as the entry point's type; false when the symbol is missing.
template <class F>
bool find(void* library, const char* name, F& entry, std::string& why) {
  entry = reinterpret_cast<F>(dlsym(library, name));
  if (!entry) why = cat("OpenBLAS (", WARPNET_OPENBLAS_LIBRARY, ") has no ", name);
  return entry != nullptr;
}

const OpenBlas* open_once(std::string& why) {
  // The library CMake found (src/cli/CMakeLists.txt), else the runtime
  // package's name, which Debian's alternatives point at an OpenBLAS.
  void* library = dlopen(WARPNET_OPENBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = cat("cannot open OpenBLAS (", WARPNET_OPENBLAS_LIBRARY, " or libopenblas.so.0): ", dlerror());
    return nullptr;
  }
  static OpenBlas blas;
  if (!find(library, "cblas_sgemm", blas.sgemm, why) ||
      !find(library, "openblas_set_num_threads", blas.set_num_threads, why) ||
      !find(library, "openblas_get_corename", blas.corename, why) ||
      !find(library, "openblas_get_config", blas.config, why))
    return nullptr;
  return &blas;
}
#endif

}  // namespace

const OpenBlas* open_openblas(std::string& why) {
#if WARPNET_HAS_OPENBLAS
  static std::string reason;
  static const OpenBlas* blas = open_once(reason);
  why = reason;
  return blas;
#else
  why = "OpenBLAS not built in (pkg-config found no openblas when configuring)";
  return nullptr;
#endif
}

}  // namespace warpnet::cli
