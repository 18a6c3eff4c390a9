#include "engine/path_loss.hpp"

#include "engine/engine_impl.hpp"

namespace uet {

path_loss::path_loss(const engine_config& cfg) : paths_(cfg.path_ids) {
    if (paths_ == 0) return;
    all_ = paths_ == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << paths_) - 1;
    pdcs_.resize(cfg.max_pdcs);
    highest_.resize(std::size_t{cfg.max_pdcs} * paths_);
}

void path_loss::open(const pds::pdc& p) noexcept {
    if (paths_ == 0) return;
    pdcs_[p.index] = {0, p.rx.expected()};
}

void path_loss::on_accepted(engine_impl& e, pds::pdc& p, psn_t psn, const rx_context& rx) {
    if (rx.ip_id == 0 || p.ordered) return;  // not stamped; ROD drops what overtakes a hole
    if (rx.ip_id > paths_) {
        ++e.core_.counters.path_ids_out_of_range;
        return;
    }
    pdc_paths& s = pdcs_[p.index];
    psn_t* highest = &highest_[std::size_t{p.index} * paths_];
    const std::uint32_t k = rx.ip_id - 1u;
    const std::uint64_t bit = std::uint64_t{1} << k;
    if (!(s.seen & bit) || psn_after(psn, highest[k])) highest[k] = psn;
    s.seen |= bit;
    if (s.seen != all_) return;
    psn_t below = highest[0];
    for (std::uint32_t i = 1; i < paths_; ++i)
        if (psn_before(highest[i], below)) below = highest[i];
    psn_t from = p.rx.expected();
    if (psn_after(s.judged, from)) from = s.judged;
    if (!psn_after(below, from)) return;
    for (psn_t q = from; q != below; ++q)
        if (!p.rx.received(q))
            e.acks_.queue_nack(e, rx, wire::nack_code::rcvr_infer_loss, q, p.local_id, p.remote_id,
                               false, &p);
    s.judged = below;
}

}  // namespace uet
