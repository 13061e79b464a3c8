# ONNX external data end to end (tests/big/external_data_test.py): a small generated
# external-data stack through every --external-data mode, byte-identity of untouched
# tensors, inline -> external -> inline, hostile external-data fields. Skips (77)
# without Debian's python3-onnx.
add_test(NAME external_data
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/external_data_test.py $<TARGET_FILE:graphfuse>
                 ${PROJECT_SOURCE_DIR}/rules/onnx ${PROJECT_SOURCE_DIR}/bench/big/gen_external.py)
set_tests_properties(external_data PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 120)

# Every shared model (../shared/models, beside the clone) through the default rules: the
# initializers a rewrite keeps are the input's bytes, and the output passes onnx.checker.
# Skips (77) without the folder or python3-onnx.
add_test(NAME shared_untouched_tensors
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/shared_untouched_test.py $<TARGET_FILE:graphfuse>
                 ${PROJECT_SOURCE_DIR}/rules/onnx ${PROJECT_SOURCE_DIR}/../shared/models)
set_tests_properties(shared_untouched_tensors PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)
