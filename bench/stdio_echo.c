/* The stdio floor (issue 16, bench/suite.py section_stdio): answers every JSON-RPC request line on
 * stdin with mcpclass's answer line to the benchmark's tools/call, its id replaced by the
 * request's, and answers nothing to notifications (lines without an id), as an MCP server would:
 * the driver (bench/lib/stdio_rtt.py) checks the ids and waits for no answer to
 * notifications/initialized. No JSON parsing, no work: what is left is the pipe, the reads and
 * writes, and the driver itself, so `mcpclass ÷ echo floor` is the share of mcpclass's own work.
 * Answers to all the complete lines of one read() go out in one write(), the least a server can do.
 * Usage: stdio_echo TEMPLATE_FILE, a line holding @ID@ where the id goes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char* read_file(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char* data = malloc(cap);
  size_t got;
  while (data && (got = fread(data + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) data = realloc(data, cap *= 2);
  }
  fclose(f);
  *size = n;
  return data;
}

static int write_all(const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(STDOUT_FILENO, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* The id of a request line: the token after "id": (a number or a string), or NULL. */
static const char* find_id(const char* line, const char* end, size_t* len) {
  static const char key[] = "\"id\"";
  for (const char* p = line; p + sizeof key - 1 <= end; ++p) {
    if (memcmp(p, key, sizeof key - 1) != 0) continue;
    p += sizeof key - 1;
    while (p < end && (*p == ' ' || *p == ':')) ++p;
    const char* start = p;
    if (p < end && *p == '"') {
      for (++p; p < end && *p != '"'; ++p) {
        if (*p == '\\') ++p;
      }
      ++p;
    } else {
      while (p < end && *p != ',' && *p != '}' && *p != ' ') ++p;
    }
    if (p > end) return NULL;
    *len = (size_t)(p - start);
    return start;
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stdio_echo TEMPLATE_FILE\n");
    return 2;
  }
  size_t tsize = 0;
  char* tmpl = read_file(argv[1], &tsize);
  char* marker = tmpl ? strstr(tmpl, "@ID@") : NULL;
  if (!marker) {
    fprintf(stderr, "stdio_echo: %s has no @ID@\n", argv[1]);
    return 2;
  }
  while (tsize > 0 && (tmpl[tsize - 1] == '\n' || tmpl[tsize - 1] == '\r')) --tsize;
  const size_t head = (size_t)(marker - tmpl);
  const char* tail = marker + 4;
  const size_t tail_len = tsize - head - 4;

  size_t in_cap = 1 << 16, in_len = 0, out_cap = 1 << 16;
  char* in = malloc(in_cap);
  char* out = malloc(out_cap);
  for (;;) {
    if (in_len == in_cap) in = realloc(in, in_cap *= 2);
    ssize_t r = read(STDIN_FILENO, in + in_len, in_cap - in_len);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    in_len += (size_t)r;
    size_t out_len = 0, done = 0;
    char* nl;
    while ((nl = memchr(in + done, '\n', in_len - done)) != NULL) {
      size_t id_len = 0;
      const char* id = find_id(in + done, nl, &id_len);
      if (id) {
        const size_t need = head + id_len + tail_len + 1;
        while (out_len + need > out_cap) out = realloc(out, out_cap *= 2);
        memcpy(out + out_len, tmpl, head);
        memcpy(out + out_len + head, id, id_len);
        memcpy(out + out_len + head + id_len, tail, tail_len);
        out_len += need;
        out[out_len - 1] = '\n';
      }
      done = (size_t)(nl - in) + 1;
    }
    memmove(in, in + done, in_len - done);
    in_len -= done;
    if (out_len > 0 && write_all(out, out_len) != 0) break;
  }
  return 0;
}
