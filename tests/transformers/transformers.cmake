# Transformer blocks (tests/data/transformers, from bench/transformers/export_blocks.py) through
# the ONNX rules, judged by ONNX Runtime and onnx.checker, node counts against expected.json;
# skipped (77) without node/npm/registry or without Debian's python3-onnx.
add_test(NAME transformers_models
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/transformers_test.sh $<TARGET_FILE:graphfuse>)
set_tests_properties(transformers_models PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS ort
                     RESOURCE_LOCK ort_node_modules)
