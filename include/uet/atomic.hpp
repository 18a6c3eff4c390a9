// Atomic operations on a peer's memory region: the operations, the element types, and a helper
// mapping C++ types to them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet {

enum class atomic_op : std::uint8_t {
    min,   // target = min(target, operand)
    max,   // target = max(target, operand)
    sum,   // target = target + operand (integers wrap)
    band,  // bitwise and (integers only)
    bor,   // bitwise or (integers only)
    bxor,  // bitwise xor (integers only)
    swap,  // target = operand (fetching: returns the old value)
    read,  // fetching only: returns target, leaves it alone
};

enum class atomic_type : std::uint8_t {
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    float32,
    float64,
};

constexpr std::size_t size_of(atomic_type t) noexcept {
    switch (t) {
        case atomic_type::int8:
        case atomic_type::uint8:
            return 1;
        case atomic_type::int16:
        case atomic_type::uint16:
            return 2;
        case atomic_type::int32:
        case atomic_type::uint32:
        case atomic_type::float32:
            return 4;
        default:
            return 8;
    }
}

constexpr bool is_floating(atomic_type t) noexcept {
    return t == atomic_type::float32 || t == atomic_type::float64;
}

// atomic_type_of<T> for the supported C++ element types.
template <class T>
struct atomic_type_for;
template <>
struct atomic_type_for<std::int8_t> {
    static constexpr atomic_type value = atomic_type::int8;
};
template <>
struct atomic_type_for<std::uint8_t> {
    static constexpr atomic_type value = atomic_type::uint8;
};
template <>
struct atomic_type_for<std::int16_t> {
    static constexpr atomic_type value = atomic_type::int16;
};
template <>
struct atomic_type_for<std::uint16_t> {
    static constexpr atomic_type value = atomic_type::uint16;
};
template <>
struct atomic_type_for<std::int32_t> {
    static constexpr atomic_type value = atomic_type::int32;
};
template <>
struct atomic_type_for<std::uint32_t> {
    static constexpr atomic_type value = atomic_type::uint32;
};
template <>
struct atomic_type_for<std::int64_t> {
    static constexpr atomic_type value = atomic_type::int64;
};
template <>
struct atomic_type_for<std::uint64_t> {
    static constexpr atomic_type value = atomic_type::uint64;
};
template <>
struct atomic_type_for<float> {
    static constexpr atomic_type value = atomic_type::float32;
};
template <>
struct atomic_type_for<double> {
    static constexpr atomic_type value = atomic_type::float64;
};
template <class T>
inline constexpr atomic_type atomic_type_of = atomic_type_for<T>::value;

}  // namespace uet
