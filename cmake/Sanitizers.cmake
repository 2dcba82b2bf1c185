# MCPCLASS_SANITIZE: a comma-separated list of sanitizers applied to every target of the build,
# e.g. -DMCPCLASS_SANITIZE=address,undefined or -DMCPCLASS_SANITIZE=thread (see CMakePresets.json
# and scripts/test-sanitizers.sh). Empty (the default) adds nothing.
set(MCPCLASS_SANITIZE "" CACHE STRING "Sanitizers for every target: address,undefined | thread | empty")
if(MCPCLASS_SANITIZE)
  string(REPLACE "," ";" _mcpclass_sanitizers "${MCPCLASS_SANITIZE}")
  if("thread" IN_LIST _mcpclass_sanitizers AND "address" IN_LIST _mcpclass_sanitizers)
    message(FATAL_ERROR "MCPCLASS_SANITIZE: thread and address cannot be combined")
  endif()
  message(STATUS "mcpclass: sanitizers ${MCPCLASS_SANITIZE}")
  add_compile_options(-fsanitize=${MCPCLASS_SANITIZE} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${MCPCLASS_SANITIZE})
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC's flow analysis sees the sanitizers' instrumentation and reports false
    # -Wmaybe-uninitialized in libstdc++ (<regex>); the plain build keeps the warning.
    add_compile_options(-Wno-maybe-uninitialized)
    if("thread" IN_LIST _mcpclass_sanitizers)
      # GCC 12 warns that TSan does not model std::atomic_thread_fence (used by Asio).
      add_compile_options(-Wno-tsan)
    endif()
  endif()
  if("undefined" IN_LIST _mcpclass_sanitizers)
    # Every UB report is a failure, not a warning printed on the way. GCC leaves an
    # out-of-range float-to-integer conversion out of "undefined": add it.
    add_compile_options(-fsanitize=float-cast-overflow
                        -fno-sanitize-recover=undefined,float-cast-overflow)
    add_link_options(-fsanitize=float-cast-overflow)
  endif()
endif()
