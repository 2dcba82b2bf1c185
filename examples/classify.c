/* The C ABI in one program (plain C11, mcpclass/mcpclass.h, libmcpclass.so): read a
 * configuration, build its classifier, classify a text.
 *   example_classify_c CONFIG TEXT   e.g. example_classify_c classifier.yaml "What is 2 + 2?"
 * Prints `category confidence model reasoning=0|1`, one line. On failure, prints the status name
 * and the library's message and exits 1. */
#include <mcpclass/mcpclass.h>

#include <stdio.h>

int main(int argc, char** argv) {
  mcpc_config* config = NULL;
  mcpc_classifier* classifier = NULL;
  mcpc_result* result = NULL;
  mcpc_error* err = NULL; /* every call that can fail fills it; NULL = not interested */
  int rc = 1;
  if (argc != 3) {
    fputs("usage: example_classify_c CONFIG TEXT\n", stderr);
    return 2;
  }
  /* A program built against one header must not run on a library of another ABI. */
  if (mcpc_abi_version() != MCPC_ABI_VERSION) {
    fprintf(stderr, "ABI mismatch: library %d, header %d\n", mcpc_abi_version(), MCPC_ABI_VERSION);
    return 1;
  }
  /* MCPC_NTS: the text is NUL-terminated (else pass its length in bytes). */
  if (mcpc_config_new_from_file(argv[1], &config, &err) == MCPC_OK &&
      mcpc_classifier_new(config, &classifier, &err) == MCPC_OK &&
      mcpc_classify(classifier, argv[2], MCPC_NTS, &result, &err) == MCPC_OK) {
    printf("%s %.3f %s reasoning=%d\n", result->category, result->confidence, result->model,
           result->use_reasoning ? 1 : 0);
    rc = 0;
  } else {
    fprintf(stderr, "example_classify_c: %s: %s\n", mcpc_status_name(mcpc_error_code(err)),
            mcpc_error_message(err));
  }
  /* Each object has its own release call; all of them accept NULL. */
  mcpc_result_free(result);
  mcpc_classifier_free(classifier);
  mcpc_config_free(config);
  mcpc_error_free(err);
  return rc;
}
