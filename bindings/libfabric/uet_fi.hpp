// The libfabric provider "uet" (libuet-fi.so): libfabric's objects (fabric, domain, EQ, CQ, AV,
// MR, endpoint) over uet's public C++ API, for unmodified libfabric applications (fi_pingpong,
// MPI, NCCL's OFI plugin). It stands on libfabric's public headers alone: Debian's libfabric
// exports no ofi_*/util_* helpers, so the "not supported" operations are its own (enosys<>).
// Every object is single-threaded (FI_THREAD_DOMAIN) and progress is manual, driven by CQ reads.
#pragma once

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_prov.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "uet/uet.hpp"

namespace uet_fi {

extern fi_provider provider;

// What the FI_UET_* variables say (fi_param_get), read when a fabric opens or info is asked for.
struct config {
    std::string provider = "pipe";  // FI_UET_PROVIDER: pipe | dpdk
    std::string device;             // FI_UET_DEVICE: dpdk's vdev, interface or PCI address
    std::string address;            // FI_UET_ADDRESS: A.B.C.D/LEN (dpdk)
    std::string eal_args;           // FI_UET_EAL_ARGS
    std::string capture;            // FI_UET_CAPTURE: a pcap file
    std::uint32_t mtu = 0;          // FI_UET_MTU: 0, the provider's default
    std::uint32_t job = 1;          // FI_UET_JOB
    uet::delivery mode = uet::delivery::rud;
    bool mode_set = false;  // FI_UET_MODE given: else rod for applications that ask FI_ORDER_SAS
    uet::congestion_control cc = uet::congestion_control::nscc;
    uet::path_policy lb = uet::path_policy::reps;
    bool busy_poll = false;
    bool stats = false;  // FI_UET_STATS: print each endpoint's counters when it closes
    // FI_UET_TSS_KEY_FILE: the secure domain's key (32 bytes or 64 hex digits); every frame of
    // every endpoint sealed (UET TSS, AES-256-GCM) in domain FI_UET_TSS_SDI at FI_UET_TSS_EPOCH.
    std::string tss_key_file;
    uet::tss_key tss_key;
    std::uint32_t tss_sdi = 1;
    std::uint16_t tss_epoch = 0;
    // FI_UET_ANSWERS_IN_ACKS: on by default, as endpoint_attr::answers_in_acks (one frame per
    // message instead of two); 0 sends every answer as a response message of its own.
    bool answers_in_acks = true;
    std::string error;  // set when a variable holds a value it cannot take
};
void define_params();
config read_config();
std::string fabric_name(const config& c);  // "uet-pipe", "uet-memif", "uet-af_packet", ...
std::string domain_name(const config& c);  // "pipe", or the device up to its first comma
// The delivery mode of an RDM endpoint opened with info (or offered for hints): FI_UET_MODE when
// given, else rod when the application asks for FI_ORDER_SAS (MPI does), else rud.
uet::delivery endpoint_mode(const config& c, const fi_info* info);
// SES payload bytes per packet (FI_UET_MTU, else the provider's default).
std::uint32_t fabric_mtu(const config& c);
// An endpoint's largest message: 2 GiB on FI_EP_RDM, one packet on FI_EP_DGRAM.
std::size_t max_msg_size(const config& c, fi_ep_type type);
// The message order info asks for or has: its transmit and receive msg_order together.
std::uint64_t msg_order(const fi_info* info);

int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags,
            const fi_info* hints, fi_info** info);
int open_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);

// A libfabric error number (negative) for a uet error.
int to_fi_errno(std::error_code ec) noexcept;

// Fills every member of a libfabric ops table with a function that returns -FI_ENOSYS.
template <class F>
struct enosys;
template <class R, class... A>
struct enosys<R (*)(A...)> {
    static R fn(A...) { return static_cast<R>(-FI_ENOSYS); }
};
template <class... A>
struct enosys<const char* (*)(A...)> {
    static const char* fn(A...) { return nullptr; }
};
template <class F>
void set_enosys(F& member) {
    member = &enosys<F>::fn;
}

// A fid's ops: close, bind and control as given, the rest -FI_ENOSYS.
fi_ops base_ops(int (*close)(fid*), int (*bind)(fid*, fid*, std::uint64_t) = nullptr,
                int (*control)(fid*, int, void*) = nullptr);

