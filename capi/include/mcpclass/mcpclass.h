/*
 * mcpclass.h: the C ABI of mcpclass, an embeddable library that classifies LLM queries and
 * speaks the Model Context Protocol (MCP).
 *
 * Conventions (the same for every function below):
 *
 *  - Handles are opaque. Each `mcpc_x` is made by `mcpc_x_new*(..., mcpc_x **out, mcpc_error
 *    **err)` and released by `mcpc_x_free(x)`; every `*_free` accepts NULL and does nothing.
 *  - Fallible functions return an `int` status: MCPC_OK (0) or one of the stable negative
 *    MCPC_ERR_* codes below. They never touch `*out` on failure except to set it to NULL, and
 *    they set `*out` only on success.
 *  - `err` may be NULL. Otherwise the function sets `*err` to NULL on success and, on failure,
 *    to a new `mcpc_error` carrying the same code and a message, which the caller releases with
 *    mcpc_error_free(). The library never reads `*err`. No thread-local "last error" exists.
 *  - No C++ exception ever crosses this interface.
 *  - Every buffer the library returns is released by exactly one documented call:
 *      mcpc_error      -> mcpc_error_free        char * (JSON)   -> mcpc_string_free
 *      mcpc_result     -> mcpc_result_free       mcpc_batch      -> mcpc_batch_free
 *      mcpc_categories -> mcpc_categories_free   mcpc_decision   -> mcpc_decision_free
 *    Pointers inside those structs belong to them and stay valid until that call.
 *  - Texts are UTF-8. A text argument comes with a length in bytes; pass MCPC_NTS when the text
 *    is NUL-terminated.
 *  - Thread-safety is stated at each function. In short: configs, classifiers and servers may be
 *    used from many threads at once; only `*_free` needs exclusive access (no other call on the
 *    same handle may be running or start afterwards).
 *
 * This header needs only <stddef.h>, <stdint.h> and <stdbool.h> and compiles as C11 and C++.
 */
#ifndef MCPCLASS_MCPCLASS_H
#define MCPCLASS_MCPCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* MCPC_API marks the exported functions. Only `mcpc_` symbols leave the shared library. */
#if defined(_WIN32)
#if defined(MCPC_BUILDING_LIBRARY)
#define MCPC_API __declspec(dllexport)
#else
#define MCPC_API
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define MCPC_API __attribute__((visibility("default")))
#else
#define MCPC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------ */
/* Versions                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/** Version of the library this header belongs to (semantic versioning). */
#define MCPC_VERSION_MAJOR 0
#define MCPC_VERSION_MINOR 1
#define MCPC_VERSION_PATCH 0
/** "MAJOR.MINOR.PATCH" of this header. */
#define MCPC_VERSION_STRING "0.1.0"
/** MAJOR * 10000 + MINOR * 100 + PATCH, for compile-time comparisons. */
#define MCPC_VERSION_NUMBER \
  (MCPC_VERSION_MAJOR * 10000 + MCPC_VERSION_MINOR * 100 + MCPC_VERSION_PATCH)
/** Incremented whenever a struct layout, a signature or a meaning of this header changes
 *  incompatibly. A host built against ABI N must refuse a library whose mcpc_abi_version()
 *  differs from N. */
#define MCPC_ABI_VERSION 1

/** The loaded library's version string ("0.1.0"); static storage, never freed.
 *  Thread-safety: any thread, any time. */
MCPC_API const char* mcpc_version(void);

/** The loaded library's MCPC_ABI_VERSION: compare with the header's at load time.
 *  Thread-safety: any thread, any time. */
MCPC_API int mcpc_abi_version(void);

/* ------------------------------------------------------------------------------------------ */
/* Status codes and errors                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** Success. */
#define MCPC_OK 0
/** A required pointer was NULL, a size or flag was out of range, or JSON given to the library
 *  was malformed. */
#define MCPC_ERR_INVALID_ARGUMENT (-1)
/** Memory ran out. */
#define MCPC_ERR_NO_MEMORY (-2)
/** The configuration document is malformed, violates the schema, or its file cannot be read.
 *  mcpc_error_path() names the offending key when there is one. */
#define MCPC_ERR_CONFIG (-3)
/** The text cannot be classified: empty or only whitespace, longer than the configured
 *  `server.max_text_length` (code points), or not valid UTF-8. */
