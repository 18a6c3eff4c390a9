// Every DPDK header providers/dpdk uses (EAL, poll loop, port driver), included in one place. DPDK
// 22.11's headers are C: under C++20 its spinlock header increments volatile objects (deprecated in
// C++20) and several structures end in flexible arrays. Silence exactly those diagnostics here
// instead of lowering warnings for the whole project. Private: never include this from a public
// header.
#pragma once

#pragma GCC diagnostic push
#if defined(__clang__)
#pragma GCC diagnostic ignored "-Wdeprecated-volatile"
#pragma GCC diagnostic ignored "-Wc99-extensions"
#pragma GCC diagnostic ignored "-Wzero-length-array"
#else
#pragma GCC diagnostic ignored "-Wvolatile"
#endif
#pragma GCC diagnostic ignored "-Wpedantic"

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_flow.h>
#include <rte_interrupts.h>
#include <rte_ip.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_udp.h>
#include <rte_version.h>

#pragma GCC diagnostic pop
