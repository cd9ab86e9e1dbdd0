# cc_test(NAME SOURCES... [LIBS ...] [FLAGS ...]): a GoogleTest binary registered with ctest.
function(cc_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;FLAGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE chronocache cc_warnings GTest::gtest GTest::gtest_main
                                        ${ARG_LIBS})
  target_compile_options(${name} PRIVATE ${ARG_FLAGS})
  add_test(NAME ${name} COMMAND ${name})
endfunction()

# cc_library(NAME SOURCES... [DEPS ...]): one folder's static library. DEPS are the folders (or
# libraries) it may use: the link graph states the layering, so a missing dependency is a link
# error and a new one is a visible line in review (tools/check_layering.py checks the includes).
function(cc_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE cc_warnings)
endfunction()