#define MCPC_ERR_INVALID_TEXT (-4)
/** The classifier failed or cannot be built: a host callback reported an error or returned an
 *  invalid distribution; a learned classifier's model files are missing or damaged; a remote
 *  classifier's server answered with an error, offers no classification tool, or returned an
 *  invalid result. */
#define MCPC_ERR_CLASSIFY (-5)
/** The call does not fit the handle's state (a transport already running, or not running). */
#define MCPC_ERR_STATE (-6)
/** A transport could not start (address in use, bad host name, bad file descriptor). */
#define MCPC_ERR_TRANSPORT (-7)
/** The named item (a tool) does not exist. */
#define MCPC_ERR_NOT_FOUND (-8)
/** A remote classifier's server cannot be reached, did not answer within the configured
 *  `timeout`, or its circuit breaker is open after repeated failures. Transient: the same call
 *  may succeed later (a host may fall back to a local classifier meanwhile). The message names
 *  the server. */
#define MCPC_ERR_UNAVAILABLE (-9)
/** A bug: an unexpected internal failure. The message says what. */
#define MCPC_ERR_INTERNAL (-100)

/** An error: a status code and a message. Created by the library, freed by mcpc_error_free. */
typedef struct mcpc_error mcpc_error;

/** The code (an MCPC_ERR_* value) of `error`; MCPC_OK for NULL. Thread-safety: any thread. */
MCPC_API int mcpc_error_code(const mcpc_error* error);

/** The human-readable message of `error` ("" for NULL), valid until mcpc_error_free(error).
 *  Thread-safety: any thread. */
MCPC_API const char* mcpc_error_message(const mcpc_error* error);

/** For MCPC_ERR_CONFIG: the key path the message is about (`classifier.rules.math`), or "" when
 *  the error is not about one key (syntax and I/O errors, other codes, NULL). Valid until
 *  mcpc_error_free(error). Thread-safety: any thread. */
MCPC_API const char* mcpc_error_path(const mcpc_error* error);

/** Releases `error`. NULL-safe. Thread-safety: any thread, once nothing reads `error`. */
MCPC_API void mcpc_error_free(mcpc_error* error);

/** The name of a status code ("MCPC_OK", "MCPC_ERR_CONFIG", ...; "MCPC_ERR_UNKNOWN" for codes
 *  this version does not define); static storage. Thread-safety: any thread. */
MCPC_API const char* mcpc_status_name(int status);

/** Releases a string returned by the library (JSON documents). NULL-safe. Thread-safety: any
 *  thread, once nothing reads the string. */
MCPC_API void mcpc_string_free(char* string);

/** Length argument meaning "the text is NUL-terminated". */
#define MCPC_NTS ((size_t)-1)

/* ------------------------------------------------------------------------------------------ */
/* Configuration                                                                              */
/* ------------------------------------------------------------------------------------------ */

/** A validated configuration document: categories, classifier, routing policy and server
 *  settings (the same YAML/JSON schema the `mcpclass` command line reads). Immutable. */
typedef struct mcpc_config mcpc_config;

/** Parses a configuration document, YAML or JSON (JSON when the first non-blank character is
 *  `{`). `text` NULL or empty gives the embedded default (five categories, keyword rules).
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`out` NULL), MCPC_ERR_CONFIG (syntax or schema; the error
 *  names the key). Thread-safety: any thread. */
MCPC_API int mcpc_config_new(const char* text, size_t text_len, mcpc_config** out,
                             mcpc_error** err);

/** Loads a configuration file: `.json` is JSON, `.yaml`/`.yml` YAML, anything else detected
 *  from the content. Errors: MCPC_ERR_INVALID_ARGUMENT (`path` or `out` NULL), MCPC_ERR_CONFIG
 *  (unreadable file, syntax, schema). Thread-safety: any thread. */
MCPC_API int mcpc_config_new_from_file(const char* path, mcpc_config** out, mcpc_error** err);

/** Releases `config`. Classifiers and servers made from it do not need it. NULL-safe.
 *  Thread-safety: any thread; no call using `config` may be running. */
MCPC_API void mcpc_config_free(mcpc_config* config);

/* ------------------------------------------------------------------------------------------ */
/* Results                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** One category and its probability. */
typedef struct mcpc_category_probability {
  const char* name;
  double probability;
} mcpc_category_probability;

