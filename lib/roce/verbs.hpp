// The verbs vocabulary of an RC queue pair, with libibverbs' names and numeric values where verbs
// fixes them (ibv_qp_state, ibv_qp_attr_mask, ibv_wc_status, ibv_access_flags), so that a
// completion's status or a modify mask means what a verbs user expects.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/psn.hpp"
#include "wire/eth.hpp"

namespace uet::roce {

using qpn_t = std::uint32_t;  // 24 bits on the wire

enum class qp_state : std::uint8_t { reset, init, rtr, rts, sqd, sqe, err };
const char* to_string(qp_state s) noexcept;

// ibv_qp_attr_mask bits. A modify names the attributes it sets; the state machine checks them
// against the transition (qp_fsm.hpp).
enum attr_mask : std::uint32_t {
    attr_state = 1u << 0,
    attr_cur_state = 1u << 1,
    attr_en_sqd_async_notify = 1u << 2,
    attr_access_flags = 1u << 3,
    attr_pkey_index = 1u << 4,
    attr_port = 1u << 5,
    attr_qkey = 1u << 6,
    attr_av = 1u << 7,
    attr_path_mtu = 1u << 8,
    attr_timeout = 1u << 9,
    attr_retry_cnt = 1u << 10,
    attr_rnr_retry = 1u << 11,
    attr_rq_psn = 1u << 12,
    attr_max_qp_rd_atomic = 1u << 13,
    attr_alt_path = 1u << 14,
    attr_min_rnr_timer = 1u << 15,
    attr_sq_psn = 1u << 16,
    attr_max_dest_rd_atomic = 1u << 17,
    attr_path_mig_state = 1u << 18,
    attr_cap = 1u << 19,
    attr_dest_qpn = 1u << 20,
};
inline constexpr std::uint32_t attr_mask_bits = 21;
// The verbs name of one mask bit ("IBV_QP_RQ_PSN"); "unknown" for a bit verbs does not define.
const char* attr_mask_name(std::uint32_t bit) noexcept;

// ibv_access_flags: what the responder lets a peer do to this QP's memory.
enum access_flags : std::uint32_t {
    access_local_write = 1u << 0,
    access_remote_write = 1u << 1,
    access_remote_read = 1u << 2,
    access_remote_atomic = 1u << 3,
};

enum class path_mtu : std::uint16_t {
    mtu_256 = 256,
    mtu_512 = 512,
    mtu_1024 = 1024,
    mtu_2048 = 2048,
    mtu_4096 = 4096
};

struct qp_attr {
    qp_state state = qp_state::reset;
    qp_state cur_state = qp_state::reset;  // with attr_cur_state: what the caller believes it is
    std::uint32_t access = 0;              // access_flags
    std::uint16_t pkey_index = 0;
    std::uint8_t port = 1;
    path_mtu mtu = path_mtu::mtu_1024;
    qpn_t dest_qpn = 0;
    psn_t rq_psn = 0;                     // 24 bits: the first PSN the responder expects
    psn_t sq_psn = 0;                     // 24 bits: the first PSN the requester sends
    std::uint8_t max_rd_atomic = 1;       // READs and atomics this requester keeps in flight
    std::uint8_t max_dest_rd_atomic = 1;  // READs and atomics this responder accepts at once
    std::uint8_t min_rnr_timer = 0;       // 5-bit IBTA code this responder sends in RNR NAKs
    std::uint8_t timeout = 14;            // local ACK timeout: 4.096 us * 2^timeout, 0 = none
    std::uint8_t retry_cnt = 7;           // timeouts without progress before retry_exc_err
    std::uint8_t rnr_retry = 7;           // RNR NAKs before rnr_retry_exc_err; 7 = forever
    std::uint32_t peer_ip = 0;            // the address vector: the peer's IPv4 address
    wire::mac_address peer_mac{};         // and the next hop's MAC
    std::uint16_t udp_sport = 0;          // the QP's UDP source port (its ECMP path)
};

// ibv_wc_status, with verbs' numbers.
enum class wc_status : std::uint8_t {
    success = 0,
    loc_len_err = 1,
    loc_qp_op_err = 2,
    loc_eec_op_err = 3,
    loc_prot_err = 4,
    wr_flush_err = 5,
    mw_bind_err = 6,
    bad_resp_err = 7,
    loc_access_err = 8,
    rem_inv_req_err = 9,
    rem_access_err = 10,
    rem_op_err = 11,
    retry_exc_err = 12,
    rnr_retry_exc_err = 13,
    loc_rdd_viol_err = 14,
    rem_inv_rd_req_err = 15,
    rem_abort_err = 16,
    inv_eecn_err = 17,
    inv_eec_state_err = 18,
    fatal_err = 19,
    resp_timeout_err = 20,
    general_err = 21,
};
// ibv_wc_status_str's text ("transport retry counter exceeded"). Never null.
const char* to_string(wc_status s) noexcept;

enum class wr_opcode : std::uint8_t { send, send_imm, write, write_imm, read, cmp_swap, fetch_add };
const char* to_string(wr_opcode op) noexcept;

// One work request on the send queue (ibv_send_wr with one scatter-gather entry).
struct send_wr {
    std::uint64_t wr_id = 0;
    wr_opcode opcode = wr_opcode::send;
    std::uint8_t* local = nullptr;  // source of send/write, destination of read and atomic results
    std::uint32_t length = 0;
    std::uint64_t remote_va = 0;  // write, read, atomics: offset into the remote region
    std::uint32_t rkey = 0;
    std::uint32_t imm = 0;          // send_imm, write_imm (host order)
    std::uint64_t compare_add = 0;  // cmp_swap: compare; fetch_add: the addend
    std::uint64_t swap = 0;         // cmp_swap: the new value
    bool signaled = true;           // unsignaled: no completion unless it fails
};

struct work_completion {
    std::uint64_t wr_id = 0;
    qpn_t qp_num = 0;
    wc_status status = wc_status::success;
    wr_opcode opcode = wr_opcode::send;
    std::uint32_t byte_len = 0;
    std::uint32_t imm = 0;
    bool with_imm = false;
};

// The requester's local ACK timeout: 4.096 us * 2^timeout; 0 means no timeout (verbs).
constexpr std::uint64_t ack_timeout_ns(std::uint8_t timeout) noexcept {
    return timeout == 0 ? 0 : 4096ull << (timeout > 31 ? 31 : timeout);
}

// The IBTA's RNR NAK timer codes (5 bits): 0 is 655.36 ms, 1 is 10 us ... 31 is 491.52 ms.
std::uint64_t rnr_timer_ns(std::uint8_t code) noexcept;

// The device's limit on READs and atomics in flight each way (ConnectX's is 16).
inline constexpr std::uint8_t max_rd_atomic_limit = 16;

// rnr_retry and retry_cnt are 3-bit; an rnr_retry of 7 retries forever.
inline constexpr std::uint8_t retry_forever = 7;

}  // namespace uet::roce
