# Warning flags every project target gets (third-party headers come in as SYSTEM).
add_library(cc_warnings INTERFACE)
target_compile_options(cc_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                             -Wno-sign-conversion)
if(CC_WERROR)
  target_compile_options(cc_warnings INTERFACE -Werror)
endif()
