# ONNX Runtime as the judge (tests/ort): include() this from tests/CMakeLists.txt.
# ort_roundtrip imports and re-exports every model in ../shared/models with graphfuse and
# checks ONNX Runtime's outputs for both against the references; skipped (77) without
# node/npm/registry or without the models.

add_executable(onnx_roundtrip ${CMAKE_CURRENT_LIST_DIR}/roundtrip_tool.cpp)
target_include_directories(onnx_roundtrip PRIVATE ${CMAKE_SOURCE_DIR}/engine)
target_link_libraries(onnx_roundtrip PRIVATE graphfuse_engine)

add_test(NAME ort_roundtrip
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/roundtrip_test.sh $<TARGET_FILE:onnx_roundtrip>
                 ${CMAKE_SOURCE_DIR}/../shared/models)
set_tests_properties(ort_roundtrip PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS ort)
