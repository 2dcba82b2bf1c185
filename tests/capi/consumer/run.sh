#!/usr/bin/env bash
# run.sh BUILD_DIR CONSUMER_SRC: installs the build into a temporary prefix and builds and runs
# downstream consumers against it: CMake find_package (C++ library, C ABI shared and static, and
# the capi-only component) and pkg-config (mcpclass.pc shared, mcpclass-static.pc static).
# When the build has the learned classifiers, every consumer (and the installed mcpclass tool and
# the Python binding on the installed libmcpclass.so) also classifies with an embedding kNN
# classifier, and the loader's trace proves the installed run-time modules (sentencepiece shim,
# libtorch plugin) were the ones loaded; no installed library or consumer links libtorch.
# The programs of examples/ are built against the install and run by tests/examples. Last, the
# "ways in" examples of bindings/README.md are built and run as written (readme.sh).
set -euo pipefail
BUILD="$1"
SRC="$2"
ROOT="$(cd "$SRC/../../.." && pwd)"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpclass-consumer.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"

cmake --install "$BUILD" --prefix "$PREFIX" >"$WORK/install.log"
test -f "$PREFIX/include/mcpclass/mcpclass.h"
PCDIR="$(dirname "$(find "$PREFIX" -name mcpclass.pc | head -n1)")"
CFGDIR="$(dirname "$(find "$PREFIX" -name mcpclassConfig.cmake | head -n1)")"
test -f "$CFGDIR/mcpclassConfigVersion.cmake"
LIBDIR="$(dirname "$(find "$PREFIX" -name libmcpclass.so | head -n1)")"
echo "installed: $(find "$PREFIX" -type f | wc -l) files; pkg-config in ${PCDIR#"$PREFIX"/}"
# One name per library, so -l is never ambiguous: the C++ core, the C ABI shared and static.
for lib in libmcpclass_core.a libmcpclass.so libmcpclass_capi.a; do
  test -f "$LIBDIR/$lib" || { echo "$lib is not installed in $LIBDIR" >&2; exit 1; }
done
test ! -e "$LIBDIR/libmcpclass.a" || { echo "libmcpclass.a is installed: ambiguous with .so" >&2; exit 1; }

# The Conan recipe names only libraries the install produces (its dependencies and versions:
# ctest packaging.recipes).
/usr/bin/python3 - "$ROOT/packaging" "$LIBDIR" <<'PY'
import ast, os, sys
packaging, libdir = sys.argv[1:]
tree = ast.parse(open(os.path.join(packaging, "conan", "conanfile.py")).read())
libs = [e.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
        for t in n.targets if isinstance(t, ast.Attribute) and t.attr == "libs"
        for e in n.value.elts]
missing = [l for l in libs if not any(os.path.exists(os.path.join(libdir, f"lib{l}{ext}"))
                                      for ext in (".a", ".so"))]
assert libs and not missing, f"conanfile.py names libraries the install lacks: {missing}"
print(f"conan recipe libs {libs}: all installed")
PY

# The learned classifiers: the model (fetched and converted once, then cached) and a kNN config.
LEARNED=()
TORCH=OFF
PASSED=0
if grep -q '^MCPCLASS_WITH_LEARNED:BOOL=ON' "$BUILD/CMakeCache.txt"; then
  TORCH=ON
  SHIM="$LIBDIR/mcpclass/libmcpclass_spm.so"
  test -f "$SHIM" || { echo "the sentencepiece shim is not installed at $SHIM" >&2; exit 1; }
  PLUGIN="$LIBDIR/mcpclass/libmcpclass_torch.so"
  test -f "$PLUGIN" || { echo "the libtorch plugin is not installed at $PLUGIN" >&2; exit 1; }
  readelf -d "$PLUGIN" | grep -q 'NEEDED.*libtorch' || { echo "$PLUGIN does not link libtorch" >&2; exit 1; }
  "$ROOT/models/fetch-use-lite.sh" "$BUILD/mcpclass"
  # models/router5-knn.yaml with the example path made absolute and the index in $WORK.
  sed "s#examples: tests/#examples: $ROOT/tests/#" "$ROOT/models/router5-knn.yaml" >"$WORK/knn.yaml"
  grep -q "examples: $ROOT/tests/" "$WORK/knn.yaml"
  echo "  index: $WORK/knn-index.hnsw" >>"$WORK/knn.yaml"
  # The TorchScript encoder, so every consumer also proves it finds the installed libtorch plugin
  # (the default, native encoder needs no plugin: tests/cli covers it).
  echo "  encoder: cache:use-lite/encoder.pt" >>"$WORK/knn.yaml"
  LEARNED=("$WORK/knn.yaml" "When did the Roman Empire fall?" history)
