# Shared warning settings; -Werror when DPBUDGET_WERROR is on (CI and dev builds).
function(dpbudget_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wno-sign-conversion)
  if(DPBUDGET_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
