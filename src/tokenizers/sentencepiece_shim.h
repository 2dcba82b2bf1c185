// Internal: the C interface of libmcpclass_spm.so, a tiny library that is the only thing linked
// against libsentencepiece. Debian's libsentencepiece embeds and exports protobuf-lite 3.14 while
// libtorch uses the system protobuf 3.21; loading the shim with
// dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND) keeps the two apart (issue 7, pitfall 1).
// Plain C types only, so nothing of either protobuf crosses the boundary.
#pragma once

#include <stddef.h>
#include <stdint.h>

extern "C" {

/// An opaque loaded model.
struct mcpclass_spm;

/// Receives a byte buffer (error messages, serialized protos); valid only during the call.
typedef void (*mcpclass_spm_bytes_sink)(void* user, const char* data, size_t size);
/// Receives token ids; valid only during the call.
typedef void (*mcpclass_spm_ids_sink)(void* user, const int32_t* ids, size_t count);

/// Status: 0 ok, -1 failure (the message went to `error`).
typedef int (*mcpclass_spm_load_fn)(const char* model, size_t model_size, struct mcpclass_spm** out,
                                    mcpclass_spm_bytes_sink error, void* user);
typedef int (*mcpclass_spm_encode_fn)(const struct mcpclass_spm* spm, const char* text, size_t size,
                                      mcpclass_spm_ids_sink ids, mcpclass_spm_bytes_sink error,
                                      void* user);
typedef int (*mcpclass_spm_piece_count_fn)(const struct mcpclass_spm* spm);
typedef void (*mcpclass_spm_free_fn)(struct mcpclass_spm* spm);
/// The serialized NormalizerSpec sentencepiece's trainer builds for a rule name ("nfkc").
typedef int (*mcpclass_spm_normalizer_fn)(const char* rule_name, mcpclass_spm_bytes_sink spec,
                                          mcpclass_spm_bytes_sink error, void* user);
}
