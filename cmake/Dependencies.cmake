# Every dependency comes from a Debian bookworm package (scripts/install-deps.sh installs them).
find_package(Boost 1.81.0 EXACT CONFIG REQUIRED COMPONENTS json url)
find_package(Threads REQUIRED)
find_package(OpenSSL 3 REQUIRED)  # HTTPS: the server listener and the client transports
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(valijson REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# tokenizer.json (src/tokenizers/hf): Oniguruma-style regexes with look-ahead, Unicode normalization.
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(UTF8PROC REQUIRED IMPORTED_TARGET libutf8proc)
# The semantic cache shared by a fleet of `mcpclass route` instances (backend_type: redis).
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
if(MCPCLASS_BUILD_TESTS)
  find_package(doctest REQUIRED)
endif()

# --- Learned classifiers: the native encoder (oneDNN on OpenMP), sentencepiece and hnswlib.
# MCPCLASS_WITH_LEARNED defaults to ON when all of them are installed; OFF builds the keyword-only
# library. libtorch is separate (MCPCLASS_WITH_LIBTORCH): only the dlopen'ed plugin that runs
# TorchScript models, trains heads and converts USE-lite links it.
find_package(Torch QUIET)
pkg_check_modules(SENTENCEPIECE QUIET IMPORTED_TARGET sentencepiece)
find_path(HNSWLIB_INCLUDE_DIR hnswlib/hnswlib.h)
find_library(SENTENCEPIECE_TRAIN_LIBRARY sentencepiece_train)
find_package(dnnl CONFIG QUIET)  # oneDNN: the native USE-lite encoder, without libtorch
find_package(OpenMP QUIET)       # oneDNN's thread runtime; team sizes are set per call
# What the learned classifiers need and was not found, by result variable: a QUIET find that
# fails (dnnl-config.cmake without OpenCL, say) must not turn the learned default off silently.
set(_mcpclass_learned_missing)
foreach(_dep SENTENCEPIECE_FOUND HNSWLIB_INCLUDE_DIR SENTENCEPIECE_TRAIN_LIBRARY dnnl_FOUND
             OpenMP_CXX_FOUND)
  if(NOT ${_dep})
    list(APPEND _mcpclass_learned_missing ${_dep})
  endif()
endforeach()
set(_mcpclass_learned_default ON)
if(_mcpclass_learned_missing)
  set(_mcpclass_learned_default OFF)
endif()
option(MCPCLASS_WITH_LEARNED
       "Build the learned classifiers (oneDNN encoder, sentencepiece, hnswlib kNN, heads)"
       ${_mcpclass_learned_default})
if(MCPCLASS_WITH_LEARNED)
  if(_mcpclass_learned_missing)
    message(FATAL_ERROR "MCPCLASS_WITH_LEARNED=ON needs libsentencepiece-dev, libhnswlib-dev, "
                        "libdnnl-dev and ocl-icd-opencl-dev (scripts/install-deps.sh installs "
                        "them); not found: ${_mcpclass_learned_missing}")
  endif()
  message(STATUS "mcpclass: learned classifiers ON")
else()
  if(_mcpclass_learned_missing)
    message(WARNING "mcpclass: learned classifiers OFF (keyword rules only): not found: "
                    "${_mcpclass_learned_missing}; scripts/install-deps.sh installs what they need "
                    "(scripts/debian-packages.txt)")
  else()
    message(STATUS "mcpclass: learned classifiers OFF (keyword rules only)")
  endif()
endif()

set(_mcpclass_libtorch_default OFF)
if(MCPCLASS_WITH_LEARNED AND Torch_FOUND)
  set(_mcpclass_libtorch_default ON)
endif()
option(MCPCLASS_WITH_LIBTORCH
       "Build the libtorch plugin (TorchScript models, head training, USE-lite conversion)"
       ${_mcpclass_libtorch_default})
if(MCPCLASS_WITH_LIBTORCH)
  if(NOT MCPCLASS_WITH_LEARNED)
    message(FATAL_ERROR "MCPCLASS_WITH_LIBTORCH=ON needs MCPCLASS_WITH_LEARNED=ON")
  endif()
  if(NOT Torch_FOUND)
    message(FATAL_ERROR "MCPCLASS_WITH_LIBTORCH=ON needs libtorch-dev (scripts/install-deps.sh)")
  endif()
  message(STATUS "mcpclass: libtorch plugin ON (libtorch ${Torch_VERSION})")
elseif(MCPCLASS_WITH_LEARNED)
  if(Torch_FOUND)
    message(STATUS "mcpclass: libtorch plugin OFF")
  else()
    message(WARNING "mcpclass: libtorch plugin OFF (libtorch-dev not found): TorchScript models, "
                    "head training and USE-lite conversion are unavailable")
  endif()
endif()