/** The entropy-based reasoning decision (the vLLM Semantic Router algorithm). */
typedef struct mcpc_decision {
  bool use_reasoning;
  /** How sure the decision is, in [0, 1]. */
  double confidence;
  /** Why, in the reference's words ("very_high_uncertainty", ...). */
  const char* reason;
  /** Which branch decided ("high_uncertainty_conservative", ...). */
  const char* strategy;
  /** The categories by probability, descending; equal probabilities keep class order. */
  const mcpc_category_probability* top_categories;
  size_t num_top_categories;
} mcpc_decision;

/** What a classification says. Every pointer belongs to the result. */
typedef struct mcpc_result {
  /** Index of the chosen category (the order of mcpc_classifier_categories()). */
  size_t class_index;
  /** Name of the chosen category. */
  const char* category;
  /** max(probabilities). */
  double confidence;
  /** The full distribution: one entry per category, index = class, sums to 1. */
  const double* probabilities;
  size_t num_probabilities;
  /** Shannon entropy of the distribution, bits. */
  double entropy;
  /** The recommended model. */
  const char* model;
  /** Whether to enable reasoning (the routing policy's answer). */
  bool use_reasoning;
  /** The entropy-based decision, always computed (diagnostics even when rules decided). */
  mcpc_decision decision;
} mcpc_result;

/** Releases `result`. NULL-safe. Thread-safety: any thread, once nothing reads `result`. */
MCPC_API void mcpc_result_free(mcpc_result* result);

/** Results of a batch, in the order of the texts. Every pointer belongs to the batch. */
typedef struct mcpc_batch {
  size_t count;
  const mcpc_result* results;
} mcpc_batch;

/** Releases `batch` and every result in it. NULL-safe. Thread-safety: any thread, once nothing
 *  reads `batch`. */
MCPC_API void mcpc_batch_free(mcpc_batch* batch);

/** Releases `decision` (from mcpc_reasoning_decide only; the decision inside an mcpc_result
 *  belongs to the result). NULL-safe. Thread-safety: any thread, once nothing reads
 *  `decision`. */
MCPC_API void mcpc_decision_free(mcpc_decision* decision);

/** One category as configured. */
typedef struct mcpc_category {
  const char* name;
  const char* description;
  /** The system prompt to inject for this category. */
  const char* system_prompt;
  /** The category's own model, or NULL when the routing policy chooses. */
  const char* model;
  /** The category's own reasoning setting: 1 yes, 0 no, -1 unset (the policy decides). */
  int use_reasoning;
} mcpc_category;

/** The categories of a classifier, in class-index order. */
typedef struct mcpc_categories {
  size_t count;
  const mcpc_category* items;
} mcpc_categories;

/** Releases `categories`. NULL-safe. Thread-safety: any thread, once nothing reads
 *  `categories`. */
MCPC_API void mcpc_categories_free(mcpc_categories* categories);

/* ------------------------------------------------------------------------------------------ */
/* Classifiers                                                                                */
/* ------------------------------------------------------------------------------------------ */

/** A classifier: categories, the configured classifier and the routing policy. Immutable and
 *  thread-safe: classify from as many threads as you like. */
typedef struct mcpc_classifier mcpc_classifier;

/** Builds the classifier `config` describes (NULL: the embedded default). A `remote` or
 *  `composite` classifier connects to its server here and fetches the categories from it.
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`out` NULL), MCPC_ERR_CONFIG (unsupported classifier kind,
 *  invalid rules), MCPC_ERR_CLASSIFY (model files, a remote server's answers),
 *  MCPC_ERR_UNAVAILABLE (the remote server cannot be reached). Thread-safety: any thread. */
MCPC_API int mcpc_classifier_new(const mcpc_config* config, mcpc_classifier** out,
                                 mcpc_error** err);

/**
 * A host-defined classifier computes the distribution: it fills `probabilities`
 * (`num_categories` entries, zeroed on entry, index = class in config order) with finite,
 * non-negative scores whose sum is positive; the library renormalises them, picks the class and
 * applies the routing policy. `text` is NUL-terminated and `text_len` bytes long.
 * Return 0 on success. On failure return non-zero and optionally write a NUL-terminated message
 * of at most `error_message_size` bytes (including the NUL) into `error_message`; the call then
 * fails with MCPC_ERR_CLASSIFY.
 *
 * Threads: called on the thread that called mcpc_classify / mcpc_classify_json /
 * mcpc_classify_batch, or, behind an mcpc_server, on the server's worker threads; possibly on
 * several threads at once. It must not free the classifier or a server that uses it.
 */
typedef int (*mcpc_classify_callback)(void* user_data, const char* text, size_t text_len,
                                      double* probabilities, size_t num_categories,
                                      char* error_message, size_t error_message_size);

