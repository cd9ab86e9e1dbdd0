# cc_test(NAME SOURCES... [LIBS ...] [FLAGS ...]): a GoogleTest binary registered with ctest.
function(cc_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;FLAGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE chronocache cc_warnings GTest::gtest GTest::gtest_main
                                        ${ARG_LIBS})
  target_compile_options(${name} PRIVATE ${ARG_FLAGS})
  add_test(NAME ${name} COMMAND ${name})
endfunction()
