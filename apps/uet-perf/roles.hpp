// The client and server roles: non-blocking state machines advanced by step(now). One thread
// can drive both (the pipe provider, the tests) or a process drives one (the dpdk provider).
// `now` is the control clock, for timeouts only (the provider's virtual clock on the pipe, so
// tests never wait); measurements use the side's clock.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "control.hpp"
#include "report.hpp"
#include "traffic.hpp"

namespace uet::perf {

inline constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

// What both roles have in common: output, rows, verification, failure.
class role_base {
  public:
    role_base(side& sd, const settings& s, run_info info)
        : sd_(sd), s_(s), info_(std::move(info)) {}
    bool finished() const noexcept { return done_ || !error_.empty(); }
    bool failed() const noexcept { return !error_.empty(); }
    const std::string& error() const noexcept { return error_; }
    // The next time step() has something to do without news: a timeout, or a keepalive to send
    // or an unanswered HELLO to forget.
    std::uint64_t deadline() const noexcept {
        return finished() ? no_deadline : std::min(deadline_, wake_at_);
    }
    std::uint64_t activity() const noexcept { return sd_.activity() + transitions_; }
    // Output produced since the last call (settings block, rows).
    std::string take_output() { return std::exchange(out_, {}); }
    const std::vector<bw_row>& bw_rows() const noexcept { return bw_rows_; }
    const std::vector<lat_row>& lat_rows() const noexcept { return lat_rows_; }
    bool verify_failed() const noexcept { return verify_failures_ > 0; }
    // "OK (N checks)", "FAILED: ...", "off", or for a run that failed before verification could
    // say anything, "not completed: " and why (a run that stopped checked too little for an OK).
    std::string verify_summary() const;
    // What this side's control channel dropped, by reason (--stats).
    const ctrl_counters& control_counters() const noexcept { return sd_.ctrl_counts(); }
    // The session nonce: the client's own, the server's once bound (0 before).
    std::uint64_t session_nonce() const noexcept { return nonce_; }
    const settings& config() const noexcept { return s_; }
    const run_info& info() const noexcept { return info_; }
    // The other side, in this side's address vector (any_peer before one is known).
    peer_addr peer() const noexcept { return sd_.peer(); }

  protected:
    // A control message of this session (its nonce filled in).
    ctrl_msg message(ctrl_kind k) const;
    // Whether an arrival is the peer's, of this session; counts it by reason if not.
    bool from_peer(const ctrl_arrival& a);
    void fail(std::string why);
    // After a failure, tells the peer (ABORT, best effort) unless it is the peer that is gone.
    void tell_peer_about_failure(bool greeted);
    void expect_answer(std::uint64_t now, std::string_view what);
    bool timed_out(std::uint64_t now);
    void send(const ctrl_msg& m);
    void print_header();
    void print_row_from(const ctrl_msg& report);
    void note_verify(std::uint64_t checked, std::uint64_t failures, const std::string& first);

    side& sd_;
    settings s_;
    run_info info_;
    std::string out_, error_;
    bool done_ = false;
    std::uint64_t nonce_ = 0;
    std::uint64_t deadline_ = no_deadline;
    std::uint64_t wake_at_ = no_deadline;  // see deadline()
    std::string waiting_for_;
    std::uint64_t transitions_ = 0;
    std::vector<bw_row> bw_rows_;
    std::vector<lat_row> lat_rows_;
    std::uint64_t verify_checked_ = 0, verify_failures_ = 0;
    std::string verify_first_;
    bool abort_sent_ = false;
};

class client_role : public role_base {
  public:
    // peer: the server, in the side's address vector. nonce: this session's, not 0
    // (session_nonce() in runner.hpp draws one).
    client_role(side& sd, const settings& s, run_info info, peer_addr server, std::uint64_t nonce);
    void step(std::uint64_t now);
    // Ctrl-C: ends the current size as if its duration had passed, reports it, says BYE.
    void interrupt() noexcept { interrupted_ = true; }
    bool was_interrupted() const noexcept { return interrupted_; }

