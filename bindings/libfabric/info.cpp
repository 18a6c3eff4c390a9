// The provider's entry point, its FI_UET_* variables and fi_getinfo.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/providers/fi_log.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "uet_fi/uet_fi.hpp"

namespace uet_fi {

namespace {

void cleanup() {}

// FI_MULTI_RECV: untagged receives only (fi_recvmsg with FI_MULTI_RECV).
constexpr std::uint64_t supported_caps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_DIRECTED_RECV |
                                         FI_MULTI_RECV | FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM;
// RMA and atomic addresses are offsets into the target's region (no FI_MR_VIRT_ADDR) named by
// uet's keys (FI_MR_PROV_KEY): offered to applications that take provider keys (API 1.5 on).
constexpr std::uint64_t rma_caps =
    FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;

// FI_EP_DGRAM (UUD underneath): untagged and tagged messages of one packet each.
constexpr std::uint64_t dgram_caps = FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | FI_MULTI_RECV |
                                     FI_SOURCE | FI_LOCAL_COMM | FI_REMOTE_COMM;

std::uint64_t offered_caps(std::uint32_t version, const fi_info* hints, fi_ep_type type) {
    if (type == FI_EP_DGRAM) return dgram_caps;
    if (!FI_VERSION_GE(version, FI_VERSION(1, 5))) return supported_caps;
    if (hints != nullptr && hints->domain_attr != nullptr &&
        !(hints->domain_attr->mr_mode & FI_MR_PROV_KEY))
        return supported_caps;
    return supported_caps | rma_caps;
}

constexpr std::uint32_t default_port = 4793;

struct param {
    const char* name;
    fi_param_type type;
    const char* help;
};
constexpr param params[] = {
    {"provider", FI_PARAM_STRING,
     "uet provider underneath: pipe (endpoints of this process, virtual time) or dpdk (a DPDK "
     "port: memif, af_packet, af_xdp, tap, a NIC). Default: dpdk when FI_UET_DEVICE is set, "
     "else pipe"},
    {"device", FI_PARAM_STRING,
     "dpdk: the port, a vdev (net_memif0,role=server,socket=/tmp/uet.sock), an interface "
     "(af_packet: eth0; af_xdp: xdp:eth0) or a PCI address"},
    {"address", FI_PARAM_STRING,
     "dpdk: the port's IPv4 address and prefix, A.B.C.D/LEN (its endpoints share it, told apart "
     "by PIDonFEP)"},
    {"eal_args", FI_PARAM_STRING, "dpdk: extra EAL arguments (a unique --file-prefix is added)"},
    {"mtu", FI_PARAM_INT,
     "SES payload bytes per packet (64..8192); default 4096 on the pipe, the largest that fits "
     "a 1500-byte port (1344) on dpdk. Both ends must agree"},
    {"mode", FI_PARAM_STRING, "UET delivery mode of FI_EP_RDM endpoints: rud (default), rod, rudi"},
    {"cc", FI_PARAM_STRING, "congestion control: nscc (default), rccc, none"},
    {"lb", FI_PARAM_STRING,
     "path policy (entropy per packet): reps (default), oblivious, bitmap, "
     "static"},
    {"job", FI_PARAM_INT, "UET JobID of the endpoints (24 bits, default 1): peers must agree"},
    {"busy_poll", FI_PARAM_BOOL, "dpdk: never back off while idle (dedicated cores)"},
    {"capture", FI_PARAM_STRING, "record every frame in this pcap file (debugging)"},
    {"stats", FI_PARAM_BOOL, "print each endpoint's counters to stderr when it closes"},
    {"tss_key_file", FI_PARAM_STRING,
     "seal every frame (UET TSS, AES-256-GCM) with the secure domain key in this file (32 "
     "bytes, or 64 hex digits); peers must hold the same key, SDI and epoch"},
    {"tss_sdi", FI_PARAM_INT, "TSS secure domain identifier (24 bits, default 1)"},
    {"tss_epoch", FI_PARAM_INT, "TSS epoch of the domain key (0..65535, default 0)"},
    {"answers_in_acks", FI_PARAM_BOOL,
     "answer peers' requests in the PDS ACK when the answer is known by then (default on: one "
     "frame per message instead of two; 0: every answer as a response message)"},
};

std::string get_str(const char* name) {
    char* value = nullptr;
    if (fi_param_get_str(&provider, name, &value) != FI_SUCCESS || value == nullptr) return {};
    return value;
}

template <class E, std::size_t N>
bool pick(const std::string& text, const std::pair<std::string_view, E> (&names)[N], E& out) {
    for (const auto& [name, value] : names) {
        if (text == name) {
            out = value;
            return true;
        }
    }
    return false;
}

constexpr std::pair<std::string_view, uet::delivery> modes[] = {
    {"rud", uet::delivery::rud}, {"rod", uet::delivery::rod}, {"rudi", uet::delivery::rudi}};
constexpr std::pair<std::string_view, uet::congestion_control> ccs[] = {
    {"nscc", uet::congestion_control::nscc},
    {"rccc", uet::congestion_control::rccc},
    {"none", uet::congestion_control::none}};
constexpr std::pair<std::string_view, uet::path_policy> lbs[] = {
    {"reps", uet::path_policy::reps},
    {"oblivious", uet::path_policy::oblivious},
    {"bitmap", uet::path_policy::bitmap},
    {"static", uet::path_policy::static_path}};

// The endpoint address a dpdk fabric will have: FI_UET_ADDRESS without its prefix length.
std::uint32_t configured_ip(const config& c) {
    const std::string ip = c.address.substr(0, c.address.find('/'));
    in_addr a{};
    if (inet_pton(AF_INET, ip.c_str(), &a) != 1) return 0;
    return ntohl(a.s_addr);
}

sockaddr_in* new_sockaddr(std::uint32_t ip, std::uint16_t port) {
    auto* sin = static_cast<sockaddr_in*>(std::calloc(1, sizeof(sockaddr_in)));
    if (sin == nullptr) return nullptr;
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    sin->sin_addr.s_addr = htonl(ip);
    return sin;
}

// node/service as an IPv4 address and UDP port; false when node is not one.
bool parse_node(const char* node, const char* service, std::uint32_t& ip, std::uint16_t& port) {
    in_addr a{};
    if (node == nullptr || inet_pton(AF_INET, node, &a) != 1) return false;
    ip = ntohl(a.s_addr);
    port = default_port;
    if (service != nullptr) {
        char* end = nullptr;
        const unsigned long p = std::strtoul(service, &end, 10);
        if (*service == '\0' || *end != '\0' || p == 0 || p > 65535) return false;
        port = static_cast<std::uint16_t>(p);
    }
    return true;
}

int refuse(const char* why) {
    FI_INFO(&provider, FI_LOG_CORE, "uet: %s\n", why);
    return -FI_ENODATA;
}

// Why an endpoint of this type cannot meet the hints; nullptr when it can.
const char* unmet(std::uint32_t version, const fi_info* hints, const config& cfg, fi_ep_type type) {
    if (hints == nullptr) return nullptr;
    if (const std::uint64_t extra = hints->caps & ~offered_caps(version, hints, type)) {
        FI_INFO(&provider, FI_LOG_CORE, "uet: %s: not offered: %s\n",
                type == FI_EP_DGRAM ? "FI_EP_DGRAM" : "FI_EP_RDM", fi_tostr(&extra, FI_TYPE_CAPS));
        return type == FI_EP_DGRAM ? "FI_EP_DGRAM: messages only"
                                   : "hints ask for capabilities uet does not offer (FI_RMA and "
                                     "FI_ATOMIC need FI_MR_PROV_KEY)";
    }
    if (hints->addr_format != FI_FORMAT_UNSPEC && hints->addr_format != FI_SOCKADDR_IN &&
        hints->addr_format != FI_SOCKADDR)
        return "addresses are FI_SOCKADDR_IN";
    if (const fi_ep_attr* ep = hints->ep_attr) {
        if (ep->max_msg_size > max_msg_size(cfg, type))
            return type == FI_EP_DGRAM ? "FI_EP_DGRAM: max_msg_size above one packet (FI_UET_MTU)"
                                       : "max_msg_size above 2 GiB";
        if (ep->tx_ctx_cnt > 1 || ep->rx_ctx_cnt > 1) return "one transmit and receive context";
    }
    if (const fi_domain_attr* d = hints->domain_attr) {
        if (d->name != nullptr && domain_name(cfg) != d->name) return "another domain name";
        if (d->threading != FI_THREAD_UNSPEC && d->threading != FI_THREAD_DOMAIN)
            return "FI_THREAD_DOMAIN only";
        if (d->data_progress == FI_PROGRESS_AUTO || d->control_progress == FI_PROGRESS_AUTO)
            return "FI_PROGRESS_MANUAL only";
        if (d->av_type != FI_AV_UNSPEC && d->av_type != FI_AV_TABLE && d->av_type != FI_AV_MAP)
            return "FI_AV_TABLE or FI_AV_MAP";
    }
    if (const fi_fabric_attr* f = hints->fabric_attr) {
        if (f->prov_name != nullptr && strcasecmp(f->prov_name, provider.name) != 0)
            return "another provider";
        if (f->name != nullptr && fabric_name(cfg) != f->name) return "another fabric name";
    }
    const std::uint64_t order = msg_order(hints);
    if (order & ~std::uint64_t{FI_ORDER_SAS}) return "message order: FI_ORDER_SAS only";
    if (order != 0 && type == FI_EP_DGRAM) return "FI_EP_DGRAM: no message order";
    if (order != 0 && cfg.mode_set && cfg.mode != uet::delivery::rod)
        return "message order: FI_UET_MODE is not rod";
    if (const fi_tx_attr* tx = hints->tx_attr) {
        if (tx->iov_limit > 1) return "one iov per operation";
        if (tx->inject_size > 256) return "inject_size above 256";
    }
    if (const fi_rx_attr* rx = hints->rx_attr) {
        if (rx->iov_limit > 1) return "one iov per operation";
    }
    return nullptr;
}

}  // namespace

fi_provider provider = {
    .version = FI_VERSION(0, 1),
    .fi_version = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
    .context = {},
    .name = "uet",
    .getinfo = getinfo,
    .fabric = open_fabric,
    .cleanup = cleanup,
};

fi_ops base_ops(int (*close)(fid*), int (*bind)(fid*, fid*, std::uint64_t),
                int (*control)(fid*, int, void*)) {
    fi_ops o{};
    o.size = sizeof(o);
    o.close = close;
    set_enosys(o.bind);
    set_enosys(o.control);
    set_enosys(o.ops_open);
    set_enosys(o.tostr);
    set_enosys(o.ops_set);
    if (bind != nullptr) o.bind = bind;
    if (control != nullptr) o.control = control;
    return o;
}

void define_params() {
    for (const param& p : params)
        fi_param_define(&provider, p.name, p.type, "%s", p.help);
}

config read_config() {
    config c;
    c.device = get_str("device");
    c.provider = get_str("provider");
    if (c.provider.empty()) c.provider = c.device.empty() ? "pipe" : "dpdk";
    if (c.provider != "pipe" && c.provider != "dpdk")
        c.error = "FI_UET_PROVIDER must be pipe or dpdk, not " + c.provider;
    c.address = get_str("address");
    c.eal_args = get_str("eal_args");
    c.capture = get_str("capture");
    int n = 0;
    if (fi_param_get_int(&provider, "mtu", &n) == FI_SUCCESS) {
        if (n < 64 || n > 8192) c.error = "FI_UET_MTU must be 64..8192";
        c.mtu = static_cast<std::uint32_t>(n);
    }
    if (fi_param_get_int(&provider, "job", &n) == FI_SUCCESS) {
        if (n < 0 || n >= (1 << 24)) c.error = "FI_UET_JOB must be 0..16777215";
        c.job = static_cast<std::uint32_t>(n);
    }
    if (fi_param_get_bool(&provider, "busy_poll", &n) == FI_SUCCESS) c.busy_poll = n != 0;
    if (fi_param_get_bool(&provider, "stats", &n) == FI_SUCCESS) c.stats = n != 0;
    c.tss_key_file = get_str("tss_key_file");
    if (!c.tss_key_file.empty()) {
        std::string why;
        if (auto k = uet::tss_key::from_file(c.tss_key_file, why))
            c.tss_key = std::move(*k);
        else
            c.error = "FI_UET_TSS_KEY_FILE " + c.tss_key_file + ": " + why;
    }
    if (fi_param_get_int(&provider, "tss_sdi", &n) == FI_SUCCESS) {
        if (n < 0 || n >= (1 << 24)) c.error = "FI_UET_TSS_SDI must be 0..16777215";
        c.tss_sdi = static_cast<std::uint32_t>(n);
    }
    if (fi_param_get_int(&provider, "tss_epoch", &n) == FI_SUCCESS) {
        if (n < 0 || n > 65535) c.error = "FI_UET_TSS_EPOCH must be 0..65535";
        c.tss_epoch = static_cast<std::uint16_t>(n);
    }
    if (c.tss_key_file.empty() && (fi_param_get_int(&provider, "tss_sdi", &n) == FI_SUCCESS ||
                                   fi_param_get_int(&provider, "tss_epoch", &n) == FI_SUCCESS))
        c.error = "FI_UET_TSS_SDI and FI_UET_TSS_EPOCH need FI_UET_TSS_KEY_FILE";
    if (fi_param_get_bool(&provider, "answers_in_acks", &n) == FI_SUCCESS)
        c.answers_in_acks = n != 0;
    if (const std::string m = get_str("mode"); !m.empty()) {
        c.mode_set = true;
        if (!pick(m, modes, c.mode)) c.error = "FI_UET_MODE must be rud, rod or rudi";
    }
    if (const std::string v = get_str("cc"); !v.empty() && !pick(v, ccs, c.cc))
        c.error = "FI_UET_CC must be nscc, rccc or none";
    if (const std::string v = get_str("lb"); !v.empty() && !pick(v, lbs, c.lb))
        c.error = "FI_UET_LB must be reps, oblivious, bitmap or static";
    if (c.provider == "dpdk" && (c.device.empty() || c.address.empty()))
        c.error = "FI_UET_PROVIDER=dpdk needs FI_UET_DEVICE and FI_UET_ADDRESS";
    if (c.provider == "dpdk" && c.error.empty() && configured_ip(c) == 0)
        c.error = "FI_UET_ADDRESS must be A.B.C.D/LEN";
    return c;
}

std::string fabric_name(const config& c) {
    if (c.provider != "dpdk") return "uet-pipe";
    const std::string& d = c.device;
    if (d.starts_with("net_memif") || d.starts_with("uet_memif")) return "uet-memif";
    if (d.starts_with("net_af_packet")) return "uet-af_packet";
    if (d.starts_with("xdp:") || d.starts_with("net_af_xdp")) return "uet-af_xdp";
    if (d.starts_with("net_tap")) return "uet-tap";
    if (d.starts_with("net_")) return "uet-dpdk";
    if (d.find(':') != std::string::npos) return "uet-pci";
    return "uet-af_packet";  // a Linux interface name
}

uet::delivery endpoint_mode(const config& c, const fi_info* info) {
    if (c.mode_set || info == nullptr) return c.mode;
    return (msg_order(info) & FI_ORDER_SAS) ? uet::delivery::rod : c.mode;
}

std::uint64_t msg_order(const fi_info* info) {
    return (info->tx_attr ? info->tx_attr->msg_order : 0) |
           (info->rx_attr ? info->rx_attr->msg_order : 0);
}

std::string domain_name(const config& c) {
    if (c.provider != "dpdk") return "pipe";
    return c.device.substr(0, c.device.find(','));
}

int to_fi_errno(std::error_code ec) noexcept {
    if (!ec) return 0;
    if (ec.category() != uet::uet_category()) return -FI_EOTHER;
    switch (static_cast<uet::errc>(ec.value())) {
        case uet::errc::again:
        case uet::errc::cq_full:
            return -FI_EAGAIN;
        case uet::errc::invalid_argument:
            return -FI_EINVAL;
        case uet::errc::message_too_long:
            return -FI_EMSGSIZE;
        case uet::errc::unknown_peer:
            return -FI_EADDRNOTAVAIL;
        case uet::errc::bad_memory_key:
            return -FI_EKEYREJECTED;
        case uet::errc::access_denied:
        case uet::errc::job_mismatch:
            return -FI_EACCES;
        case uet::errc::out_of_bounds:
            return -FI_EINVAL;
        case uet::errc::truncated:
            return -FI_ETRUNC;
        case uet::errc::endpoint_closed:
            return -FI_EOPBADSTATE;
        case uet::errc::cq_overrun:
            return -FI_EOVERRUN;
        case uet::errc::canceled:
            return -FI_ECANCELED;
        case uet::errc::retry_limit:
            return -FI_ETIMEDOUT;
        case uet::errc::peer_unreachable:
            return -FI_EHOSTUNREACH;
        case uet::errc::unsupported:
            return -FI_EOPNOTSUPP;
        case uet::errc::no_match:
            return -FI_ENORX;
        case uet::errc::remote_error:
            return -FI_EREMOTEIO;
        case uet::errc::no_message:
            return -FI_ENOMSG;
        case uet::errc::not_found:
            return -FI_ENOENT;
        case uet::errc::busy:
            return -FI_EBUSY;
    }
    return -FI_EOTHER;
}

namespace {

// Where the application wants to be (FI_SOURCE) or to reach: node and service, or the hints.
struct node_addr {
    bool has_node = false;
    std::uint32_t ip = 0;
    std::uint16_t port = 0;
};

// One fi_info for an endpoint of this type that meets the hints (unmet() said so).
fi_info* make_info(std::uint32_t version, const node_addr& n, std::uint64_t flags,
                   const fi_info* hints, const config& cfg, fi_ep_type type) {
    fi_info* fi = fi_allocinfo();
    if (fi == nullptr) return nullptr;
    const bool dgram = type == FI_EP_DGRAM;
    fi->caps =
        hints != nullptr && hints->caps != 0 ? hints->caps : offered_caps(version, hints, type);
    if (!(fi->caps & (FI_LOCAL_COMM | FI_REMOTE_COMM))) fi->caps |= FI_LOCAL_COMM | FI_REMOTE_COMM;
    fi->mode = 0;
    fi->addr_format = FI_SOCKADDR_IN;
    fi->ep_attr->type = type;
    fi->ep_attr->protocol = FI_PROTO_UNSPEC;
    fi->ep_attr->protocol_version = 1;
    fi->ep_attr->max_msg_size = max_msg_size(cfg, type);
    fi->ep_attr->tx_ctx_cnt = 1;
    fi->ep_attr->rx_ctx_cnt = 1;
    // uet matches all 64 bits of a tag. This is libfabric's FI_TAG_GENERIC (its internal
    // headers only): Open MPI counts the leading zero bits as bits it may not use.
    fi->ep_attr->mem_tag_format = 0xaaaa'aaaa'aaaa'aaaaULL;
    const std::uint64_t order =
        !dgram && endpoint_mode(cfg, hints) == uet::delivery::rod ? FI_ORDER_SAS : FI_ORDER_NONE;
    fi->tx_attr->caps = fi->caps;
    fi->tx_attr->msg_order = order;
    fi->tx_attr->comp_order = FI_ORDER_NONE;
    fi->tx_attr->inject_size = std::min<std::size_t>(256, fi->ep_attr->max_msg_size);
    fi->tx_attr->size = 1024;
    fi->tx_attr->iov_limit = 1;
    fi->tx_attr->rma_iov_limit = dgram ? 0 : 1;
    fi->tx_attr->op_flags = hints != nullptr && hints->tx_attr ? hints->tx_attr->op_flags : 0;
    fi->rx_attr->caps = fi->caps;
    fi->rx_attr->msg_order = order;
    fi->rx_attr->comp_order = FI_ORDER_NONE;
    fi->rx_attr->size = 1024;
    fi->rx_attr->iov_limit = 1;
    fi->rx_attr->op_flags = hints != nullptr && hints->rx_attr ? hints->rx_attr->op_flags : 0;
    fi->domain_attr->name = strdup(domain_name(cfg).c_str());
    fi->domain_attr->threading = FI_THREAD_DOMAIN;
    fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
    fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
    fi->domain_attr->av_type =
        hints != nullptr && hints->domain_attr ? hints->domain_attr->av_type : FI_AV_UNSPEC;
    fi->domain_attr->mr_mode = (fi->caps & rma_caps) ? FI_MR_PROV_KEY : 0;
    fi->domain_attr->mr_key_size = sizeof(std::uint64_t);
    // No remote CQ data (the capability FI_REMOTE_CQ_DATA is refused). A cq_data_size in the
    // hints without it is answered with 0 rather than refused: Open MPI's mtl ofi asks for 4
    // bytes and, given less, carries the source rank in the tag instead.
    fi->domain_attr->cq_data_size = 0;
    fi->domain_attr->cq_cnt = 64;
    fi->domain_attr->cntr_cnt = 64;
    // dpdk: the endpoints behind the port's one address, told apart by PIDonFEP.
    fi->domain_attr->ep_cnt = cfg.provider == "dpdk" ? uet::max_dpdk_endpoints : 256;
    fi->domain_attr->tx_ctx_cnt = fi->domain_attr->ep_cnt;
    fi->domain_attr->rx_ctx_cnt = fi->domain_attr->ep_cnt;
    fi->domain_attr->max_ep_tx_ctx = 1;
    fi->domain_attr->max_ep_rx_ctx = 1;
    fi->domain_attr->mr_cnt = 4096;
    fi->fabric_attr->name = strdup(fabric_name(cfg).c_str());
    fi->fabric_attr->prov_version = provider.version;
    fi->fabric_attr->api_version = version;
    // libfabric itself names the provider (fabric_attr->prov_name).
    if (fi->domain_attr->name == nullptr || fi->fabric_attr->name == nullptr) {
        fi_freeinfo(fi);
        return nullptr;
    }
    // Where the endpoint will be: dpdk knows from FI_UET_ADDRESS; the pipe numbers its
    // endpoints as they open.
    const bool source = n.has_node && (flags & FI_SOURCE);
    if (cfg.provider == "dpdk" || source) {
        fi->src_addr = new_sockaddr(source ? n.ip : configured_ip(cfg), source ? n.port : 4793);
        fi->src_addrlen = sizeof(sockaddr_in);
    }
    if (n.has_node && !(flags & FI_SOURCE)) {
        fi->dest_addr = new_sockaddr(n.ip, n.port);
        fi->dest_addrlen = sizeof(sockaddr_in);
    } else if (hints != nullptr && hints->dest_addr != nullptr) {
        fi->dest_addr = std::calloc(1, sizeof(sockaddr_in));
        if (fi->dest_addr != nullptr)
            std::memcpy(fi->dest_addr, hints->dest_addr, sizeof(sockaddr_in));
        fi->dest_addrlen = sizeof(sockaddr_in);
    }
    return fi;
}

}  // namespace

std::uint32_t fabric_mtu(const config& c) {
    if (c.mtu != 0) return c.mtu;
    return c.provider == "dpdk" ? uet::largest_dpdk_mtu(1500) : uet::fabric_attr{}.mtu;
}

std::size_t max_msg_size(const config& c, fi_ep_type type) {
    return type == FI_EP_DGRAM ? fabric_mtu(c) : std::size_t{1} << 31;
}

// The getinfo flag with which libfabric's utility providers (ofi_rxd, ofi_rxm) ask for a core
// provider to layer over (OFI_CORE_PROV_ONLY in libfabric's internal ofi_util.h, 1.5 on).
constexpr std::uint64_t core_provider_only = 1ULL << 59;

int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags,
            const fi_info* hints, fi_info** info) {
    // uet has reliable endpoints of its own: ofi_rxd's reliability over its datagrams would only
    // stand in their way (Open MPI, told to include "uet", takes "uet;ofi_rxd", listed first).
    if (flags & core_provider_only) return refuse("no utility provider over uet");
    const config cfg = read_config();
    if (!cfg.error.empty()) {
        FI_WARN(&provider, FI_LOG_CORE, "uet: %s\n", cfg.error.c_str());
        return -FI_ENODATA;
    }
    node_addr n;
    n.has_node = parse_node(node, service, n.ip, n.port);
    if (node != nullptr && !n.has_node) return refuse("node is not an IPv4 address");
    if (hints != nullptr && hints->dest_addr != nullptr &&
        (hints->dest_addrlen < sizeof(sockaddr_in) ||
         static_cast<const sockaddr*>(hints->dest_addr)->sa_family != AF_INET))
        return refuse("dest_addr is not a sockaddr_in");
    // FI_EP_RDM first (the richer), then FI_EP_DGRAM, each where the hints allow it.
    const fi_ep_type asked =
        hints != nullptr && hints->ep_attr != nullptr ? hints->ep_attr->type : FI_EP_UNSPEC;
    if (asked != FI_EP_UNSPEC && asked != FI_EP_RDM && asked != FI_EP_DGRAM)
        return refuse("FI_EP_RDM and FI_EP_DGRAM only");
    fi_info* head = nullptr;
    fi_info** tail = &head;
    const char* why = nullptr;
    for (const fi_ep_type type : {FI_EP_RDM, FI_EP_DGRAM}) {
        if (asked != FI_EP_UNSPEC && asked != type) continue;
        if (const char* no = unmet(version, hints, cfg, type)) {
            if (why == nullptr) why = no;
            continue;
        }
        fi_info* fi = make_info(version, n, flags, hints, cfg, type);
        if (fi == nullptr) {
            fi_freeinfo(head);
            return -FI_ENOMEM;
        }
        *tail = fi;
        tail = &fi->next;
    }
    if (head == nullptr) return refuse(why);
    *info = head;
    return 0;
}

}  // namespace uet_fi

extern "C" FI_EXT_INI {
    uet_fi::define_params();
    return &uet_fi::provider;
}
