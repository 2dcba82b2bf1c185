/*
 * The remote classifier through the C ABI: a classifier made from a config document with
 * `kind: remote` talks to a real mcpclass server (started in-process with mcpc_server_* on an
 * ephemeral port, and the mcpclass tool as a stdio subprocess when its path is given as argv[1]).
 * Categories and results come from the remote; unreachable, silent, stopped and non-MCP servers
 * fail with a status and a message naming the server, never a crash or a hang (every wait is
 * bounded by the configured timeout). Built like test_capi.c, also under ASan + UBSan.
 */
#define _POSIX_C_SOURCE 200809L

#include "mcpclass/mcpclass.h"

#include "capi_check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The server's own categories: the remote classifier must report these, not the defaults. */
static const char* const kServerConfig =
    "categories:\n"
    "  - {name: astronomy, description: Stars and planets, system_prompt: You are an astronomer.}\n"
    "  - {name: cooking, description: Recipes and kitchens, system_prompt: You are a chef.}\n"
    "classifier:\n"
    "  kind: rules\n"
    "  fallback: cooking\n"
    "  rules:\n"
    "    astronomy:\n"
    "      keywords: [planet, telescope]\n";

/* Makes the remote classifier `fields` describe (the inside of `remote: {...}`); returns the
 * status of the step that failed. */
static int new_remote(const char* fields, mcpc_classifier** out, mcpc_error** err) {
  char document[2048];
  snprintf(document, sizeof document,
           "classifier:\n  kind: remote\n  remote: {%s, fallback_category: cooking,"
           " confidence_threshold: 0}\n",
           fields);
  mcpc_config* config = NULL;
  int status = mcpc_config_new(document, MCPC_NTS, &config, err);
  if (status == MCPC_OK) status = mcpc_classifier_new(config, out, err);
  mcpc_config_free(config);
  return status;
}

/* A TCP port on 127.0.0.1 that refuses connections (bound, never listening) or accepts them and
 * never answers (listening, never accepting). The socket stays open until close(*fd). */
static int local_port(bool listening, int* fd) {
  *fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (*fd < 0 || bind(*fd, (struct sockaddr*)&addr, sizeof addr) != 0 ||
      (listening && listen(*fd, 4) != 0) || getsockname(*fd, (struct sockaddr*)&addr, &len) != 0)
    return 0;
  return ntohs(addr.sin_port);
}

static void check_classifies(const mcpc_classifier* c, const char* text, const char* expected) {
  mcpc_error* err = NULL;
  mcpc_result* r = NULL;
  CHECK_STATUS(mcpc_classify(c, text, MCPC_NTS, &r, &err), MCPC_OK, err);
  RESET(err);
  if (r == NULL) return;
  CHECK(strcmp(r->category, expected) == 0);
  CHECK(r->num_probabilities == mcpc_classifier_category_count(c));
  mcpc_result_free(r);
}

