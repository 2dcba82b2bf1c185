// The process heap of `mcpclass serve`: its Prometheus gauges for GET /metrics (bytes the allocator
// has handed out and not yet got back; RSS alone cannot show that evicted sessions were freed —
// glibc keeps freed pages in its arenas for reuse — so the load tests watch this figure), and the
// allocator settings that keep large transient buffers from staying in RSS.
#include "cli/app.hpp"

#include <fmt/format.h>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define MCPCLASS_HAVE_MALLINFO2 1
#endif
#ifdef __GLIBC__
#include <malloc.h>  // mallopt
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

void bound_heap_retention() {
#ifdef __GLIBC__
  // glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB), so after
  // the first 4 MiB body every later one comes from an arena that keeps the pages: RSS then grew by
  // 20-24 MiB over 20 hostile 4 MiB requests, depending on which threads served them. A fixed
  // threshold turns that off: blocks of 512 KiB and more are mapped and unmapped with their use.
  ::mallopt(M_MMAP_THRESHOLD, 512 * 1024);
#endif
}

}  // namespace mcpclass::cli