/** Releases a callback's `user_data`. Called exactly once, after the last call of the callback
 *  it belongs to, on whichever thread drops the last reference (the thread of a *_free or
 *  mcpc_server_remove_tool, or a server worker thread). */
typedef void (*mcpc_destroy_callback)(void* user_data);

/** Makes a classifier whose distribution comes from `classify` (see mcpc_classify_callback);
 *  categories, routing policy and text limit come from `config` (NULL: the embedded default;
 *  its `classifier` section is ignored). `destroy` (may be NULL) receives `user_data` once the
 *  classifier and every server using it are gone. On failure `destroy` is not called: the
 *  caller keeps `user_data`. Errors: MCPC_ERR_INVALID_ARGUMENT (`classify` or `out` NULL).
 *  Thread-safety: any thread. */
MCPC_API int mcpc_classifier_new_host(const mcpc_config* config, mcpc_classify_callback classify,
                                      void* user_data, mcpc_destroy_callback destroy,
                                      mcpc_classifier** out, mcpc_error** err);

/** Releases `classifier`. Servers that use it keep it alive. NULL-safe. Thread-safety: any
 *  thread; no call on `classifier` may be running or start afterwards. */
MCPC_API void mcpc_classifier_free(mcpc_classifier* classifier);

/** Number of categories (0 for NULL). Thread-safety: any thread. */
MCPC_API size_t mcpc_classifier_category_count(const mcpc_classifier* classifier);

/** Classifies one text. On success `*out` is a result to release with mcpc_result_free.
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`classifier`, `text` or `out` NULL), MCPC_ERR_INVALID_TEXT,
 *  MCPC_ERR_CLASSIFY, MCPC_ERR_UNAVAILABLE (remote classifiers). Thread-safety: concurrent calls
 *  on one classifier are safe. */
MCPC_API int mcpc_classify(const mcpc_classifier* classifier, const char* text, size_t text_len,
                           mcpc_result** out, mcpc_error** err);

/** mcpc_classify_json flag: include "probabilities" and "entropy". */
#define MCPC_JSON_PROBABILITIES 1u
/** mcpc_classify_json flag: return the whole MCP tool result
 *  (`{"content":[{"type":"text","text":...}],"structuredContent":{...},"isError":false}`)
 *  instead of the bare object. */
#define MCPC_JSON_TOOL_RESULT 2u

/**
 * Classifies one text and returns JSON byte-for-byte identical to what the MCP tool
 * `classify_text` of an mcpc_server built from the same configuration returns for it: without
 * MCPC_JSON_TOOL_RESULT the object routers parse from `content[0].text`,
 * `{"class","confidence","model","use_reasoning"[,"probabilities","entropy"]}`; with it the
 * whole CallToolResult. `*out_json` is NUL-terminated; release it with mcpc_string_free.
 * Errors: as mcpc_classify, plus MCPC_ERR_INVALID_ARGUMENT for unknown flag bits.
 * Thread-safety: concurrent calls are safe.
 */
MCPC_API int mcpc_classify_json(const mcpc_classifier* classifier, const char* text,
                                size_t text_len, unsigned flags, char** out_json, mcpc_error** err);

/** Classifies `count` texts. `text_lens` may be NULL (all NUL-terminated) or give each length
 *  (MCPC_NTS allowed per entry). All or nothing: the first text that fails fails the batch and
 *  the message starts with its index (`texts[3]: ...`). `count` 0 gives an empty batch.
 *  Release `*out` with mcpc_batch_free. Errors: as mcpc_classify (MCPC_ERR_INVALID_ARGUMENT also
 *  for a NULL `texts` with count > 0 or a NULL entry). Thread-safety: concurrent calls are
 *  safe. */
MCPC_API int mcpc_classify_batch(const mcpc_classifier* classifier, const char* const* texts,
                                 const size_t* text_lens, size_t count, mcpc_batch** out,
                                 mcpc_error** err);

/** The categories with descriptions, system prompts and per-category overrides. Release with
 *  mcpc_categories_free. Errors: MCPC_ERR_INVALID_ARGUMENT. Thread-safety: any thread. */
MCPC_API int mcpc_classifier_categories(const mcpc_classifier* classifier, mcpc_categories** out,
                                        mcpc_error** err);

/** The `list_categories` tool's document,
 *  `{"categories":[...],"category_system_prompts":{...},"category_descriptions":{...}}`.
 *  Release with mcpc_string_free. Errors: MCPC_ERR_INVALID_ARGUMENT. Thread-safety: any
 *  thread. */
