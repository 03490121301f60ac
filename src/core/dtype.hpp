// DType: the element types a Tensor can hold on the host.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace warpnet {

// f64 exists so gradients can be checked by finite differences in double;
// i32 holds labels and argmax indices; u8 holds raw image bytes.
enum class DType : uint8_t { f32, f64, i32, i64, u8 };

constexpr size_t size_of(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: return 1;
  }
  return 0;
}

constexpr std::string_view name_of(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::u8: return "u8";
  }
  return "?";
}

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::i64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::u8; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

// Where a tensor's bytes live. Only cpu storage exists in the foundation;
// emu and cuda are the backends the kernel issues add.
enum class Device : uint8_t { cpu, emu, cuda };

constexpr std::string_view name_of(Device d) {
  switch (d) {
    case Device::cpu: return "cpu";
    case Device::emu: return "emu";
    case Device::cuda: return "cuda";
  }
  return "?";
}

}  // namespace warpnet