  private:
    enum class state {
        hello,
        wait_hello_ack,
        start,
        wait_ready,
        running,
        wait_stop_ack,
        wait_result,
        wait_report_ack,
        wait_bye_ack,
        linger,  // the server's ACK is in: let our transport acknowledge it before we go
    };
    void step_once(std::uint64_t now);
    void on_message(const ctrl_msg& m, std::uint64_t now);
    void send_keepalive(std::uint64_t now);
    void start_size(std::uint64_t now);
    void finish_size(std::uint64_t now);
    void go(state s) {
        state_ = s;
        ++transitions_;
    }

    state state_ = state::hello;
    std::vector<std::uint64_t> sizes_;
    std::size_t size_index_ = 0;
    bool interrupted_ = false;
    std::uint64_t server_sent_ = 0;
    bool have_result_ = false;
    ctrl_msg result_;
    std::uint64_t last_activity_ = 0;
    std::string refused_;  // the server's refusal, reported once the linger is over
};

// The server waits for a client as long as it takes (before a client, nothing bounds it), and
// answers every HELLO at the address it names; it binds to the first client that answers back
// from there with its nonce (control.hpp). Once bound, every wait is bounded by --timeout: a
// client that goes silent at any point ends the run with an error.
class server_role : public role_base {
  public:
    server_role(side& sd, const settings& s, run_info info, address_vector& av);
    void step(std::uint64_t now);
    // Ctrl-C: tells the client (ABORT) and stops.
    void interrupt();
    bool was_interrupted() const noexcept { return interrupt_pending_; }
    // Leaving the port alone before closing (the DPDK runner sleeps meanwhile).
    bool unsignaled() const noexcept { return unsignaled_until_ != 0 && !finished(); }
    // A client has answered back: the run is its.
    bool bound() const noexcept { return bound_; }
    // HELLOs answered that no client has answered back yet.
    std::size_t open_offers() const noexcept { return offers_.size(); }

    // At most this many HELLOs wait for their client to answer back; a newer one pushes out the
    // oldest. More than one, so that a HELLO replayed just before or after the real client's
    // does not push the real one out.
    static constexpr std::size_t max_offers = 4;

  private:
    // A HELLO answered (accepted or refused), waiting for its client to answer back from the
    // address it named, with its nonce.
    struct offer {
        peer_addr peer = any_peer;
        hello_info hello;
        std::uint64_t nonce = 0;
        std::string refused;  // why not, if the settings differ
        std::uint64_t lapses_at = 0;
    };
    void step_once(std::uint64_t now);
    void on_arrival(const ctrl_arrival& a, std::uint64_t now);
    void before_binding(const ctrl_arrival& a, std::uint64_t now);
    void on_hello(const ctrl_arrival& a, std::uint64_t now);
    void bind(const offer& o);
    void forget_offers(std::uint64_t now);
    void on_message(const ctrl_msg& m, std::uint64_t now);
    void abort_run(std::uint64_t now);
    void on_start(const ctrl_msg& m, std::uint64_t now);

    address_vector& av_;
    std::vector<offer> offers_;  // oldest first
    bool bound_ = false;
    bool noted_malformed_ = false;
    bool running_ = false;             // between START and STOP: the client measures (KEEPALIVEs)
    bool stop_ack_due_ = false;        // STOP came: answer once our own operations are done
    bool result_due_ = false;          // DRAIN came: answer once drained
    bool closing_ = false;             // BYE answered: done once sent (or given up)
    std::uint64_t close_by_ = 0;       // the client may be gone before it acknowledges our answer
    std::uint64_t last_activity_ = 0;  // while our own operations finish after STOP
    // BYE answered and acknowledged: the port is left alone until then, so that the client,
    // which lingers shorter, closes first (see step()).
    std::uint64_t unsignaled_until_ = 0;
    std::uint64_t client_sent_ = 0, drain_for_client_ = 0;
    bool interrupt_pending_ = false;
    std::uint64_t abort_by_ = 0;
};

}  // namespace uet::perf
