// Atomic operations on a peer's memory region: the operations, the element types, and a helper
// mapping C++ types to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

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

namespace detail {
template <class T>
inline constexpr bool unsupported_atomic_type = false;

template <class T>
constexpr atomic_type atomic_type_for() noexcept {
    if constexpr (std::is_same_v<T, std::int8_t>)
        return atomic_type::int8;
    else if constexpr (std::is_same_v<T, std::uint8_t>)
        return atomic_type::uint8;
    else if constexpr (std::is_same_v<T, std::int16_t>)
        return atomic_type::int16;
    else if constexpr (std::is_same_v<T, std::uint16_t>)
        return atomic_type::uint16;
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return atomic_type::int32;
    else if constexpr (std::is_same_v<T, std::uint32_t>)
        return atomic_type::uint32;
    else if constexpr (std::is_same_v<T, std::int64_t>)
        return atomic_type::int64;
    else if constexpr (std::is_same_v<T, std::uint64_t>)
        return atomic_type::uint64;
    else if constexpr (std::is_same_v<T, float>)
        return atomic_type::float32;
    else if constexpr (std::is_same_v<T, double>)
        return atomic_type::float64;
    else
        static_assert(unsupported_atomic_type<T>, "no UET atomic datatype for this C++ type");
}
}  // namespace detail

// atomic_type_of<T> for the supported C++ element types (a compile error for any other).
template <class T>
inline constexpr atomic_type atomic_type_of = detail::atomic_type_for<T>();

}  // namespace uet
