# `make install` (cmake --install BUILD --prefix P): the binaries into P/bin, laid out as the
# public GenVM install is, so genvm-manager finds its executor lines relative to itself:
#   P/bin/{genvm,genvm-node,genvm-manager,...,genvm-cc}
#   P/executor/<version>/bin/genvm   P/data/manifest.yaml   (the line tools/genvm-manager sets up)
#   P/include/genlayer/genlayer.h    P/lib/genlayer/wasm32-wasi/libgenlayer_sdk.a   (sdk/c)
# Included last from the top-level CMakeLists.txt, when every target exists.
foreach(tool genvm genvm-node genvm-manager genvm-calldata genvm-hash genvm-wasm genvm-supervise genvm-module-web
             genvm-module-llm)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION bin)
  endif()
endforeach()
if(TARGET genvm AND TARGET genvm_executor_line)
  install(TARGETS genvm RUNTIME DESTINATION "executor/${GENVM_EXECUTOR_LINE_VERSION}/bin")
  install(FILES "${CMAKE_BINARY_DIR}/tools/data/manifest.yaml" DESTINATION data)
endif()

# build/bin: symlinks to every binary, so one PATH entry serves a build tree as an install's
# bin/ does (docs/TUTORIAL.md). genvm-cc is written there by sdk/c.
set(_bin_links)
foreach(tool genvm genvm-node genvm-manager genvm-calldata genvm-hash genvm-wasm genvm-supervise genvm-module-web
             genvm-module-llm genvm-test-host)
  if(TARGET ${tool})
    list(APPEND _bin_links COMMAND "${CMAKE_COMMAND}" -E create_symlink "$<TARGET_FILE:${tool}>"
         "${CMAKE_BINARY_DIR}/bin/${tool}")
  endif()
endforeach()
add_custom_target(genvm_bin_links ALL
  COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/bin" ${_bin_links}
  COMMENT "build/bin: links to the binaries")