// uet's endpoint names: a sockaddr_in (FI_SOCKADDR_IN, so arrays of them keep its stride) whose
// first two bytes of sin_zero hold the PIDonFEP, big-endian (0: the port's first endpoint, and
// any plain sockaddr_in).
sockaddr_in to_sockaddr(const uet::endpoint_address& a) noexcept;
uet::endpoint_address from_sockaddr(const sockaddr_in& sin) noexcept;

struct fabric_obj;
struct domain_obj;
struct cq_obj;
struct cntr_obj;
struct av_obj;
struct ep_obj;

struct fabric_obj {
    fid_fabric fid{};
    config cfg;
    std::shared_ptr<uet::fabric> fab;  // shared by every fi fabric of the process on one device
    int refs = 0;                      // open domains and EQs
};

struct domain_obj {
    fid_domain fid{};
    fabric_obj* fabric = nullptr;
    uet::domain dom;
    int refs = 0;  // open endpoints, CQs, AVs, MRs
};

struct eq_obj {
    fid_eq fid{};
    fabric_obj* fabric = nullptr;
};

struct mr_obj {
    fid_mr fid{};
    domain_obj* domain = nullptr;
    uet::memory_region mr;
};

// One completion as libfabric reports it, or an error entry (err != 0).
struct cq_entry {
    fi_cq_tagged_entry e{};
    int err = 0;
    int prov_errno = 0;
    std::size_t olen = 0;
    std::string detail;
    fi_addr_t src = FI_ADDR_NOTAVAIL;  // FI_SOURCE: the sender, where the AV names it
};

struct cq_obj {
    fid_cq fid{};
    domain_obj* domain = nullptr;
    fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
    std::vector<cq_entry> ring;  // grows when full (an entry is never dropped)
    std::size_t head = 0, count = 0;
    std::vector<ep_obj*> eps;  // bound endpoints: reading this queue progresses them
    std::string err_text;      // the last error entry's detail, until the next read
    int refs = 0;              // bound endpoints

    void push(cq_entry&& entry);
    void progress();
};

// A counter (fi_cntr): the completions and errors of the endpoint operations bound to it.
struct cntr_obj {
    fid_cntr fid{};
    domain_obj* domain = nullptr;
    std::uint64_t value = 0, errors = 0;
    std::vector<ep_obj*> eps;  // bound endpoints: reading or waiting progresses them
    void progress();
};

struct av_obj {
    fid_av fid{};
    domain_obj* domain = nullptr;
    fi_av_type type = FI_AV_TABLE;
    uet::address_vector av;
    std::vector<uet::peer_addr> table;  // FI_AV_TABLE: fi_addr is the index
    // FI_AV_TABLE: the first index naming each uet peer (indexed by the handle's value), for
    // FI_SOURCE; FI_ADDR_NOTAVAIL where none does.
    std::vector<fi_addr_t> index_of;
    static constexpr std::uint64_t max_reverse = 1u << 24;
    int refs = 0;  // bound endpoints
    // The uet peer of fi_addr, or nullopt when it names none.
    bool peer(fi_addr_t addr, uet::peer_addr& out) const noexcept;
    // The fi_addr that names a uet peer (a completion's source); FI_ADDR_NOTAVAIL if none.
    fi_addr_t fi_addr_of(uet::peer_addr p) const noexcept;
    void remember(uet::peer_addr p, fi_addr_t index);
    void forget(uet::peer_addr p, fi_addr_t index) noexcept;
};

