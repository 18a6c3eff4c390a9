// Atomic arithmetic at the target: one request applied element by element to the region. Integers
// compute in their unsigned type so that sums wrap instead of overflowing; bitwise operations on
// floating-point types are refused (AMO_UNSUPPORTED_OP). Elements are loaded and stored with
// memcpy, so any alignment works; a single progress thread makes each request atomic with
// respect to every other request.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "api/api_impl.hpp"

namespace uet::detail {

namespace {

using wire::ses_atomic_datatype;
using wire::ses_atomic_opcode;
using wire::ses_return_code;

template <class T>
T load(const std::uint8_t* p) noexcept {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T>
void store(std::uint8_t* p, T v) noexcept {
    std::memcpy(p, &v, sizeof v);
}

template <class T>
bool combine(ses_atomic_opcode op, T cur, T arg, T& out) noexcept {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        const U a = static_cast<U>(cur), b = static_cast<U>(arg);
        switch (op) {
            case ses_atomic_opcode::sum:
                out = static_cast<T>(static_cast<U>(a + b));
                return true;
            case ses_atomic_opcode::band:
                out = static_cast<T>(a & b);
                return true;
            case ses_atomic_opcode::bor:
                out = static_cast<T>(a | b);
                return true;
            case ses_atomic_opcode::bxor:
                out = static_cast<T>(a ^ b);
                return true;
            default:
                break;
        }
    } else if (op == ses_atomic_opcode::sum) {
        out = cur + arg;
        return true;
    }
    switch (op) {
        case ses_atomic_opcode::min:
            out = std::min(cur, arg);
            return true;
        case ses_atomic_opcode::max:
            out = std::max(cur, arg);
            return true;
        case ses_atomic_opcode::write:
            out = arg;
            return true;
        case ses_atomic_opcode::read:
            out = cur;
            return true;
        default:
            return false;
    }
}

template <class T>
ses_return_code apply_typed(ses_atomic_opcode op, const std::uint8_t* compare, std::uint8_t* target,
                            std::span<const std::uint8_t> operand, std::uint8_t* fetched) noexcept {
    if (op == ses_atomic_opcode::cswap) {
        const T cur = load<T>(target);
        if (fetched) store(fetched, cur);
        if (cur == load<T>(compare)) store(target, load<T>(operand.data()));
        return ses_return_code::ok;
    }
    T probe{};
    if (!combine<T>(op, T{}, T{}, probe)) return ses_return_code::amo_unsupported_op;
    for (std::size_t i = 0; i + sizeof(T) <= operand.size(); i += sizeof(T)) {
        const T cur = load<T>(target + i);
        if (fetched) store(fetched + i, cur);
        T next{};
        combine<T>(op, cur, load<T>(operand.data() + i), next);
        store(target + i, next);
    }
    return ses_return_code::ok;
}

}  // namespace

wire::ses_return_code apply_atomic(const wire::ses_atomic_extension& ext,
                                   const std::uint8_t* compare, std::uint8_t* target,
                                   std::span<const std::uint8_t> operand,
                                   std::uint8_t* fetched) noexcept {
    const auto op = ext.atomic_opcode;
    switch (ext.atomic_datatype) {
        case ses_atomic_datatype::int8:
            return apply_typed<std::int8_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::uint8:
            return apply_typed<std::uint8_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::int16:
            return apply_typed<std::int16_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::uint16:
            return apply_typed<std::uint16_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::int32:
            return apply_typed<std::int32_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::uint32:
            return apply_typed<std::uint32_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::int64:
            return apply_typed<std::int64_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::uint64:
            return apply_typed<std::uint64_t>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::float_:
            return apply_typed<float>(op, compare, target, operand, fetched);
        case ses_atomic_datatype::double_:
            return apply_typed<double>(op, compare, target, operand, fetched);
        default:
            return ses_return_code::amo_unsupported_dt;
    }
}

bool to_wire(atomic_op op, atomic_type type, wire::ses_atomic_extension& out) noexcept {
    static constexpr ses_atomic_opcode ops[] = {ses_atomic_opcode::min,   ses_atomic_opcode::max,
                                                ses_atomic_opcode::sum,   ses_atomic_opcode::band,
                                                ses_atomic_opcode::bor,   ses_atomic_opcode::bxor,
                                                ses_atomic_opcode::write, ses_atomic_opcode::read};
    static constexpr ses_atomic_datatype types[] = {
        ses_atomic_datatype::int8,   ses_atomic_datatype::uint8,  ses_atomic_datatype::int16,
        ses_atomic_datatype::uint16, ses_atomic_datatype::int32,  ses_atomic_datatype::uint32,
        ses_atomic_datatype::int64,  ses_atomic_datatype::uint64, ses_atomic_datatype::float_,
        ses_atomic_datatype::double_};
    const auto o = static_cast<std::size_t>(op), t = static_cast<std::size_t>(type);
    if (o >= std::size(ops) || t >= std::size(types)) return false;
    out.atomic_opcode = ops[o];
    out.atomic_datatype = types[t];
    return true;
}

}  // namespace uet::detail
