# ccache, when installed (scripts/debian-packages.txt declares it): test.sh builds three trees
# (release, ASan, fuzz) from the same sources, and CI reruns them from a fresh clone.
option(MCPCLASS_CCACHE "Compile through ccache when it is installed" ON)
if(MCPCLASS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(MCPCLASS_CCACHE_PROGRAM ccache)
  if(MCPCLASS_CCACHE_PROGRAM)
    set(CMAKE_C_COMPILER_LAUNCHER "${MCPCLASS_CCACHE_PROGRAM}")
    set(CMAKE_CXX_COMPILER_LAUNCHER "${MCPCLASS_CCACHE_PROGRAM}")
  endif()
endif()
