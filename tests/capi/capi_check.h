/*
 * The C tests' checks: CHECK(condition), CHECK_STATUS(call, expected status, error object) and
 * RESET(error), counted in g_passed / g_failed, which each test program reports at its end.
 * Every test program includes this once.
 */
#ifndef MCPCLASS_TESTS_CAPI_CHECK_H
#define MCPCLASS_TESTS_CAPI_CHECK_H

#include "mcpclass/mcpclass.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int g_passed = 0;
static int g_failed = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (cond) {                                                                \
      ++g_passed;                                                              \
    } else {                                                                   \
      ++g_failed;                                                              \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

/* Checks a status and, when it is an error, the error object that came with it. */
#define CHECK_STATUS(expr, expected, err)                                                        \
  do {                                                                                           \
    int status_ = (expr);                                                                        \
    if (status_ != (expected)) {                                                                 \
      fprintf(stderr, "%s:%d: %s returned %s (%s), expected %s\n", __FILE__, __LINE__, #expr,    \
              mcpc_status_name(status_), mcpc_error_message(err), #expected);                    \
      ++g_failed;                                                                                \
    } else if ((expected) != MCPC_OK &&                                                          \
               (mcpc_error_code(err) != (expected) || mcpc_error_message(err)[0] == '\0')) {     \
      fprintf(stderr, "%s:%d: %s: error object does not match the status\n", __FILE__, __LINE__, \
              #expr);                                                                            \
      ++g_failed;                                                                                \
    } else if ((expected) == MCPC_OK && (err) != NULL) {                                         \
      fprintf(stderr, "%s:%d: %s: *err not NULL on success\n", __FILE__, __LINE__, #expr);       \
      ++g_failed;                                                                                \
    } else {                                                                                     \
      ++g_passed;                                                                                \
    }                                                                                            \
  } while (0)

#define RESET(err)        \
  do {                    \
    mcpc_error_free(err); \
    (err) = NULL;         \
  } while (0)

static inline bool contains(const char* haystack, const char* needle) {
  return haystack != NULL && strstr(haystack, needle) != NULL;
}

#endif /* MCPCLASS_TESTS_CAPI_CHECK_H */