fi

# no_torch FILE: FILE does not link libtorch (only the plugin does).
no_torch() {
  if readelf -d "$1" | grep -E 'NEEDED.*(torch|c10)'; then
    echo "$1 links libtorch" >&2
    exit 1
  fi
}

# loaded FILE_NAME EXPECTED PROGRAM: the loader's trace $WORK/ld.log shows FILE_NAME loaded from
# EXPECTED, never from elsewhere (the build tree).
loaded() {
  local got
  got="$(sed -n "s/^ *[0-9]*:[[:space:]]*file=\(.*$1\) .*/\1/p" "$WORK/ld.log" | head -n1)"
  if [ "$got" != "$2" ]; then
    echo "$3 loaded $1 from '$got', expected '$2'" >&2
    exit 1
  fi
}

# run PROGRAM [ARGS...]: runs a consumer (with the learned arguments when there are any); with
# them, the dynamic loader's trace must show the modules `$SHIM_EXPECTED` and `$PLUGIN_EXPECTED`
# loaded, never the build tree's.
SHIM_EXPECTED=""
PLUGIN_EXPECTED=""
run() {
  if [ "$TORCH" = OFF ]; then
    "$@"
  else
    no_torch "$1"
    LD_DEBUG=files "$@" "${LEARNED[@]}" 2>"$WORK/ld.log" ||
      { grep -v '^ *[0-9]*:' "$WORK/ld.log" >&2; echo "$1 failed" >&2; exit 1; }
    grep -v '^ *[0-9]*:' "$WORK/ld.log" >&2 || true
    loaded libmcpclass_spm.so "$SHIM_EXPECTED" "$1"
    loaded libmcpclass_torch.so "$PLUGIN_EXPECTED" "$1"
  fi
  PASSED=$((PASSED + 1))
}

# CMake, everything.
cmake -S "$SRC" -B "$WORK/all" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" -DWITH_TORCH="$TORCH" \
  >"$WORK/all.log" || { cat "$WORK/all.log"; exit 1; }
cmake --build "$WORK/all" >>"$WORK/all.log" || { cat "$WORK/all.log"; exit 1; }
# Statically linked: the modules the project copied next to the executable.
SHIM_EXPECTED="$WORK/all/libmcpclass_spm.so"
PLUGIN_EXPECTED="$WORK/all/libmcpclass_torch.so"
run "$WORK/all/consumer_cxx"
run "$WORK/all/consumer_c_static"
# libmcpclass.so: the installed modules, found relative to the library.
SHIM_EXPECTED="$LIBDIR/mcpclass/libmcpclass_spm.so"
PLUGIN_EXPECTED="$LIBDIR/mcpclass/libmcpclass_torch.so"
no_torch "$LIBDIR/libmcpclass.so"
run "$WORK/all/consumer_c"
if ldd "$WORK/all/consumer_c_static" | grep -q 'libmcpclass\.so'; then
  echo "consumer_c_static depends on libmcpclass.so" >&2
  exit 1
fi

# CMake, the C ABI component alone.
cmake -S "$SRC" -B "$WORK/capi" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" -DCAPI_ONLY=ON \
  -DWITH_TORCH="$TORCH" >"$WORK/capi.log" || { cat "$WORK/capi.log"; exit 1; }
cmake --build "$WORK/capi" >>"$WORK/capi.log"
run "$WORK/capi/consumer_c"

# The programs of examples/, built alone against the install as a user starts from them, and run
# by their own tests (tests/examples: classify with the C++ API and the C ABI, serve MCP over HTTP).
cmake -S "$ROOT/examples" -B "$WORK/examples" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" \
  >"$WORK/examples.log" 2>&1 && cmake --build "$WORK/examples" >>"$WORK/examples.log" 2>&1 ||
  { cat "$WORK/examples.log" >&2; exit 1; }
MCPCLASS_EXAMPLES_DIR="$WORK/examples" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -q \
  -p no:cacheprovider "$ROOT/tests/examples/test_examples.py"
PASSED=$((PASSED + 1))

