// C trampolines with the exact signatures of mcpclass.h's callback types; they forward to the
// Go functions exported in callbacks.go (cgo exports drop `const`).
#include "_cgo_export.h"

int mcpcgo_classify_bridge(void* user_data, const char* text, size_t text_len,
                           double* probabilities, size_t num_categories, char* error_message,
                           size_t error_message_size) {
  return mcpcgoClassify(user_data, (char*)text, text_len, probabilities, num_categories,
                        error_message, error_message_size);
}

void mcpcgo_tool_bridge(void* user_data, const char* arguments_json, size_t arguments_len,
                        mcpc_tool_reply* reply) {
  mcpcgoTool(user_data, (char*)arguments_json, arguments_len, reply);
}

void mcpcgo_destroy_bridge(void* user_data) {
  mcpcgoDestroy(user_data);
}
