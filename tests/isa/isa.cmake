# The fast kernels under older instruction sets (tests/isa): include() this from
# tests/CMakeLists.txt. One process per ISA, since oneDNN reads ONEDNN_MAX_CPU_ISA once.
# Skipped (77) without ../shared/models.
if(TARGET graphfuse_kernels)
  add_executable(isa_test ${CMAKE_CURRENT_LIST_DIR}/isa_test.cpp)
  target_link_libraries(isa_test PRIVATE graphfuse_kernels graphfuse_onnx)
  foreach(isa AVX2 SSE41)
    string(TOLOWER ${isa} isa_lower)
    add_test(NAME kernels:isa:${isa_lower}
             COMMAND isa_test ${PROJECT_SOURCE_DIR}/../shared/models ${PROJECT_SOURCE_DIR}/rules/onnx)
    set_tests_properties(kernels:isa:${isa_lower} PROPERTIES
      ENVIRONMENT "ONEDNN_MAX_CPU_ISA=${isa}" SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS kernels)
  endforeach()
endif()