MCPC_API int mcpc_classifier_categories_json(const mcpc_classifier* classifier, char** out_json,
                                             mcpc_error** err);

/* ------------------------------------------------------------------------------------------ */
/* Entropy and the reasoning decision on a caller's distribution                              */
/* ------------------------------------------------------------------------------------------ */

/** Shannon entropy in bits, H = sum over p > 0 of -p log2 p. 0 for count 0; NaN when
 *  `probabilities` is NULL and count > 0. Thread-safety: pure. */
MCPC_API double mcpc_entropy(const double* probabilities, size_t count);

/** H / log2(count); 0 when count <= 1; NaN when `probabilities` is NULL and count > 0.
 *  Thread-safety: pure. */
MCPC_API double mcpc_normalized_entropy(const double* probabilities, size_t count);

/** Per-category flag for mcpc_reasoning_decide: the category wants reasoning (1), does not (0),
 *  or is unknown to the decision (-1). */
#define MCPC_REASONING_UNKNOWN (-1)

/** Runs the entropy-based reasoning decision on `count` probabilities named `names[i]`.
 *  `reasoning_flags` is NULL (every category unknown) or `count` entries of 1, 0 or
 *  MCPC_REASONING_UNKNOWN. `threshold` is the base threshold (the reference uses 0.6). count 0
 *  gives the "no_classification_data" decision. Release `*out` with mcpc_decision_free.
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`out` NULL; `probabilities` or `names` NULL, a NULL name,
 *  or a flag outside {-1, 0, 1} with count > 0; a non-finite threshold). Thread-safety: pure. */
MCPC_API int mcpc_reasoning_decide(const double* probabilities, const char* const* names,
                                   const int* reasoning_flags, size_t count, double threshold,
                                   mcpc_decision** out, mcpc_error** err);

/* ------------------------------------------------------------------------------------------ */
/* Servers                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/** An MCP server: the classification tools (`classify_text`, `list_categories`, one prompt per
 *  category, the categories resource), host-defined tools, and its transports. */
typedef struct mcpc_server mcpc_server;

/** Makes a server from `config` (NULL: the embedded default; name, version, text limit and the
 *  HTTP address come from its `server` section) serving `classifier`, or, when `classifier` is
 *  NULL, the classifier `config` describes. The server keeps the classifier alive. It owns a
 *  pool of worker threads for tool calls; no transport runs yet.
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`out` NULL), MCPC_ERR_CONFIG. Thread-safety: any thread. */
MCPC_API int mcpc_server_new(const mcpc_config* config, const mcpc_classifier* classifier,
                             mcpc_server** out, mcpc_error** err);

/** Stops the transports (as mcpc_server_stop), waits for calls in flight, joins the worker
 *  threads and releases `server`. NULL-safe. Thread-safety: any thread but a callback of this
 *  server; no other call on `server` may be running or start afterwards. */
MCPC_API void mcpc_server_free(mcpc_server* server);

/** The result a host tool gives back; valid only during the mcpc_tool_callback it was passed
 *  to. */
typedef struct mcpc_tool_reply mcpc_tool_reply;

/**
 * A host-defined tool. `arguments_json` is the NUL-terminated JSON object of the call's
 * arguments (`arguments_len` bytes), already validated against the tool's input schema. Answer
 * with mcpc_tool_reply_text or mcpc_tool_reply_structured (the last answer wins); a tool that
 * sets nothing fails with an isError result.
 *
 * Threads: called on the server's worker threads, possibly several at once, never on the
 * thread that called mcpc_server_call or a transport function. It must not stop or free the
 * server.
 */
typedef void (*mcpc_tool_callback)(void* user_data, const char* arguments_json,
                                   size_t arguments_len, mcpc_tool_reply* reply);

/** Answers with one text block; `is_error` makes it a failure the model sees (isError:true).
 *  Errors: MCPC_ERR_INVALID_ARGUMENT (`reply` or `text` NULL). Thread-safety: only inside the
 *  callback that received `reply`. */
MCPC_API int mcpc_tool_reply_text(mcpc_tool_reply* reply, const char* text, size_t text_len,
                                  bool is_error, mcpc_error** err);

/** Answers with structured content: `json` (a JSON object) becomes `structuredContent` and, as
 *  text, the one content block. Errors: MCPC_ERR_INVALID_ARGUMENT (`reply` or `json` NULL,
 *  malformed JSON, not an object). Thread-safety: only inside the callback that received
 *  `reply`. */
