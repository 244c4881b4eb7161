# Project-wide warning flags, applied per target via trnsim_warnings(<target>).
function(trnsim_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local -Wno-unused-parameter)
  if(TRNSIM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
