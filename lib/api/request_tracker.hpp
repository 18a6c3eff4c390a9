// The endpoint's own requests once posted: their PDS completions, their answers, and the end of
// the operations they belong to (requests.cpp; the per-message ends in requests_inline.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/engine.hpp"
#include "uet/uet.hpp"

namespace uet::detail {

struct endpoint_impl;

// The error of an operation whose message the PDS gave up on.
inline errc failure_errc(const status& s) noexcept {
    return s.code == status_code::peer_unreachable ? errc::peer_unreachable : errc::retry_limit;
}

class request_tracker {
  public:
    explicit request_tracker(std::uint32_t max_peers) : answered_at_(max_peers) {}

    // Inline in process(), their one caller: once per sent message.
    void on_send_completion(endpoint_impl& ep, const send_completion& c);
    void on_send_message_done(endpoint_impl& ep,
                              const send_completion& c);  // op_context
    void on_record_done(endpoint_impl& ep, std::uint32_t rec, const send_completion& c);
    void finish_record(endpoint_impl& ep, std::uint32_t rec);
    std::optional<std::uint32_t> record_answered_by(endpoint_impl& ep,
                                                    const received_message& response);
    std::optional<std::uint32_t> record_of_send(endpoint_impl& ep, std::uint64_t context,
                                                const received_message& response);
    // The promised record of send index's message, taken now.
    std::uint32_t record_for_op(endpoint_impl& ep, std::uint32_t index) noexcept;
    void on_response(endpoint_impl& ep, received_message& m);
    // The PDS gave up on an engine peer: nothing it still owes us (responses, RTRs) will come.
    void fail_peer(endpoint_impl& ep, std::uint32_t engine_peer, errc e);
    // Fails operations whose acknowledged requests were not answered by answer_by and whose
    // peer has answered none of ours (a response message) for an answer timeout.
    void expire_answers(endpoint_impl& ep, std::uint64_t now);
    // expire_answers() when its time has come (process()).
    void due_scan(endpoint_impl& ep, std::uint64_t now);

  private:
    std::uint64_t next_answer_scan_ = 0;
    // When each engine peer last answered a request of ours. A target answers requests in the
    // order they came, so one queued behind a long read's answers waits, it is not lost: an
    // answer is overdue only once its peer has answered nothing for a whole answer timeout.
    std::vector<std::uint64_t> answered_at_;
};

}  // namespace uet::detail
