// The message pool: admission of a signaled message and the scan for unsignaled ones.
#include "engine/message_pool.hpp"

namespace uet {

message_pool::message_pool(const engine_config& cfg)
    : fep_pids_(cfg.fep_pids),
      pid_on_fep_(cfg.pid_on_fep),
      messages_(cfg.max_pending_messages, cfg.mtu_payload),
      by_id_(cfg.max_pending_messages) {
    completions_.resize(cfg.max_pending_messages);
}

std::uint32_t message_pool::admit(peer_state& ps, peer_id to, delivery_mode mode,
                                  const ses_fields& ses, std::span<const std::uint8_t> data,
                                  std::uint64_t context) {
    // A response goes out under the id of the request it answers (its own key space).
    const std::uint16_t id =
        ses.response ? ses.message_id : ps.next_message_id[static_cast<std::size_t>(mode)];
    const std::uint32_t m =
        messages_.allocate(data, context, to, static_cast<std::uint8_t>(mode), id, ses);
    if (m == ses::no_index) return m;
    address(messages_[m], ps);
    ++ps.messages;
    if (!ses.response) ps.advance_message_id(static_cast<std::size_t>(mode));
    if (tracked_request(static_cast<std::uint8_t>(mode), ses)) {
        const ses::message_key key{to, static_cast<std::uint8_t>(mode), id};
        messages_[m].request_slot = by_id_.insert(key, m).slot;
    }
    return m;
}

std::uint32_t message_pool::next_unsignaled(std::uint32_t from) const noexcept {
    for (std::uint32_t i = from; i < messages_.capacity(); ++i)
        if (messages_[i].in_use && messages_[i].unsignaled) return i;
    return none;
}

}  // namespace uet
