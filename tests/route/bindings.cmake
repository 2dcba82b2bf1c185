# The bindings' routers (docs/route.md): the Go router (bindings/go/examples/router), the Python
# router (bindings/python/examples/router.py) and their parity with `mcpclass route`, all against
# tests/route/fake_upstream.py over real sockets. Included from tests/CMakeLists.txt; the
# settings follow the binding tests of tests/capi/CMakeLists.txt.
# The routers' own tests run in capi_go_binding (go test ./...) and capi_python_binding
# (bindings/python/tests).
if(TARGET mcpclass_capi AND EXISTS /usr/bin/python3)
  find_program(MCPCLASS_GO NAMES go)
  # Go: the built shared library through pkg-config, no module downloads (standard library only).
  set(_route_go_env
    "PKG_CONFIG_PATH=${PROJECT_BINARY_DIR}/capi/pkgconfig"
    "LD_LIBRARY_PATH=$<TARGET_FILE_DIR:mcpclass_capi>"
    "CGO_ENABLED=1" "GOFLAGS=-mod=mod" "GOPROXY=off" "GOTOOLCHAIN=local"
    "GOCACHE=${PROJECT_BINARY_DIR}/go/cache" "GOPATH=${PROJECT_BINARY_DIR}/go/path"
    "GOMODCACHE=${PROJECT_BINARY_DIR}/go/path/pkg/mod")
  set(_route_py_env
    "MCPCLASS_LIBRARY=$<TARGET_FILE:mcpclass_capi>"
    "PYTHONPATH=${PROJECT_SOURCE_DIR}/bindings/python" "PYTHONDONTWRITEBYTECODE=1")

  # Three router processes (C++, Go, Python) on the same config and fake upstream; the Go part
  # is skipped without go, the C++ part while the CLI has no `route` subcommand.
  if(TARGET mcpclass-cli)
    add_test(NAME route.binding_parity
             COMMAND /usr/bin/python3 -m pytest -q -p no:cacheprovider -rs
                     ${CMAKE_CURRENT_LIST_DIR}/test_binding_parity.py)
    set_tests_properties(route.binding_parity PROPERTIES
      ENVIRONMENT "MCPCLASS_BIN=$<TARGET_FILE:mcpclass-cli>;${_route_py_env};${_route_go_env}"
      LABELS "route;bindings" TIMEOUT 900 RUN_SERIAL TRUE)
  endif()
endif()
