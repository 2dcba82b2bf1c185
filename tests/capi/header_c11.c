/* The public header alone, as strict C11 (-std=c11 -Wall -Wextra -pedantic -Werror): it must
 * need nothing but <stddef.h>, <stdint.h> and <stdbool.h>. Compiling is the test. */
#include "mcpclass/mcpclass.h"
#include "mcpclass/mcpclass.h" /* include guard */

/* Every type is usable from C; the structs are plain. */
static const mcpc_result kResult = {0};
static const mcpc_batch kBatch = {0, 0};
static const mcpc_categories kCategories = {0, 0};

int mcpc_header_c11_check(void);
int mcpc_header_c11_check(void) {
  mcpc_classify_callback classify = 0;
  mcpc_tool_callback tool = 0;
  mcpc_destroy_callback destroy = 0;
  const char* (*version)(void) = mcpc_version;
  (void)classify;
  (void)tool;
  (void)destroy;
  (void)version;
  return MCPC_ABI_VERSION + (int)kResult.class_index + (int)kBatch.count + (int)kCategories.count +
         (MCPC_NTS == (size_t)-1);
}
