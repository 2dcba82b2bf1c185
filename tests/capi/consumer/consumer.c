/* Uses the installed C ABI: check the ABI version, classify one text with the embedded default,
 * and, given `CONFIG TEXT EXPECTED`, classify TEXT with the classifier CONFIG describes (the
 * learned kinds, when the installed tree has them). */
#include <mcpclass/mcpclass.h>

#include <stdio.h>
#include <string.h>

/* Classifies `text` with the classifier of `config_path` (NULL: the embedded default) and checks
 * the category. */
static int classify_as(const char* config_path, const char* text, const char* expected) {
  mcpc_config* config = NULL;
  mcpc_classifier* classifier = NULL;
  mcpc_result* result = NULL;
  mcpc_error* err = NULL;
  int ok = 0;
  if ((config_path == NULL || mcpc_config_new_from_file(config_path, &config, &err) == MCPC_OK) &&
      mcpc_classifier_new(config, &classifier, &err) == MCPC_OK &&
      mcpc_classify(classifier, text, MCPC_NTS, &result, &err) == MCPC_OK) {
    printf("c consumer (mcpclass %s, %s): %s %.3f %s\n", mcpc_version(),
           config_path != NULL ? config_path : "default", result->category, result->confidence,
           result->model);
    ok = strcmp(result->category, expected) == 0;
  } else {
    fprintf(stderr, "failed: %s: %s\n", mcpc_status_name(mcpc_error_code(err)),
            mcpc_error_message(err));
  }
  mcpc_result_free(result);
  mcpc_classifier_free(classifier);
  mcpc_config_free(config);
  mcpc_error_free(err);
  return ok;
}

int main(int argc, char** argv) {
  if (mcpc_abi_version() != MCPC_ABI_VERSION) {
    fprintf(stderr, "ABI mismatch: library %d, header %d\n", mcpc_abi_version(), MCPC_ABI_VERSION);
    return 1;
  }
  if (!classify_as(NULL, "Who won the battle of Hastings?", "history")) return 1;
  if (argc == 4 && !classify_as(argv[1], argv[2], argv[3])) return 1;
  return 0;
}