# refused NAME FIND_PACKAGE_ARGS REASON: find_package(mcpclass ARGS) must fail, saying REASON.
refused() {
  mkdir -p "$WORK/$1"
  printf 'cmake_minimum_required(VERSION 3.25)\nproject(v LANGUAGES C)\nfind_package(mcpclass %s)\n' \
    "$2" >"$WORK/$1/CMakeLists.txt"
  if cmake -S "$WORK/$1" -B "$WORK/$1/b" -DCMAKE_PREFIX_PATH="$PREFIX" >"$WORK/$1.log" 2>&1; then
    echo "find_package(mcpclass $2) succeeded" >&2
    exit 1
  fi
  grep -q "$3" "$WORK/$1.log" || { cat "$WORK/$1.log" >&2; exit 1; }
}
# A version the package does not satisfy is refused; so is the torch component of a build
# without it.
refused badver "9.0 REQUIRED" "version"
if [ "$TORCH" = OFF ]; then
  refused notorch "REQUIRED COMPONENTS capi torch" "MCPCLASS_WITH_LEARNED=OFF"
fi

# pkg-config, shared and static.
export PKG_CONFIG_PATH="$PCDIR"
test "$(pkg-config --modversion mcpclass)" = "$(sed -n 's/^#define MCPC_VERSION_STRING "\(.*\)"/\1/p' "$PREFIX/include/mcpclass/mcpclass.h")"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags mcpclass) "$SRC/consumer.c" \
  -o "$WORK/pc_shared" $(pkg-config --libs mcpclass) \
  -Wl,-rpath,"$(pkg-config --variable=libdir mcpclass)"
run "$WORK/pc_shared"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -pedantic -Werror $(pkg-config --cflags mcpclass-static) \
  "$SRC/consumer.c" -o "$WORK/pc_static" $(pkg-config --static --libs mcpclass-static)
if [ "$TORCH" = ON ]; then
  # Statically linked and not next to the modules: the pkg-config variables and the overrides.
  SHIM_EXPECTED="$(pkg-config --variable=sentencepiece_shim mcpclass-static)"
  test "$SHIM_EXPECTED" -ef "$SHIM"
  PLUGIN_EXPECTED="$(pkg-config --variable=torch_plugin mcpclass-static)"
  test "$PLUGIN_EXPECTED" -ef "$PLUGIN"
  MCPCLASS_SPM_SHIM="$SHIM_EXPECTED" MCPCLASS_TORCH_PLUGIN="$PLUGIN_EXPECTED" run "$WORK/pc_static"
else
  run "$WORK/pc_static"
fi

if [ "$TORCH" = ON ]; then
  # The installed tool finds the modules relative to itself (bin/../lib/mcpclass).
  no_torch "$PREFIX/bin/mcpclass"
  LD_DEBUG=files "$PREFIX/bin/mcpclass" classify -c "$WORK/knn.yaml" "${LEARNED[1]}" \
    >"$WORK/cli.out" 2>"$WORK/ld.log" || { cat "$WORK/ld.log" >&2; exit 1; }
  grep -q '"category":"history"' "$WORK/cli.out" || { cat "$WORK/cli.out" >&2; exit 1; }
  loaded libmcpclass_spm.so "$SHIM" mcpclass
  loaded libmcpclass_torch.so "$PLUGIN" mcpclass
  PASSED=$((PASSED + 1))
  # Python (ctypes) on the installed libmcpclass.so.
  MCPCLASS_LIBRARY="$LIBDIR/libmcpclass.so" PYTHONPATH="$ROOT/bindings/python" \
    PYTHONDONTWRITEBYTECODE=1 LD_DEBUG=files /usr/bin/python3 - "${LEARNED[@]}" \
    2>"$WORK/ld.log" <<'PY' || { grep -v '^ *[0-9]*:' "$WORK/ld.log" >&2; exit 1; }
import sys
import mcpclass
with mcpclass.Classifier.from_file(sys.argv[1]) as c:
    r = c.classify(sys.argv[2])
    print("python consumer:", r.category, round(r.confidence, 3))
    sys.exit(0 if r.category == sys.argv[3] else 1)
PY
  loaded libmcpclass_spm.so "$SHIM" python
  loaded libmcpclass_torch.so "$PLUGIN" python
  PASSED=$((PASSED + 1))
fi
# The README's examples, as written, against the installed tree.
"$SRC/readme.sh" "$PREFIX" "$ROOT" "$WORK/readme" "$BUILD"
PASSED=$((PASSED + 1))
echo "install consumers (learned classifiers $TORCH): $PASSED passed, 0 failed"
