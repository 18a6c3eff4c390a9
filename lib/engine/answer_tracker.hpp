// Answers in ACKs (answer_tracker.cpp says how they work): on the target, the answers owed on
// each PDC, the ones its ACKs announced as messages, and the error answers held on a PDC not yet
// validated; on the initiator, what the ACK being processed says and the requests waiting,
// acknowledged, for the answers announced. The bodies inlined into the receive path are in
// answer_tracker_inline.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/flat_map.hpp"
#include "engine/engine.hpp"
#include "engine/pdc_table.hpp"
#include "pds/pdc.hpp"
#include "ses/message.hpp"
#include "wire/uet_packet.hpp"

namespace uet {

class engine_impl;
class message_pool;

class answer_tracker {
  public:
    answer_tracker(const engine_config& cfg, const pds::pdc_params& params);

    // ---- target ----
    // A request delivered on p is owed an answer; its token for post_response (0 when
    // answers_in_acks is off or the request is a response).
    std::uint64_t owe(pds::pdc& p);
    // Room to announce owed answers (announced_ below): without it, requests wait.
    bool owed_room() const noexcept {
        return !answers_in_acks_ || announced_.size() < max_pending_messages_;
    }
    // Held answers. A target PDC opened by a SYN packet may come from a forged source address:
    // until a packet without SYN shows that its initiator received our ACK (pdc::validated), an
    // error answer to one of its requests waits on the PDC (linked through tx_message::next)
    // rather than going to whoever the address names; a PDC freed unvalidated drops them
    // (unvalidated_reply). Bounded per PDC and in all, so that forged requests cannot fill the
    // message pool.
    static std::uint32_t origin_of(const pds::pdc& p) noexcept {
        return (std::uint32_t{p.local_id} << 16) | (p.index + 1);
    }
    pds::pdc* target_of_origin(std::uint32_t origin, pdc_table& pdcs) noexcept;
    status hold(engine_impl& e, pds::pdc& origin, peer_id to, delivery_mode mode,
                const ses_fields& ses, std::span<const std::uint8_t> data, std::uint64_t context);
    void drop_held(engine_impl& e, pds::pdc& p);
    // For validate(): the answers held on p, queued by the caller, then clear_held().
    ses::message_queue& held(const pds::pdc& p) noexcept { return held_[p.index].queue; }
    void clear_held(const pds::pdc& p) noexcept {
        held_answers& held = held_[p.index];
        held_answers_ -= held.count;
        held.count = 0;
    }
    // The PDC whose ACK may still answer the request of token, or nullptr (announced already,
    // or the PDC is gone).
    pds::pdc* owed_on(std::uint64_t token, pdc_table& pdcs) noexcept;
    // An announced answer of token goes now: the pool room kept for it is given back.
    void post_announced(std::uint64_t token);
    std::uint32_t next_stamp() noexcept;
    // Before an ACK of p leaves: answers still owed will come as response messages.
    void announce(pds::pdc& p);
    // A target PDC goes: answers still owed for it will go as messages nobody counts.
    void forget(pds::pdc& p);
    // The RESPONSE header an ACK of p carries (answers_in_acks).
    wire::ses_response ack_header(const pds::pdc& p) const;
    bool answer_ok_in_ack(engine_impl& e, const received_message& request);
    status post_response(engine_impl& e, const received_message& request, const ses_fields& ses,
                         std::span<const std::uint8_t> data, std::uint64_t context);
    // The last packet of a RUD/ROD message from peer is in (answer_tracker_inline.hpp).
    void on_message_placed(engine_impl& e, std::uint32_t peer, delivery_mode mode,
                           const ses::rx_segment& seg, std::uint32_t slot, pds::pdc* target);

    // ---- initiator ----
    // An ACK's RESPONSE header; the ACK is done with; a whole request acknowledged; a response
    // message for one of our requests arrived; undecided requests whose answers are settled.
    void on_ack_header(pds::pdc& p, const wire::uet_packet& pkt);
    void ack_done() noexcept { ack_has_answers_ = false; }
    // Inline in on_data_acked (answer_tracker.cpp): once per message sent.
    void on_request_acked(engine_impl& e, pds::pdc& p, std::uint32_t index);
    void on_data_acked(engine_impl& e, pds::pdc& p,
                       std::span<const pds::acked_message> runs) noexcept;
    void on_answer_message(engine_impl& e, std::uint32_t peer, std::uint8_t mode, std::uint16_t id);
    void settle(engine_impl& e, pds::pdc& p, std::uint64_t now);
    void unlink_undecided(message_pool& msgs, pds::pdc& p, std::uint32_t index);
    std::uint64_t answer_wait_ns() const noexcept { return answer_wait_ns_; }
    // A response message for one of p's acknowledged requests is counted.
    void count_answer_message(pds::pdc& p, std::uint64_t now);
    // The oldest undecided request of p gives up waiting at this time.
    std::uint64_t undecided_deadline(const message_pool& msgs, const pds::pdc& p) const noexcept;
    // Pool room kept for the response messages ACKs announced and not yet posted.
    std::uint32_t unposted() const noexcept { return announced_unposted_; }

  private:
    // Copies of the configuration, read here in one load.
    bool answers_in_acks_;
    std::size_t max_pending_messages_;
    std::uint32_t mpr_;
    std::uint64_t answer_wait_ns_;
    // Whether the ACK being processed carries answers; the target's owed answers; pool room
    // kept for the response messages ACKs announced and not yet posted.
    bool ack_has_answers_ = false;
    // An owed answer is a count on its PDC, not an entry: its token is the PDC's stamp and index.
    // Each ACK that announces a PDC's owed answers gives the PDC a new stamp and notes the old
    // one here (stamp -> its answers not yet posted), so a late answer knows it was announced.
    pds::flat_map announced_;
    std::uint32_t owed_stamp_ = 0;
    std::uint32_t announced_unposted_ = 0;
    struct held_answers {
        ses::message_queue queue;
        std::uint32_t count = 0;
    };
    std::vector<held_answers> held_;  // by PDC index
    std::uint32_t held_answers_ = 0;  // in all
};

// What pdc::on_ack calls back for the messages an ACK acknowledged: the answers part of the
// engine the ACK came to. Built on the stack in on_ack.
struct ack_listener final : pds::tx_listener {
    explicit ack_listener(engine_impl& engine) noexcept : e(engine) {}
    void on_data_acked(pds::pdc& p, std::span<const pds::acked_message> runs) noexcept override;
    engine_impl& e;
};

// An answer owed for a request just placed (answers in ACKs): its token, the PDC's stamp and
// index (an entry per request, taken here and freed at the answer, cost ~25 instructions and a
// cache line per message).
inline std::uint64_t answer_tracker::owe(pds::pdc& p) {
    ++p.answers_owed;
    return (std::uint64_t{p.owed_stamp} << 32) | p.index;
}

}  // namespace uet
