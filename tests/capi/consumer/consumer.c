/* Uses the installed C ABI: check the ABI version, classify one text. */
#include <mcpclass/mcpclass.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  if (mcpc_abi_version() != MCPC_ABI_VERSION) {
    fprintf(stderr, "ABI mismatch: library %d, header %d\n", mcpc_abi_version(), MCPC_ABI_VERSION);
    return 1;
  }
  mcpc_classifier* classifier = NULL;
  mcpc_result* result = NULL;
  mcpc_error* err = NULL;
  if (mcpc_classifier_new(NULL, &classifier, &err) != MCPC_OK ||
      mcpc_classify(classifier, "Who won the battle of Hastings?", MCPC_NTS, &result, &err) !=
          MCPC_OK) {
    fprintf(stderr, "failed: %s\n", mcpc_error_message(err));
    mcpc_error_free(err);
    mcpc_classifier_free(classifier);
    return 1;
  }
  printf("c consumer (mcpclass %s): %s %.3f %s\n", mcpc_version(), result->category,
         result->confidence, result->model);
  const int ok = strcmp(result->category, "history") == 0;
  mcpc_result_free(result);
  mcpc_classifier_free(classifier);
  return ok ? 0 : 1;
}
