// The process heap as Prometheus gauges for GET /metrics: bytes the allocator has handed out and
// not yet got back. RSS alone cannot show that evicted sessions were freed (glibc keeps freed
// pages in its arenas for reuse), so the load tests watch this figure.
// A plain function; thread-safe.
#pragma once

#include <string>

namespace mcpclass::service {

/// mcpclass_heap_in_use_bytes and mcpclass_heap_reserved_bytes; empty where the C library
/// cannot tell.
std::string heap_metrics();

}  // namespace mcpclass::service
