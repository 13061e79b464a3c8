# Numeric verification of the shipped ONNX rules on the shared models (tests/verify): include()
# this from tests/CMakeLists.txt. The ctest run uses the fast kernels and the all-rules run
# per model (seconds); the full per-rule run on the reference kernels, whose numbers
# docs/performance.md reports, is `tests/verify/verify_models.sh build/graphfuse
# ../shared/models rules/onnx`. Skipped (77) without ../shared/models.
add_test(NAME verify_models
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/verify_models.sh $<TARGET_FILE:graphfuse>
                 ${PROJECT_SOURCE_DIR}/../shared/models ${PROJECT_SOURCE_DIR}/rules/onnx --kernels fast --quick)
set_tests_properties(verify_models PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS verify)

# Every shipped rule has a verified case in tests/rules/verify_*.yaml.
add_test(NAME verify_rule_coverage COMMAND ${CMAKE_CURRENT_LIST_DIR}/rule_coverage.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(verify_rule_coverage PROPERTIES LABELS verify)

# tests/verify/precision_f64.sh's tool: float32 results of a model and its rewrite against a
# float64 evaluation (docs/performance.md, the accuracy of the layer-norm fusion). Built on
# request only: `cmake --build BUILD --target precision_f64`.
if(TARGET graphfuse_kernels)
  add_executable(precision_f64 EXCLUDE_FROM_ALL ${CMAKE_CURRENT_LIST_DIR}/precision_f64.cpp)
  target_link_libraries(precision_f64 PRIVATE graphfuse_kernels graphfuse_onnx)
  set_target_properties(precision_f64 PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
endif()
