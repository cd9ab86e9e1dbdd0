# cc_test(NAME [OPTIMIZED] SOURCES... [LIBS ...] [FLAGS ...]): a GoogleTest binary registered
# with ctest. Compiled with CC_TEST_COMPILE_OPTIONS too (the ASan preset's -O0) unless OPTIMIZED:
# a test whose run time, not its compile time, dominates keeps the preset's optimization.
#
# A test with the default options reuses one precompiled <gtest/gtest.h> (cc_test_pch): parsing
# it took 1-2 s of every test's compile, in each of the three builds make test does. A test with
# its own options (OPTIMIZED, FLAGS) parses the header itself; the compiler would refuse a
# precompiled header built with other options anyway.
function(cc_test name)
  cmake_parse_arguments(ARG "OPTIMIZED" "" "SOURCES;LIBS;FLAGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE chronocache cc_warnings GTest::gtest GTest::gtest_main
                                        ${ARG_LIBS})
  if(NOT ARG_OPTIMIZED)
    target_compile_options(${name} PRIVATE ${CC_TEST_COMPILE_OPTIONS})
  endif()
  target_compile_options(${name} PRIVATE ${ARG_FLAGS})
  if(NOT ARG_OPTIMIZED AND NOT ARG_FLAGS)
    cc_test_pch()
    target_precompile_headers(${name} REUSE_FROM cc_test_pch)
  endif()
  add_test(NAME ${name} COMMAND ${name})
endfunction()

# The target that owns the tests' precompiled header, made by the first cc_test that needs it.
function(cc_test_pch)
  if(NOT TARGET cc_test_pch)
    add_library(cc_test_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/empty.cc)
    target_link_libraries(cc_test_pch PRIVATE chronocache cc_warnings GTest::gtest)
    target_compile_options(cc_test_pch PRIVATE ${CC_TEST_COMPILE_OPTIONS})
    target_precompile_headers(cc_test_pch PRIVATE <gtest/gtest.h>)
  endif()
endfunction()

# cc_noexcept_test(NAME SOURCES... [LIBS ...]): the same tests again, built with -fno-exceptions,
# for the parts that promise to work without exceptions (STYLE.md, convention 2). Only where
# CC_NOEXCEPT_TESTS is on (Release): what such a build compiles differently is the few paths that
# would throw, which Release runs; the sanitizer presets save the second build of these tests.
function(cc_noexcept_test name)
  if(CC_NOEXCEPT_TESTS)
    cc_test(${name} ${ARGN} FLAGS -fno-exceptions)
  endif()
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
