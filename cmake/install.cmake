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
