// The allocator settings of `mcpclass serve` that keep large transient buffers from staying in
// RSS (the heap gauges of GET /metrics are the service's: service/heap_metrics.hpp).
#include "cli/app.hpp"

#ifdef __GLIBC__
#include <malloc.h>  // mallopt
#endif

namespace mcpclass::cli {

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
