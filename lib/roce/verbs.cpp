#include "roce/verbs.hpp"

#include <array>

#include "roce/counters.hpp"
#include "roce/delivery.hpp"

namespace uet::roce {

const char* to_string(qp_state s) noexcept {
    switch (s) {
        case qp_state::reset:
            return "RESET";
        case qp_state::init:
            return "INIT";
        case qp_state::rtr:
            return "RTR";
        case qp_state::rts:
            return "RTS";
        case qp_state::sqd:
            return "SQD";
        case qp_state::sqe:
            return "SQE";
        case qp_state::err:
            return "ERR";
    }
    return "unknown";
}

const char* attr_mask_name(std::uint32_t bit) noexcept {
    static constexpr std::array<const char*, attr_mask_bits> names = {
        "IBV_QP_STATE",
        "IBV_QP_CUR_STATE",
        "IBV_QP_EN_SQD_ASYNC_NOTIFY",
        "IBV_QP_ACCESS_FLAGS",
        "IBV_QP_PKEY_INDEX",
        "IBV_QP_PORT",
        "IBV_QP_QKEY",
        "IBV_QP_AV",
        "IBV_QP_PATH_MTU",
        "IBV_QP_TIMEOUT",
        "IBV_QP_RETRY_CNT",
        "IBV_QP_RNR_RETRY",
        "IBV_QP_RQ_PSN",
        "IBV_QP_MAX_QP_RD_ATOMIC",
        "IBV_QP_ALT_PATH",
        "IBV_QP_MIN_RNR_TIMER",
        "IBV_QP_SQ_PSN",
        "IBV_QP_MAX_DEST_RD_ATOMIC",
        "IBV_QP_PATH_MIG_STATE",
        "IBV_QP_CAP",
        "IBV_QP_DEST_QPN",
    };
    for (std::uint32_t i = 0; i < attr_mask_bits; ++i)
        if (bit == (1u << i)) return names[i];
    return "unknown";
}

const char* to_string(wc_status s) noexcept {
    switch (s) {
        case wc_status::success:
            return "success";
        case wc_status::loc_len_err:
            return "local length error";
        case wc_status::loc_qp_op_err:
            return "local QP operation error";
        case wc_status::loc_eec_op_err:
            return "local EE context operation error";
        case wc_status::loc_prot_err:
            return "local protection error";
        case wc_status::wr_flush_err:
            return "Work Request Flushed Error";
        case wc_status::mw_bind_err:
            return "memory management operation error";
        case wc_status::bad_resp_err:
            return "bad response error";
        case wc_status::loc_access_err:
            return "local access error";
        case wc_status::rem_inv_req_err:
            return "remote invalid request error";
        case wc_status::rem_access_err:
            return "remote access error";
        case wc_status::rem_op_err:
            return "remote operation error";
        case wc_status::retry_exc_err:
            return "transport retry counter exceeded";
        case wc_status::rnr_retry_exc_err:
            return "RNR retry counter exceeded";
        case wc_status::loc_rdd_viol_err:
            return "local RDD violation error";
        case wc_status::rem_inv_rd_req_err:
            return "remote invalid RD request";
        case wc_status::rem_abort_err:
            return "aborted error";
        case wc_status::inv_eecn_err:
            return "invalid EE context number";
        case wc_status::inv_eec_state_err:
            return "invalid EE context state";
        case wc_status::fatal_err:
            return "fatal error";
        case wc_status::resp_timeout_err:
            return "response timeout error";
        case wc_status::general_err:
            return "general error";
    }
    return "unknown";
}

const char* to_string(wr_opcode op) noexcept {
    switch (op) {
        case wr_opcode::send:
            return "send";
        case wr_opcode::send_imm:
            return "send_with_imm";
        case wr_opcode::write:
            return "rdma_write";
        case wr_opcode::write_imm:
            return "rdma_write_with_imm";
        case wr_opcode::read:
            return "rdma_read";
        case wr_opcode::cmp_swap:
            return "atomic_cmp_and_swp";
        case wr_opcode::fetch_add:
            return "atomic_fetch_and_add";
    }
    return "unknown";
}

std::uint64_t rnr_timer_ns(std::uint8_t code) noexcept {
    // IBTA table 45, in units of 10 us; code 0 is the longest.
    static constexpr std::array<std::uint32_t, 32> tens_of_us = {
        65536, 1,    2,    3,    4,    6,     8,     12,    16,    24,    32,
        48,    64,   96,   128,  192,  256,   384,   512,   768,   1024,  1536,
        2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    };
    return std::uint64_t{tens_of_us[code & 31u]} * 10'000u;
}

namespace {
struct drop_text {
    const char* name;
    const char* text;
};
constexpr std::array<drop_text, roce_drop_count> drop_texts = {{
#define UET_ROCE_DROP(name, text) {#name, text},
#include "roce/roce_drop.def"
#undef UET_ROCE_DROP
}};
}  // namespace

const char* to_string(roce_drop d) noexcept {
    const auto i = static_cast<std::size_t>(d);
    return i < roce_drop_count ? drop_texts[i].text : "unknown";
}

const char* drop_name(roce_drop d) noexcept {
    const auto i = static_cast<std::size_t>(d);
    return i < roce_drop_count ? drop_texts[i].name : "unknown";
}

const char* to_string(qp_event e) noexcept {
    switch (e) {
        case qp_event::established:
            return "established";
        case qp_event::rejected:
            return "rejected";
        case qp_event::error:
            return "error";
        case qp_event::disconnected:
            return "disconnected";
    }
    return "unknown";
}

}  // namespace uet::roce