static void test_remote_over_http(void) {
  mcpc_error* err = NULL;
  mcpc_config* config = NULL;
  mcpc_server* server = NULL;
  int port = 0;
  CHECK_STATUS(mcpc_config_new(kServerConfig, MCPC_NTS, &config, &err), MCPC_OK, err);
  CHECK_STATUS(mcpc_server_new(config, NULL, &server, &err), MCPC_OK, err);
  mcpc_config_free(config);
  CHECK_STATUS(mcpc_server_start_http(server, "127.0.0.1", 0, &port, &err), MCPC_OK, err);
  if (server == NULL || port <= 0) {
    mcpc_server_free(server);
    return;
  }

  char fields[512];
  snprintf(fields, sizeof fields,
           "url: 'http://127.0.0.1:%d/mcp', timeout: 5, max_retries: 1, retry_backoff: 0,"
           " circuit_breaker: {failures: 2, open_seconds: 3600}",
           port);
  mcpc_classifier* c = NULL;
  CHECK_STATUS(new_remote(fields, &c, &err), MCPC_OK, err);
  RESET(err);
  if (c == NULL) {
    mcpc_server_free(server);
    return;
  }

  /* The categories are the server's, with its descriptions and system prompts. */
  mcpc_categories* cats = NULL;
  CHECK_STATUS(mcpc_classifier_categories(c, &cats, &err), MCPC_OK, err);
  CHECK(cats != NULL && cats->count == 2);
  if (cats != NULL && cats->count == 2) {
    CHECK(strcmp(cats->items[0].name, "astronomy") == 0);
    CHECK(strcmp(cats->items[0].description, "Stars and planets") == 0);
    CHECK(strcmp(cats->items[1].name, "cooking") == 0);
    CHECK(strcmp(cats->items[1].system_prompt, "You are a chef.") == 0);
  }
  mcpc_categories_free(cats);

  /* Results are the server's: the same class and distribution as its classify_text tool. */
  check_classifies(c, "Which planet has the most moons?", "astronomy");
  check_classifies(c, "How long do I boil an egg?", "cooking");
  char* remote_json = NULL;
  CHECK_STATUS(mcpc_classify_json(c, "Point the telescope north", MCPC_NTS, MCPC_JSON_PROBABILITIES,
                                  &remote_json, &err),
               MCPC_OK, err);
  CHECK(contains(remote_json, "\"class\":0"));
  mcpc_string_free(remote_json);
  const char* texts[] = {"planet", "soup"};
  mcpc_batch* batch = NULL;
  CHECK_STATUS(mcpc_classify_batch(c, texts, NULL, 2, &batch, &err), MCPC_OK, err);
  CHECK(batch != NULL && batch->count == 2 &&
        strcmp(batch->results[0].category, "astronomy") == 0 &&
        strcmp(batch->results[1].category, "cooking") == 0);
  mcpc_batch_free(batch);
  /* Text rules are checked locally before anything is sent. */
  mcpc_result* r = NULL;
  CHECK_STATUS(mcpc_classify(c, "   ", MCPC_NTS, &r, &err), MCPC_ERR_INVALID_TEXT, err);
  RESET(err);

  /* The server goes away: unavailable, naming it. It comes back on the same port without the
   * old session: the retry starts a new one and the call succeeds. */
  char where[64];
  snprintf(where, sizeof where, "127.0.0.1:%d", port);
  mcpc_server_stop(server);
  CHECK_STATUS(mcpc_classify(c, "planet", MCPC_NTS, &r, &err), MCPC_ERR_UNAVAILABLE, err);
  CHECK(r == NULL);
  CHECK(contains(mcpc_error_message(err), where));
  RESET(err);
  int again = 0;
  CHECK_STATUS(mcpc_server_start_http(server, "127.0.0.1", port, &again, &err), MCPC_OK, err);
  RESET(err);
  CHECK(again == port);
  check_classifies(c, "Which planet has the most moons?", "astronomy");

  /* Two failures in a row open the circuit breaker: later calls fail at once, saying so. */
  mcpc_server_stop(server);
  for (int i = 0; i < 2; ++i) {
    CHECK_STATUS(mcpc_classify(c, "planet", MCPC_NTS, &r, &err), MCPC_ERR_UNAVAILABLE, err);
    RESET(err);
  }
  CHECK_STATUS(mcpc_classify(c, "planet", MCPC_NTS, &r, &err), MCPC_ERR_UNAVAILABLE, err);
  CHECK(contains(mcpc_error_message(err), "circuit open"));
  RESET(err);
  /* err NULL: the status alone. */
  CHECK(mcpc_classify(c, "planet", MCPC_NTS, &r, NULL) == MCPC_ERR_UNAVAILABLE);
  mcpc_classifier_free(c);

  /* A server that is up but is not an MCP endpoint: a classify error naming the problem. */
  CHECK_STATUS(mcpc_server_start_http(server, "127.0.0.1", port, NULL, &err), MCPC_OK, err);
  snprintf(fields, sizeof fields, "url: 'http://127.0.0.1:%d/nothing-here', timeout: 5", port);
  c = NULL;
  const int status = new_remote(fields, &c, &err);
  CHECK(status == MCPC_ERR_CLASSIFY); /* a 404 is not retried as if the server were down */
  CHECK(c == NULL);
  CHECK(contains(mcpc_error_message(err), "/nothing-here"));
  CHECK(contains(mcpc_error_message(err), "HTTP 404"));
  printf("not an MCP endpoint: %s: %s\n", mcpc_status_name(status), mcpc_error_message(err));
  RESET(err);
  mcpc_server_free(server);
}

