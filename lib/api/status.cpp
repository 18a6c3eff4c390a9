// The "uet" error category, and how SES return codes from a target become errors here.
#include <string>

#include "api/api_impl.hpp"

namespace uet {

namespace {

class category final : public std::error_category {
  public:
    const char* name() const noexcept override { return "uet"; }
    std::string message(int value) const override {
        return std::string(detail::detail_of(static_cast<errc>(value)));
    }
};

}  // namespace

const std::error_category& uet_category() noexcept {
    static const category c;
    return c;
}

std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), uet_category()};
}

}  // namespace uet

namespace uet::detail {

std::string_view detail_of(errc e) noexcept {
    switch (e) {
        case errc::again:
            return "queue full: progress (read completions) and retry";
        case errc::invalid_argument:
            return "invalid argument";
        case errc::message_too_long:
            return "message too long for the endpoint or the receive buffer";
        case errc::unknown_peer:
            return "peer is not in the address vector";
        case errc::bad_memory_key:
            return "no memory region with this key in the job";
        case errc::access_denied:
            return "memory region does not grant this access";
        case errc::out_of_bounds:
            return "range is outside the memory region";
        case errc::truncated:
            return "message longer than the receive buffer: truncated";
        case errc::job_mismatch:
            return "target endpoint belongs to another job";
        case errc::endpoint_closed:
            return "endpoint is closed";
        case errc::cq_full:
            return "completion queue full: read completions and retry";
        case errc::cq_overrun:
            return "completion queue overrun: completions were lost";
        case errc::canceled:
            return "operation canceled";
        case errc::retry_limit:
            return "peer stopped acknowledging (retry limit)";
        case errc::peer_unreachable:
            return "peer unreachable";
        case errc::unsupported:
            return "operation or datatype not supported";
        case errc::no_match:
            return "target had no matching receive and no room to defer";
        case errc::remote_error:
            return "target reported an error";
        case errc::no_message:
            return "no unexpected message matches";
        case errc::not_found:
            return "no operation with this context";
        case errc::busy:
            return "operation under way: it can no longer be canceled";
    }
    return "unknown uet error";
}

errc errc_of(wire::ses_return_code rc) noexcept {
    using wire::ses_return_code;
    switch (rc) {
        case ses_return_code::bad_mkey:
            return errc::bad_memory_key;
        case ses_return_code::perm_violation:
        case ses_return_code::at_perm:
            return errc::access_denied;
        case ses_return_code::bad_addr:
        case ses_return_code::at_out_of_range:
            return errc::out_of_bounds;
        case ses_return_code::bad_job_id:
            return errc::job_mismatch;
        case ses_return_code::too_long:
            return errc::message_too_long;
        case ses_return_code::no_match:
        case ses_return_code::dropped:
            return errc::no_match;
        case ses_return_code::cancelled:
            return errc::canceled;
        case ses_return_code::unsupported_op:
        case ses_return_code::unsupported_size:
        case ses_return_code::amo_unsupported_op:
        case ses_return_code::amo_unsupported_dt:
        case ses_return_code::amo_unsupported_size:
            return errc::unsupported;
        default:
            return errc::remote_error;
    }
}

std::string_view detail_of(wire::ses_return_code rc) noexcept {
    using wire::ses_return_code;
    switch (rc) {
        case ses_return_code::bad_mkey:
            return "target answered BAD_MKEY: no region with this key in the job";
        case ses_return_code::perm_violation:
            return "target answered PERM_VIOLATION: region lacks the access flag";
        case ses_return_code::bad_addr:
            return "target answered BAD_ADDR: range outside the region";
        case ses_return_code::bad_job_id:
            return "target answered BAD_JOB_ID: it belongs to another job";
        case ses_return_code::too_long:
            return "target answered TOO_LONG: its receive buffer is smaller";
        case ses_return_code::dropped:
            return "target answered DROPPED: no receive and no room to defer";
        case ses_return_code::cancelled:
            return "target answered CANCELLED";
        case ses_return_code::amo_unsupported_op:
            return "target answered AMO_UNSUPPORTED_OP";
        case ses_return_code::amo_unsupported_dt:
            return "target answered AMO_UNSUPPORTED_DT";
        case ses_return_code::amo_unsupported_size:
            return "target answered AMO_UNSUPPORTED_SIZE";
        case ses_return_code::unsupported_op:
            return "target answered UNSUPPORTED_OP";
        default:
            return "target answered an error";
    }
}

}  // namespace uet::detail
