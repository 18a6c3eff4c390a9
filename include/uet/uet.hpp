// The whole public API of libuet.
#pragma once

#include "uet/address_vector.hpp"
#include "uet/atomic.hpp"
#include "uet/completion_queue.hpp"
#include "uet/endpoint.hpp"
#include "uet/fabric.hpp"
#include "uet/memory_region.hpp"
#include "uet/shared_buffer.hpp"
#include "uet/status.hpp"
#include "uet/version.hpp"
