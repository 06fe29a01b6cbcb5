# genvm_add_tests(NAME LIB): one GoogleTest binary from every *_test.cc of the calling folder.
function(genvm_add_tests name lib)
  file(GLOB test_sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc")
  if(NOT test_sources)
    return()
  endif()
  add_executable(${name} ${test_sources})
  target_link_libraries(${name} PRIVATE ${lib} GTest::gtest GTest::gtest_main Threads::Threads)
  target_compile_definitions(${name} PRIVATE
    GENVM_SHARED_DIR="${GENVM_SHARED_DIR}"
    GENVM_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    GENVM_BINARY_DIR="${CMAKE_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
endfunction()

# genvm_add_fuzzer(NAME SOURCES src... LIBS lib...): one libFuzzer binary (with ASan+UBSan).
# The libraries it links should be coverage-instrumented copies (-fsanitize=fuzzer-no-link) so
# the fuzzer sees inside the code it drives. Call only when GENVM_BUILD_FUZZERS is on.
function(genvm_add_fuzzer name)
  cmake_parse_arguments(FUZZ "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${FUZZ_SOURCES})
  target_include_directories(${name} PRIVATE "${CMAKE_SOURCE_DIR}/src")
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${FUZZ_LIBS})
  add_dependencies(fuzzers ${name})
endfunction()
