#include "simt/minifloat.hpp"

namespace warpnet::simt {

uint32_t encode(const Minifloat& f, double value, bool saturate) {
  return numeric::encode(f, value, numeric::Rounding{},
                         saturate ? numeric::Saturation::finite : numeric::Saturation::none);
}

}  // namespace warpnet::simt
