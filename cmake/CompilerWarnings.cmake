# mcpclass_set_warnings(target): the project's warning set, fatal when MCPCLASS_WERROR is on.
function(mcpclass_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                                           $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local>
                                           $<$<BOOL:${MCPCLASS_WERROR}>:-Werror>)
endfunction()
