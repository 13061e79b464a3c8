# TensorFlow formats and TensorFlow.js as the judge (tests/tfjs): include() this from
# tests/CMakeLists.txt. The models are tests/data/tf, written by tests/tfjs/make_models.py.
# tf_roundtrip: GraphDef (.pb) and TF.js round trips give the input's bytes back.
add_test(NAME tf_roundtrip
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/roundtrip_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR}/tests/data/tf)
set_tests_properties(tf_roundtrip PROPERTIES TIMEOUT 120 LABELS tfjs)
# tfjs_judge: TF.js (cpu, wasm) agrees on every TF.js model, its round trip, and its rewrite
# by rules/tf for --target tfjs-wasm; skipped (77) without node/npm/registry.
add_test(NAME tfjs_judge
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/roundtrip_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR}/tests/data/tf judge
                 ${PROJECT_SOURCE_DIR}/rules/tf)
set_tests_properties(tfjs_judge PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS tfjs RESOURCE_LOCK tfjs_node_modules)
# tfjs_nchw: an NCHW TF.js model made NHWC and fused by rules/tf for --target tfjs-wasm;
# TF.js cpu agrees with the original (wasm refuses NCHW), wasm runs the rewrite.
add_test(NAME tfjs_nchw COMMAND ${CMAKE_CURRENT_LIST_DIR}/nchw_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR})
set_tests_properties(tfjs_nchw PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120 LABELS tfjs RESOURCE_LOCK tfjs_node_modules)
