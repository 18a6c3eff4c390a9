// Errors of the public API: std::error_code values in the "uet" category, and result<T> for
// calls that make an object (a value or the error_code saying why not). Data-path calls return
// std::error_code and never throw.
#pragma once

#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

namespace uet {

enum class errc {
    again = 1,         // a queue is full for now: progress (read the CQ) and retry
    invalid_argument,  // a bad argument to the call
    message_too_long,  // above the endpoint's limit, or the target's receive buffer is smaller
    unknown_peer,      // not an entry of the address vector
    bad_memory_key,    // no memory region with this key (in this job)
    access_denied,     // the region does not allow this access
    out_of_bounds,     // outside the memory region
    truncated,         // receive: the message was longer than the buffer (nothing placed)
    job_mismatch,      // the target endpoint belongs to another job
    endpoint_closed,   // the endpoint is closed
    cq_full,           // the completion queue has no room for this operation's completion
    cq_overrun,        // completions were lost: the queue overflowed (remote write data)
    canceled,          // canceled (endpoint::cancel), or the endpoint closed before it completed
    retry_limit,       // the peer stopped acknowledging
    peer_unreachable,  // the peer never answered
    unsupported,       // operation, datatype or mode not supported
    no_match,          // the target had no receive for the message and no room to defer it
    remote_error,      // the target answered with another error (see completion::detail)
    no_message,        // probe: no message that arrived before its receive matches
    not_found,         // cancel: no operation of the endpoint has this context
    busy,              // cancel: the operation is under way and can no longer be canceled
};

const std::error_category& uet_category() noexcept;
std::error_code make_error_code(errc e) noexcept;

// A value, or the error that prevented it. value() on an error throws std::system_error (object
// set-up only; nothing on the data path returns a result).
template <class T>
class result {
  public:
    result(T value) : v_(std::move(value)) {}
    result(std::error_code ec) : v_(ec) {}
    result(errc e) : v_(make_error_code(e)) {}

    bool has_value() const noexcept { return v_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    std::error_code error() const noexcept {
        return has_value() ? std::error_code{} : std::get<1>(v_);
    }
    T& value() & {
        check();
        return std::get<0>(v_);
    }
    T&& value() && {
        check();
        return std::get<0>(std::move(v_));
    }
    T& operator*() & { return value(); }
    T* operator->() { return &value(); }

  private:
    void check() const {
        if (!has_value()) throw std::system_error(std::get<1>(v_));
    }
    std::variant<T, std::error_code> v_;
};

}  // namespace uet

template <>
struct std::is_error_code_enum<uet::errc> : std::true_type {};
