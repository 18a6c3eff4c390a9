// The whole public API of libuet.
#pragma once

#include "address_vector.hpp"
#include "atomic.hpp"
#include "completion_queue.hpp"
#include "endpoint.hpp"
#include "fabric.hpp"
#include "memory_region.hpp"
#include "shared_buffer.hpp"
#include "status.hpp"
#include "version.hpp"
