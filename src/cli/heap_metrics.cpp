// The process heap as Prometheus gauges, for GET /metrics of `mcpclass serve`: bytes the allocator
// has handed out and not yet got back. RSS alone cannot show that evicted sessions were freed —
// glibc keeps freed pages in its arenas for reuse — so the load tests watch this figure.
#include "cli/app.hpp"

#include <fmt/format.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define MCPCLASS_HAVE_MALLINFO2 1
#endif

namespace mcpclass::cli {

std::string heap_metrics() {
#ifdef MCPCLASS_HAVE_MALLINFO2
  const struct mallinfo2 m = ::mallinfo2();
  return fmt::format(
      "# HELP mcpclass_heap_in_use_bytes Heap bytes allocated and not freed (glibc mallinfo2).\n"
      "# TYPE mcpclass_heap_in_use_bytes gauge\n"
      "mcpclass_heap_in_use_bytes {}\n"
      "# HELP mcpclass_heap_reserved_bytes Heap bytes obtained from the system, in use or free.\n"
      "# TYPE mcpclass_heap_reserved_bytes gauge\n"
      "mcpclass_heap_reserved_bytes {}\n",
      m.uordblks + m.hblkhd, m.arena + m.hblkhd);
#else
  return {};
#endif
}

}  // namespace mcpclass::cli
