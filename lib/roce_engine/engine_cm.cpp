// The connection manager's exchange (IBTA vol. 1 ch. 12 over RoCEv2): connect() sends a REQ;
// the passive side makes a QP in RTR and answers REP; the active side goes to RTS and answers
// RTU; the passive side goes to RTS on the RTU or on its first request. REQ, REP and DREQ are
// sent again until answered; a duplicate REQ or REP is answered again, never acted on twice.
#include <algorithm>

#include "roce/completer.hpp"
#include "roce_engine/engine.hpp"

namespace uet::roce {

namespace {

using wire::cm_attribute;
using wire::cm_message;
using wire::cm_refusal;

// REJ reason codes (IBTA table 112) this end sends.
constexpr std::uint16_t rej_no_qp = 1;
constexpr std::uint16_t rej_no_resources = 3;
constexpr std::uint16_t rej_invalid_service_id = 8;
constexpr std::uint16_t rej_consumer = 28;
constexpr std::uint8_t rejected_req = 0, rejected_rep = 1;

// rdma_cm's TCP port space with the RoCEv2 port: a service ID the dissectors know.
constexpr std::uint64_t service_id = 0x0106000000000000ull | 4791;

constexpr std::uint32_t init_mask = attr_state | attr_pkey_index | attr_port | attr_access_flags;
constexpr std::uint32_t rtr_mask = attr_state | attr_av | attr_path_mtu | attr_dest_qpn |
                                   attr_rq_psn | attr_max_dest_rd_atomic | attr_min_rnr_timer;
constexpr std::uint32_t rts_mask = attr_state | attr_sq_psn | attr_max_qp_rd_atomic |
                                   attr_retry_cnt | attr_rnr_retry | attr_timeout;

// The EUI-64 a MAC address makes: the CA GUID a REQ or REP names.
std::uint64_t guid_of(const wire::mac_address& m) noexcept {
    const auto& b = m.octets;
    return std::uint64_t{b[0] ^ 2u} << 56 | std::uint64_t{b[1]} << 48 | std::uint64_t{b[2]} << 40 |
           std::uint64_t{0xfffe} << 24 | std::uint64_t{b[3]} << 16 | std::uint64_t{b[4]} << 8 |
           b[5];
}

// The 5-bit code of a CM response timeout (4.096 us * 2^code) at least `ns` long.
std::uint8_t timeout_code(std::uint64_t ns) noexcept {
    std::uint8_t code = 0;
    while (code < 31 && (std::uint64_t{4096} << code) < ns)
        ++code;
    return code;
}

std::uint8_t mode_code(retransmit_mode m) noexcept {
    return m == retransmit_mode::out_of_order ? 1 : 0;
}

}  // namespace

wire::uet_cm_private engine::announce(path_mtu mtu) const noexcept {
    wire::uet_cm_private p;
    p.mode = mode_code(cfg_.qp.mode);
    p.mtu_code = wire::ib_mtu_code(static_cast<std::uint32_t>(mtu));
    p.job_id = cfg_.cm.job_id;
    return p;
}

qpn_t engine::connect(const connect_params& to, std::uint64_t context, std::uint64_t now) {
    now_ = now;
    cm_entry* e = cm_.allocate();
    if (e == nullptr) return 0;
    const qpn_t qpn = create_qp(context);
    if (qpn == 0) {
        cm_.release(*e);
        return 0;
    }
    const cm_config& c = cfg_.cm;
    qp_attr& a = e->attr;
    a.access = c.access;
    a.mtu = c.mtu;
    a.peer_ip = to.peer_ip;
    a.peer_mac = to.peer_mac;
    a.udp_sport = to.udp_sport;
    a.sq_psn = cm_.random_psn();
    a.max_rd_atomic = a.max_dest_rd_atomic = c.max_rd_atomic;
    a.min_rnr_timer = c.min_rnr_timer;
    a.timeout = c.ack_timeout;
    a.retry_cnt = c.retry_cnt;
    a.rnr_retry = c.rnr_retry;
    a.state = qp_state::init;
    modify_qp(qpn, a, init_mask);
    e->state = cm_state::req_sent;
    e->qpn = qpn;
    e->peer_ip = to.peer_ip;
    e->peer_mac = to.peer_mac;
    e->udp_sport = source_port(qpn, to.udp_sport);

    cm_message m;
    m.attribute = cm_attribute::req;
    m.transaction_id = cm_.random_u64();
    m.local_comm_id = e->local_comm_id;
    m.service_id = service_id;
    m.local_ca_guid = guid_of(cfg_.mac);
    m.local_qpn = qpn;
    m.starting_psn = a.sq_psn;
    m.responder_resources = a.max_dest_rd_atomic;
    m.initiator_depth = a.max_rd_atomic;
    m.remote_cm_response_timeout = m.local_cm_response_timeout = timeout_code(c.timeout_ns);
    m.retry_count = std::min<std::uint8_t>(a.retry_cnt, 7);
    m.rnr_retry_count = std::min<std::uint8_t>(a.rnr_retry, 7);
    m.max_cm_retries = std::min<std::uint8_t>(c.retries, 15);
    m.path_mtu = wire::ib_mtu_code(static_cast<std::uint32_t>(c.mtu));
    m.local_gid = wire::ipv4_mapped_gid(cfg_.ip);
    m.remote_gid = wire::ipv4_mapped_gid(to.peer_ip);
    m.traffic_class = static_cast<std::uint8_t>(cfg_.dscp << 2);
    m.hop_limit = 64;
    m.local_ack_timeout = a.timeout;
    wire::write_private(announce(c.mtu), m);
    cm_.send_kept(*e, m, c, now);
    return qpn;
}

bool engine::disconnect(qpn_t qpn, std::uint64_t now) {
    now_ = now;
    cm_entry* e = cm_.by_qpn(qpn);
    qp* q = find(qpn);
    if (e == nullptr || q == nullptr || e->state != cm_state::established) return false;
    fail(*q, wc_status::wr_flush_err);
    cm_message m;
    m.attribute = cm_attribute::dreq;
    m.transaction_id = cm_.random_u64();
    m.local_comm_id = e->local_comm_id;
    m.remote_comm_id = e->remote_comm_id;
    m.remote_qpn = q->attr.dest_qpn;
    cm_.send_kept(*e, m, cfg_.cm, now);
    e->state = cm_state::dreq_sent;
    return true;
}

void engine::on_cm_datagram(const wire::l2l4_view& v, const wire::roce_packet& p,
                            std::uint64_t now) {
    if (p.bth.dest_qp != wire::gsi_qpn) {
        count_drop(roce_drop::wrong_qpn);
        return;
    }
    if (p.deth->q_key != wire::gsi_qkey) {
        count_drop(roce_drop::bad_qkey);
        return;
    }
    cm_message m;
    if (const wire::reject_reason r = wire::decode_cm(p.payload, m);
        r != wire::reject_reason::none) {
        ++counters_.rejects[static_cast<std::size_t>(r)];
        return;
    }
    ++cm_.counters.received;
    const std::uint32_t ip = v.ip.src;
    switch (m.attribute) {
        case cm_attribute::req:
            return on_req(m, ip, v.eth.src, now);
        case cm_attribute::rep:
            return on_rep(m, ip);
        case cm_attribute::rtu:
            return on_rtu(m, ip);
        case cm_attribute::rej:
            return on_rej(m, ip);
        case cm_attribute::dreq:
            return on_dreq(m, ip, v.eth.src);
        case cm_attribute::drep:
            return on_drep(m, ip);
        case cm_attribute::mra:
            break;
    }
    count_drop(roce_drop::cm_unexpected);
}

void engine::refuse(const cm_message& m, std::uint32_t ip, const wire::mac_address& mac,
                    std::uint16_t reason, cm_refusal why) {
    cm_message r;
    r.attribute = cm_attribute::rej;
    r.transaction_id = m.transaction_id;
    r.remote_comm_id = m.local_comm_id;
    r.rejected_message = m.attribute == cm_attribute::req ? rejected_req : rejected_rep;
    r.reject_reason_code = reason;
    wire::uet_cm_private p = announce(cfg_.cm.mtu);
    p.refusal = why;
    wire::write_private(p, r);
    ++cm_.counters.rejects_sent;
    cm_.send_to(ip, mac, source_port(0, 0), r);
}

void engine::on_req(const cm_message& m, std::uint32_t ip, const wire::mac_address& mac,
                    std::uint64_t now) {
    if (cm_entry* e = cm_.by_remote_id(ip, m.local_comm_id)) {
        // Our REP was lost: the same REP again.
        if (e->state != cm_state::rep_sent) return count_drop(roce_drop::cm_unexpected);
        ++cm_.counters.resent;
        cm_.send(*e, e->last);
        return;
    }
    const cm_config& c = cfg_.cm;
    if (!c.listen) return refuse(m, ip, mac, rej_invalid_service_id, cm_refusal::not_listening);
    wire::uet_cm_private theirs;
    if (!wire::read_private(m, theirs))
        return refuse(m, ip, mac, rej_consumer, cm_refusal::not_uet);
    if (theirs.job_id != c.job_id) return refuse(m, ip, mac, rej_consumer, cm_refusal::job);
    if (theirs.mode != mode_code(cfg_.qp.mode))
        return refuse(m, ip, mac, rej_consumer, cm_refusal::mode);
    const std::uint32_t their_mtu = wire::ib_mtu_bytes(m.path_mtu);
    if (their_mtu == 0) return refuse(m, ip, mac, rej_consumer, cm_refusal::mtu);
    cm_entry* e = cm_.allocate();
    if (e == nullptr) return refuse(m, ip, mac, rej_no_resources, cm_refusal::none);
    const qpn_t qpn = create_qp(0);
    if (qpn == 0) {
        cm_.release(*e);
        return refuse(m, ip, mac, rej_no_qp, cm_refusal::none);
    }
    qp_attr& a = e->attr;
    a.access = c.access;
    a.mtu = static_cast<path_mtu>(std::min(their_mtu, static_cast<std::uint32_t>(c.mtu)));
    a.dest_qpn = m.local_qpn;
    a.rq_psn = m.starting_psn;
    a.sq_psn = cm_.random_psn();
    // Reads and atomics in flight: at most what the other end accepts, either way.
    a.max_rd_atomic = std::min(c.max_rd_atomic, m.responder_resources);
    a.max_dest_rd_atomic = std::min(c.max_rd_atomic, m.initiator_depth);
    a.min_rnr_timer = c.min_rnr_timer;
    a.timeout = c.ack_timeout;
    a.retry_cnt = m.retry_count;
    a.rnr_retry = m.rnr_retry_count;
    a.peer_ip = ip;
    a.peer_mac = mac;
    a.state = qp_state::init;
    const bool made = static_cast<bool>(modify_qp(qpn, a, init_mask));
    a.state = qp_state::rtr;
    if (!made || !modify_qp(qpn, a, rtr_mask)) {
        destroy_qp(qpn);
        cm_.release(*e);
        return refuse(m, ip, mac, rej_no_resources, cm_refusal::none);
    }
    e->state = cm_state::rep_sent;
    e->qpn = qpn;
    e->peer_ip = ip;
    e->peer_mac = mac;
    e->udp_sport = source_port(qpn, 0);
    e->remote_comm_id = m.local_comm_id;

    cm_message r;
    r.attribute = cm_attribute::rep;
    r.transaction_id = m.transaction_id;
    r.local_comm_id = e->local_comm_id;
    r.remote_comm_id = m.local_comm_id;
    r.local_ca_guid = guid_of(cfg_.mac);
    r.local_qpn = qpn;
    r.starting_psn = a.sq_psn;
    r.responder_resources = a.max_dest_rd_atomic;
    r.initiator_depth = a.max_rd_atomic;
    r.rnr_retry_count = std::min<std::uint8_t>(c.rnr_retry, 7);
    wire::write_private(announce(a.mtu), r);
    cm_.send_kept(*e, r, c, now);
}

void engine::on_rep(const cm_message& m, std::uint32_t ip) {
    cm_entry* e = cm_.by_local_id(ip, m.remote_comm_id);
    if (e != nullptr && e->state == cm_state::established && e->remote_comm_id == m.local_comm_id &&
        e->last.attribute == cm_attribute::rtu) {
        // Our RTU was lost: the same RTU again.
        ++cm_.counters.resent;
        cm_.send(*e, e->last);
        return;
    }
    qp* q = e != nullptr && e->state == cm_state::req_sent ? find(e->qpn) : nullptr;
    if (q == nullptr) return count_drop(roce_drop::cm_unexpected);
    wire::uet_cm_private theirs;
    cm_refusal why = cm_refusal::none;
    if (!wire::read_private(m, theirs))
        why = cm_refusal::not_uet;
    else if (theirs.job_id != cfg_.cm.job_id)
        why = cm_refusal::job;
    else if (theirs.mode != mode_code(cfg_.qp.mode))
        why = cm_refusal::mode;
    else if (wire::ib_mtu_bytes(theirs.mtu_code) == 0 ||
             wire::ib_mtu_bytes(theirs.mtu_code) > static_cast<std::uint32_t>(e->attr.mtu))
        why = cm_refusal::mtu;
    qp_attr& a = e->attr;
    if (why == cm_refusal::none) {
        a.mtu = static_cast<path_mtu>(wire::ib_mtu_bytes(theirs.mtu_code));
        a.dest_qpn = m.local_qpn;
        a.rq_psn = m.starting_psn;
        a.max_rd_atomic = std::min(a.max_rd_atomic, m.responder_resources);
        a.state = qp_state::rtr;
        const bool ready = static_cast<bool>(modify_qp(e->qpn, a, rtr_mask));
        a.state = qp_state::rts;
        if (!ready || !modify_qp(e->qpn, a, rts_mask)) why = cm_refusal::mtu;
    }
    if (why != cm_refusal::none) {
        refuse(m, ip, e->peer_mac, rej_consumer, why);
        fail(*q, wc_status::rem_abort_err);
        cm_.release(*e);
        target_.on_qp_event(*q, qp_event::rejected, rej_consumer);
        return;
    }
    e->state = cm_state::established;
    e->remote_comm_id = m.local_comm_id;
    cm_.set_deadline(*e, 0);
    cm_message r;
    r.attribute = cm_attribute::rtu;
    r.transaction_id = m.transaction_id;
    r.local_comm_id = e->local_comm_id;
    r.remote_comm_id = e->remote_comm_id;
    e->last = r;
    cm_.send(*e, r);
    ++cm_.counters.established;
    target_.on_qp_event(*q, qp_event::established, 0);
}

void engine::establish(cm_entry& e, qp& q) {
    qp_attr a = e.attr;
    a.state = qp_state::rts;
    if (!modify_qp(q.qpn, a, rts_mask)) return;
    e.state = cm_state::established;
    cm_.set_deadline(e, 0);
    ++cm_.counters.established;
    target_.on_qp_event(q, qp_event::established, 0);
}

void engine::on_rtu(const cm_message& m, std::uint32_t ip) {
    cm_entry* e = cm_.by_local_id(ip, m.remote_comm_id);
    qp* q = e != nullptr && e->state == cm_state::rep_sent ? find(e->qpn) : nullptr;
    // Late after the first request established it, or for nothing of ours.
    if (q == nullptr) return count_drop(roce_drop::cm_unexpected);
    establish(*e, *q);
}

void engine::on_rej(const cm_message& m, std::uint32_t ip) {
    cm_entry* e = cm_.by_local_id(ip, m.remote_comm_id);
    if (e == nullptr || (e->state != cm_state::req_sent && e->state != cm_state::rep_sent))
        return count_drop(roce_drop::cm_unexpected);
    ++cm_.counters.rejects_received;
    const qpn_t qpn = e->qpn;
    const bool active = e->state == cm_state::req_sent;
    cm_.release(*e);
    qp* q = find(qpn);
    if (q == nullptr) return;
    if (!active) {
        // The active side refused our REP: the passive QP was never reported.
        destroy_qp(qpn);
        return;
    }
    fail(*q, wc_status::rem_abort_err);
    target_.on_qp_event(*q, qp_event::rejected, m.reject_reason_code);
}

void engine::on_dreq(const cm_message& m, std::uint32_t ip, const wire::mac_address& mac) {
    cm_entry* e = cm_.by_local_id(ip, m.remote_comm_id);
    std::uint16_t sport = source_port(0, 0);
    if (e != nullptr) {
        sport = e->udp_sport;
        qp* q = find(e->qpn);
        const cm_state was = e->state;
        cm_.release(*e);
        if (q != nullptr && was == cm_state::established) {
            fail(*q, wc_status::wr_flush_err);
            ++cm_.counters.disconnected;
            target_.on_qp_event(*q, qp_event::disconnected, 0);
        } else if (q != nullptr && was == cm_state::rep_sent) {
            destroy_qp(q->qpn);
        }
    }
    // Answered even when the entry is gone: our first DREP may have been lost.
    cm_message r;
    r.attribute = cm_attribute::drep;
    r.transaction_id = m.transaction_id;
    r.local_comm_id = m.remote_comm_id;
    r.remote_comm_id = m.local_comm_id;
    cm_.send_to(ip, mac, sport, r);
}

void engine::on_drep(const cm_message& m, std::uint32_t ip) {
    cm_entry* e = cm_.by_local_id(ip, m.remote_comm_id);
    if (e == nullptr || e->state != cm_state::dreq_sent)
        return count_drop(roce_drop::cm_unexpected);
    cm_.release(*e);
}

void engine::cm_timers(std::uint64_t now) {
    if (cm_.armed() == 0) return;
    for (cm_entry& e : cm_.entries()) {
        if (e.state == cm_state::free || e.deadline == 0 || e.deadline > now) continue;
        if (e.retries_left != 0) {
            --e.retries_left;
            cm_.set_deadline(e, now + cfg_.cm.timeout_ns);
            ++cm_.counters.resent;
            cm_.send(e, e.last);
            continue;
        }
        ++cm_.counters.timeouts;
        const qpn_t qpn = e.qpn;
        const cm_state was = e.state;
        cm_.release(e);
        qp* q = find(qpn);
        if (q == nullptr) continue;
        if (was == cm_state::req_sent) {
            fail(*q, wc_status::retry_exc_err);
            target_.on_qp_event(*q, qp_event::error, 0);
        } else if (was == cm_state::rep_sent) {
            destroy_qp(qpn);  // never reported: the peer went away before it connected
        }
    }
}

}  // namespace uet::roce