struct ep_obj {
    fid_ep fid{};
    domain_obj* domain = nullptr;
    std::uint64_t caps = 0;
    std::uint64_t tx_op_flags = 0, rx_op_flags = 0;
    std::size_t tx_size = 1024, rx_size = 1024, inject_size = 256;
    // FI_OPT_MIN_MULTI_RECV: a multi-receive buffer is released once fewer bytes are left; set
    // before fi_enable (uet's endpoint_attr::min_multi_recv).
    std::size_t min_multi_recv = uet::endpoint_attr{}.min_multi_recv;
    cq_obj* tx_cq = nullptr;
    cq_obj* rx_cq = nullptr;
    // Counters bound with FI_SEND, FI_RECV, FI_READ (reads, fetching atomics) and FI_WRITE
    // (writes, other atomics).
    cntr_obj* send_cntr = nullptr;
    cntr_obj* recv_cntr = nullptr;
    cntr_obj* read_cntr = nullptr;
    cntr_obj* write_cntr = nullptr;
    bool tx_selective = false;  // FI_SELECTIVE_COMPLETION on the transmit queue
    bool rx_selective = false;  // ... on the receive queue: receives must ask FI_COMPLETION
    uet::delivery mode = uet::delivery::rud;  // endpoint_mode() of its fi_info
    av_obj* av = nullptr;
    uet::completion_queue cq;
    uet::endpoint ep;
    bool enabled = false;
    // Entries delivered to the transmit and receive CQs, and of those, error entries
    // (FI_UET_STATS prints them).
    std::uint64_t tx_entries = 0, rx_entries = 0, error_entries = 0;
    std::array<uet::completion, 32> batch{};
    // fi_sendmsg(FI_INJECT) with a completion: the message is copied into a slot that the send
    // then uses; the slot goes back when the send completes.
    struct inject_slot {
        void* context = nullptr;
        std::vector<std::byte> data;
        bool quiet = false;  // an fi_inject counted by a counter: no CQ entry
    };
    std::vector<inject_slot> slots;
    std::vector<inject_slot*> free_slots;
    // An operation that wants no CQ entry but is counted: uet must complete it (to count it),
    // so it gets one of these as its context, and its entry is dropped unless it failed.
    struct quiet_op {
        void* context = nullptr;
    };
    std::vector<quiet_op> quiet;
    std::vector<quiet_op*> free_quiet;

    void progress();
    std::size_t drain();  // one progress step; delivers and counts what it ended
    void deliver(const uet::completion& c);
};

int ep_open(fid_domain* domain, fi_info* info, fid_ep** ep, void* context);
// What uet is given as an operation's context: never nullptr, which uet's completions give to
// injects (a failed inject's entry, which libfabric never delivers: fi_inject has no
// completion, and Open MPI reads an error entry's context without looking). ep_obj::deliver
// gives the application its nullptr back.
inline char null_context_tag;
inline void* op_context(void* context) noexcept {
    return context != nullptr ? context : &null_context_tag;
}
// A post's return: 0, or libfabric's error; a full queue progresses, so that a retry can pass.
ssize_t posted(ep_obj* ep, std::error_code ec);
// Whether a send posted with these flags ends in a completion: fi_inject never does; others
// unless the transmit CQ was bound with FI_SELECTIVE_COMPLETION and FI_COMPLETION is not set.
bool wants_completion(const ep_obj* ep, std::uint64_t flags, bool inject_call);
// fi_trecvmsg with FI_PEEK (and FI_CLAIM) (probe.cpp): its completion, or an FI_ENOMSG error entry.
ssize_t tagged_peek(ep_obj* ep, const fi_msg_tagged* m, std::uint64_t flags);
// The claim an FI_PEEK | FI_CLAIM kept in the fi_context `context`, for its FI_CLAIM receive.
std::uint64_t claim_of(void* context) noexcept;
// fi_cancel: a posted receive with this context ends in an FI_ECANCELED error entry.
ssize_t ep_cancel(fid_t ep, void* context);
// FI_ATOMIC (atomic.cpp): the endpoint's atomic operations and fi_query_atomic.
fi_ops_atomic atomic_ops();
int query_atomic(fid_domain* domain, fi_datatype dt, fi_op op, fi_atomic_attr* attr,
                 std::uint64_t flags);
int cq_open(fid_domain* domain, fi_cq_attr* attr, fid_cq** cq, void* context);
int av_open(fid_domain* domain, fi_av_attr* attr, fid_av** av, void* context);
int cntr_open(fid_domain* domain, fi_cntr_attr* attr, fid_cntr** cntr, void* context);
// The context uet gets for an operation without a CQ entry that counter c (nullptr: none)
// counts: a quiet_op when c is set (nullptr if none is free), else the operation's own.
void* counted_context(ep_obj* ep, cntr_obj* c, void* context);
// posted() of an operation given ctx: a quiet_op it held goes back when the post failed.
ssize_t posted_counted(ep_obj* ep, std::error_code ec, void* ctx);

template <class Obj, class Fid>
Obj* self(Fid* f) noexcept {
    return reinterpret_cast<Obj*>(f);  // the fid is each object's first member
}

// A new object with its fid filled in (class, the application's context, ops); nullptr when
// memory ran out.
template <class Obj>
Obj* new_obj(std::size_t fclass, void* context, fi_ops* ops) {
    auto* o = new (std::nothrow) Obj;
    if (o == nullptr) return nullptr;
    o->fid.fid.fclass = fclass;
    o->fid.fid.context = context;
    o->fid.fid.ops = ops;
    return o;
}

}  // namespace uet_fi
