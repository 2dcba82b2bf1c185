/* In-process classify latency from C: median of many mcpc_classify calls (result freed each
 * time). Usage: bench [calls] */
#define _POSIX_C_SOURCE 200809L
#include "mcpclass/mcpclass.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int cmp(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 20000;
  mcpc_classifier* c = NULL;
  if (n <= 0 || mcpc_classifier_new(NULL, &c, NULL) != MCPC_OK) return 1;
  double* us = malloc(sizeof(double) * (size_t)n);
  for (int i = -1000; i < n; ++i) { /* 1000 warm-up calls */
    struct timespec a, b;
    mcpc_result* r = NULL;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (mcpc_classify(c, "What is the derivative of x squared?", MCPC_NTS, &r, NULL) != MCPC_OK)
      return 1;
    mcpc_result_free(r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (i >= 0) us[i] = (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
  }
  qsort(us, (size_t)n, sizeof(double), cmp);
  printf("C       in-process classify: median %.1f us, p99 %.1f us (%d calls)\n", us[n / 2],
         us[n * 99 / 100], n);
  free(us);
  mcpc_classifier_free(c);
  return 0;
}
