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
