#!/usr/bin/env bash
# readme.sh PREFIX ROOT WORK BUILD: the "ways in" examples of bindings/README.md, exactly as
# written there, built and run against the mcpclass installed in PREFIX: C (pkg-config), C++
# (find_package), Python (ctypes) and Go (cgo; the fragment wrapped in a main function, when go
# is installed). A README example that no longer compiles or fails fails this script.
set -euo pipefail
PREFIX="$1"
ROOT="$2"
WORK="$3"
BUILD="$4"
README="$ROOT/bindings/README.md"
mkdir -p "$WORK"
LIBDIR="$(dirname "$(find "$PREFIX" -name libmcpclass.so | head -n1)")"
PCDIR="$(dirname "$(find "$PREFIX" -name mcpclass.pc | head -n1)")"

# block LANG: the first ```LANG fenced block of the README.
block() {
  awk -v lang="$1" '$0 == "```" lang { on = 1; next } on && $0 == "```" { exit } on { print }' "$README"
}
# expect_category OUTPUT: the example printed a classification (a category name first).
expect_category() {
  if ! grep -Eq '^(math|science|technology|history|general) ' <<<"$1"; then
    echo "the example printed no classification: $1" >&2
    exit 1
  fi
}

block c >"$WORK/example.c"
block cpp >"$WORK/example.cpp"
block python >"$WORK/example.py"
block go >"$WORK/example.go.fragment"
for f in example.c example.cpp example.py example.go.fragment; do
  [ -s "$WORK/$f" ] || { echo "bindings/README.md has no example for $f" >&2; exit 1; }
done

# C, through pkg-config.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -pedantic -Werror $(PKG_CONFIG_PATH="$PCDIR" pkg-config --cflags mcpclass) \
  "$WORK/example.c" -o "$WORK/example_c" $(PKG_CONFIG_PATH="$PCDIR" pkg-config --libs mcpclass) \
  -Wl,-rpath,"$LIBDIR"
out="$("$WORK/example_c")"
echo "README C: $out"
expect_category "$out"

# C++, through find_package.
cat >"$WORK/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(readme_example LANGUAGES CXX)
find_package(mcpclass 0.1 REQUIRED)
add_executable(example_cpp example.cpp)
set_target_properties(example_cpp PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON)
target_compile_options(example_cpp PRIVATE -Wall -Wextra -Werror)
target_link_libraries(example_cpp PRIVATE mcpclass::mcpclass)
CMAKE
{ cmake -S "$WORK" -B "$WORK/cpp" -G Ninja -DCMAKE_PREFIX_PATH="$PREFIX" &&
  cmake --build "$WORK/cpp"; } >"$WORK/cpp.log" 2>&1 || { cat "$WORK/cpp.log" >&2; exit 1; }
out="$("$WORK/cpp/example_cpp")"
echo "README C++: $out"
expect_category "$out"

# Python, as a user installs it: pip into a fresh venv (Debian's setuptools and wheel, no index),
# run outside the source tree, the library found in the installed prefix through pkg-config.
/usr/bin/python3 -m venv --system-site-packages "$WORK/venv"
# setuptools builds in the source directory (build/, *.egg-info): build a copy, not the checkout.
cp -r "$ROOT/bindings/python" "$WORK/python-src"
"$WORK/venv/bin/pip" install --quiet --no-build-isolation --no-index "$WORK/python-src" \
  >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log" >&2; exit 1; }
py() { (cd "$WORK" && env -u PYTHONPATH -u MCPCLASS_LIBRARY -u LD_LIBRARY_PATH PYTHONDONTWRITEBYTECODE=1 \
  "$WORK/venv/bin/python" "$@"); }
where="$(PKG_CONFIG_PATH="$PCDIR" py -c 'import mcpclass; print(mcpclass.__file__)')"
case "$where" in
  "$WORK/venv/"*) ;;
  *) echo "mcpclass was imported from $where, not the venv" >&2; exit 1 ;;
esac
out="$(PKG_CONFIG_PATH="$PCDIR" py "$WORK/example.py")"
echo "README Python (pip-installed, libmcpclass via pkg-config): ${out//$'\n'/ | }"
expect_category "$out"
# With no way to find the library, the import error names every way there is.
if err="$(PKG_CONFIG_PATH=/nonexistent py -c 'import mcpclass' 2>&1)"; then
  echo "mcpclass imported with no library to find" >&2; exit 1
fi
for way in MCPCLASS_LIBRARY LD_LIBRARY_PATH PKG_CONFIG_PATH; do
  grep -q "$way" <<<"$err" || { echo "the import error does not name $way: $err" >&2; exit 1; }
done

# Go: the fragment is the body of main.
if ! command -v go >/dev/null; then
  echo "README Go: not checked (go is not installed)"
  exit 0
fi
mkdir -p "$WORK/go"
cat >"$WORK/go/go.mod" <<GOMOD
module readme

go 1.19

require github.com/mcpclass/mcpclass/bindings/go v0.0.0
replace github.com/mcpclass/mcpclass/bindings/go => $ROOT/bindings/go
GOMOD
{
  printf 'package main\n\nimport (\n\t"encoding/json"\n\t"fmt"\n\t"log"\n\n\t"github.com/mcpclass/mcpclass/bindings/go"\n)\n\nfunc main() {\n'
  sed 's/^/\t/' "$WORK/example.go.fragment"
  printf '}\n'
} >"$WORK/go/main.go"
export CGO_ENABLED=1 GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local
export GOCACHE="${GOCACHE:-$BUILD/go/cache}" GOPATH="${GOPATH:-$BUILD/go/path}"
export GOMODCACHE="${GOMODCACHE:-$BUILD/go/path/pkg/mod}"
# Go's build cache does not key the package on pkg-config's link flags, so a package cached by
# another build would link against that build's library; CGO_LDFLAGS is part of the key.
(cd "$WORK/go" && PKG_CONFIG_PATH="$PCDIR" CGO_LDFLAGS="-L$LIBDIR" go build -o example_go .) \
  >"$WORK/go.log" 2>&1 ||
  { cat "$WORK/go.log" >&2; echo "(the README Go example, wrapped: $WORK/go/main.go)" >&2; exit 1; }
out="$(LD_LIBRARY_PATH="$LIBDIR" "$WORK/go/example_go")"
echo "README Go: ${out//$'\n'/ | }"
expect_category "$out"
# The same consumer module, tested the way a user's module is: go test -race, from many
# goroutines, against the installed library.
cat >"$WORK/go/consumer_test.go" <<'GOTEST'
package main

import (
	"sync"
	"testing"

	"github.com/mcpclass/mcpclass/bindings/go"
)

func TestInstalledClassifierFromGoroutines(t *testing.T) {
	c, err := mcpclass.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.Classify("What is the derivative of x squared?")
			if err != nil {
				t.Error(err)
				return
			}
			if r.Category != "math" {
				t.Errorf("category %q, want math", r.Category)
			}
		}()
	}
	wg.Wait()
}
GOTEST
(cd "$WORK/go" && PKG_CONFIG_PATH="$PCDIR" CGO_LDFLAGS="-L$LIBDIR" LD_LIBRARY_PATH="$LIBDIR" \
  go test -race -count=1 -v .) >"$WORK/go-test.log" 2>&1 || { cat "$WORK/go-test.log" >&2; exit 1; }
grep -q -- '--- PASS: TestInstalledClassifierFromGoroutines' "$WORK/go-test.log" ||
  { cat "$WORK/go-test.log" >&2; exit 1; }
echo "Go consumer module (replace => bindings/go, pkg-config on the install): go test -race passed"