static void test_unreachable_and_silent(void) {
  mcpc_error* err = NULL;
  mcpc_classifier* c = (mcpc_classifier*)&err; /* must be reset to NULL on failure */
  char fields[256];
  int fd = -1;

  /* Nothing listens: unavailable at creation, the message names the address. */
  const int refused = local_port(false, &fd);
  CHECK(refused > 0);
  snprintf(fields, sizeof fields, "url: 'http://127.0.0.1:%d/mcp', timeout: 5, max_retries: 1",
           refused);
  CHECK_STATUS(new_remote(fields, &c, &err), MCPC_ERR_UNAVAILABLE, err);
  CHECK(c == NULL);
  char where[64];
  snprintf(where, sizeof where, "127.0.0.1:%d", refused);
  CHECK(contains(mcpc_error_message(err), where));
  printf("unreachable: %s\n", mcpc_error_message(err));
  RESET(err);
  close(fd);

  /* Something accepts and never answers: unavailable after the configured timeout. */
  const int silent = local_port(true, &fd);
  CHECK(silent > 0);
  snprintf(fields, sizeof fields, "url: 'http://127.0.0.1:%d/mcp', timeout: 0.3, max_retries: 0",
           silent);
  CHECK_STATUS(new_remote(fields, &c, &err), MCPC_ERR_UNAVAILABLE, err);
  CHECK(contains(mcpc_error_message(err), "timed out") ||
        contains(mcpc_error_message(err), "timeout"));
  printf("silent: %s\n", mcpc_error_message(err));
  RESET(err);
  close(fd);

  /* A stdio server that cannot be started. */
  CHECK_STATUS(new_remote("command: [/nonexistent/mcpclass-server], timeout: 5", &c, &err),
               MCPC_ERR_UNAVAILABLE, err);
  CHECK(contains(mcpc_error_message(err), "/nonexistent/mcpclass-server"));
  RESET(err);

  /* Configuration errors name the key. */
  mcpc_config* config = NULL;
  CHECK_STATUS(mcpc_config_new("classifier: {kind: remote}\n", MCPC_NTS, &config, &err),
               MCPC_ERR_CONFIG, err);
  CHECK(strcmp(mcpc_error_path(err), "classifier.remote") == 0);
  RESET(err);
  CHECK_STATUS(new_remote("timeout: 5", &c, &err), MCPC_ERR_CONFIG, err);
  CHECK(strcmp(mcpc_error_path(err), "classifier.remote.url") == 0);
  RESET(err);
  CHECK_STATUS(new_remote("url: 'http://127.0.0.1:1/mcp', timeout: -1", &c, &err), MCPC_ERR_CONFIG,
               err);
  CHECK(strcmp(mcpc_error_path(err), "classifier.remote.timeout") == 0);
  RESET(err);
}

/* The mcpclass tool as the remote, over stdio: its embedded default's five categories. */
static void test_remote_over_stdio(const char* tool) {
  char fields[1024];
  snprintf(fields, sizeof fields, "command: ['%s', serve, --stdio], timeout: 10", tool);
  mcpc_error* err = NULL;
  mcpc_classifier* c = NULL;
  CHECK_STATUS(new_remote(fields, &c, &err), MCPC_OK, err);
  RESET(err);
  if (c == NULL) return;
  CHECK(mcpc_classifier_category_count(c) == 6); /* math ... general, plus the fallback */
  check_classifies(c, "What is the derivative of x squared?", "math");
  mcpc_classifier_free(c); /* ends the subprocess */
}

int main(int argc, char** argv) {
  test_remote_over_http();
  test_unreachable_and_silent();
  if (argc > 1)
    test_remote_over_stdio(argv[1]);
  else
    printf("no mcpclass tool given: the stdio remote is not tested\n");
  printf("capi remote: %d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
