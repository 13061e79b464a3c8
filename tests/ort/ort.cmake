# ONNX Runtime as the judge (tests/ort): include() this from tests/CMakeLists.txt.
# ort_roundtrip imports and re-exports every model in ../shared/models with graphfuse and
# checks ONNX Runtime's outputs for both against the references; skipped (77) without
# node/npm/registry or without the models.

add_executable(onnx_roundtrip ${CMAKE_CURRENT_LIST_DIR}/roundtrip_tool.cpp)
target_include_directories(onnx_roundtrip PRIVATE ${PROJECT_SOURCE_DIR}/engine)
target_link_libraries(onnx_roundtrip PRIVATE graphfuse_engine graphfuse_onnx)

add_test(NAME ort_roundtrip
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/roundtrip_test.sh $<TARGET_FILE:onnx_roundtrip>
                 ${PROJECT_SOURCE_DIR}/../shared/models)
# Both ort tests share tests/ort/node_modules: the lock keeps ctest -j from running them side by
# side (install.sh also takes a file lock for runs outside ctest).
set_tests_properties(ort_roundtrip PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS ort
                     RESOURCE_LOCK ort_node_modules)

# ort_fused applies rules/onnx/*.yaml to every model in ../shared/models and checks ONNX
# Runtime's outputs for the fused models against the references, that ONNX Runtime runs
# every fused node as written (optimizer disabled), the fused-node counts per model
# (tests/ort/fused_check.js), and every rule family on a small generated model
# (tests/ort/fused_cases.js); skipped (77) without node/npm/registry or without the models.
add_test(NAME ort_fused
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/fused_test.sh $<TARGET_FILE:graphfuse>
                 ${PROJECT_SOURCE_DIR}/../shared/models ${PROJECT_SOURCE_DIR}/rules/onnx)
set_tests_properties(ort_fused PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS ort
                     RESOURCE_LOCK ort_node_modules)