MCPC_API int mcpc_tool_reply_structured(mcpc_tool_reply* reply, const char* json, size_t json_len,
                                        mcpc_error** err);

/** Adds (or replaces, by name) a host-defined tool. `description` may be NULL;
 *  `input_schema_json` NULL means `{"type":"object"}`, otherwise a JSON Schema object that
 *  arguments are validated against before the callback runs. `destroy` (may be NULL) receives
 *  `user_data` once the tool is removed or replaced and no call of it is left, or the server is
 *  freed. On failure `destroy` is not called. Errors: MCPC_ERR_INVALID_ARGUMENT (`server`,
 *  `name` or `callback` NULL, empty name, malformed or uncompilable schema).
 *  Thread-safety: any thread; calls that start afterwards see the tool. */
MCPC_API int mcpc_server_add_tool(mcpc_server* server, const char* name, const char* description,
                                  const char* input_schema_json, mcpc_tool_callback callback,
                                  void* user_data, mcpc_destroy_callback destroy, mcpc_error** err);

/** Removes a tool (host-defined or built in). Calls in flight finish. Errors:
 *  MCPC_ERR_INVALID_ARGUMENT (NULL), MCPC_ERR_NOT_FOUND. Thread-safety: any thread. */
MCPC_API int mcpc_server_remove_tool(mcpc_server* server, const char* name, mcpc_error** err);

/** Serves one JSON-RPC message (or batch) in-process, statelessly (no initialize needed), and
 *  waits for the answer: `*out_json` is the response (release with mcpc_string_free), or NULL
 *  for a notification. Protocol errors are JSON-RPC error responses, not failures. Errors:
 *  MCPC_ERR_INVALID_ARGUMENT (NULL arguments). Thread-safety: any thread, concurrently. */
MCPC_API int mcpc_server_call(mcpc_server* server, const char* request_json, size_t request_len,
                              char** out_json, mcpc_error** err);

/** Starts serving one client over newline-delimited JSON-RPC on `in_fd` / `out_fd` (e.g. 0 and
 *  1) on a background thread and returns. The descriptors stay the caller's: the library never
 *  closes them. It ends at end of input or mcpc_server_stop. Errors:
 *  MCPC_ERR_INVALID_ARGUMENT (`server` NULL), MCPC_ERR_TRANSPORT (a descriptor is not open),
 *  MCPC_ERR_STATE (stdio already running). Thread-safety: any thread. */
MCPC_API int mcpc_server_start_stdio(mcpc_server* server, int in_fd, int out_fd, mcpc_error** err);

/** Blocks until the stdio transport has ended (end of input, or mcpc_server_stop from another
 *  thread) and has answered what was in flight. Errors: MCPC_ERR_INVALID_ARGUMENT,
 *  MCPC_ERR_STATE (stdio never started). Thread-safety: any thread. */
MCPC_API int mcpc_server_wait_stdio(mcpc_server* server, mcpc_error** err);

/** Starts the Streamable HTTP transport (POST /mcp, legacy SSE, the router REST dialects,
 *  GET /health, GET /metrics) on its own I/O threads. `host` NULL uses the config's
 *  `server.http.host`; `port` -1 uses the config's `server.http.port`, 0 picks a free port.
 *  With `server.http.tls` in the config it serves HTTPS only.
 *  `out_port` (may be NULL) receives the bound port. Errors: MCPC_ERR_INVALID_ARGUMENT
 *  (`server` NULL, port outside -1..65535), MCPC_ERR_STATE (HTTP already running),
 *  MCPC_ERR_TRANSPORT (cannot bind; TLS certificate or key unusable, the message names the
 *  file). Thread-safety: any thread. */
MCPC_API int mcpc_server_start_http(mcpc_server* server, const char* host, int port, int* out_port,
                                    mcpc_error** err);

/** The bound HTTP port, or 0 when HTTP is not running (or `server` is NULL). Thread-safety: any
 *  thread. */
MCPC_API int mcpc_server_http_port(const mcpc_server* server);

/** Stops every transport: HTTP stops accepting and finishes what is in flight; stdio stops
 *  reading and answers what is in flight. Blocks until done. Idempotent; NULL-safe. Must not be
 *  called from a callback of this server. Thread-safety: any thread. */
MCPC_API void mcpc_server_stop(mcpc_server* server);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MCPCLASS_MCPCLASS_H */
