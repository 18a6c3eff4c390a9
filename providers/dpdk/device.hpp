// What a user may write to name a port, turned into DPDK devargs (no DPDK needed: testable).
//   "net_memif0,role=server,socket=/tmp/x.sock"  a vdev string, used as is
//   "eth0"                                       -> net_af_packet on eth0 ("any NIC")
//   "xdp:eth0"                                   -> net_af_xdp on eth0
//   "0000:01:00.0" or "01:00.0"                  -> a PCI device (probed, needs vfio-pci)
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace uet::dpdk {

struct device_spec {
    enum class kind { vdev, pci } type = kind::vdev;
    std::string name;  // vdev: "net_memif0"; pci: "0000:01:00.0"
    std::string args;  // vdev arguments after the first comma (may be empty)
    std::string devargs() const { return args.empty() ? name : name + "," + args; }
};

// nullopt for an empty string or one that is none of the forms above (e.g. an interface name
// with characters Linux does not allow).
std::optional<device_spec> parse_device(std::string_view text);

}  // namespace uet::dpdk
