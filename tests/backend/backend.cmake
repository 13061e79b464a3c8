# ONNX's backend test suite (Debian's libonnx-testdata, 1,072 cases) against graphfuse: every
# case through `apply` with rules/onnx and through `--fold all` with its inputs frozen (both
# judged by ONNX Runtime), and through the reference executor. tests/backend/expected.txt
# holds every case's verdicts; backend_suite.py fails on any change. Skipped (77) without the
# test data, python3-onnx or onnxruntime-node. About 15 s on 2 cores.
add_test(NAME onnx_backend
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/backend_suite.py
                 --graphfuse $<TARGET_FILE:graphfuse> --rules-dir ${PROJECT_SOURCE_DIR}/rules/onnx)
set_tests_properties(onnx_backend PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS ort
                     RESOURCE_LOCK ort_node_modules)

# The per-op coverage table of docs/kernels.md (tests/backend/coverage_table.py) must be what
# expected.txt and the kernel registry give today. Skipped (77) without the test data or
# python3-onnx. About 5 s.
add_test(NAME backend_coverage_table
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/coverage_table.py
                 --graphfuse $<TARGET_FILE:graphfuse> --check ${PROJECT_SOURCE_DIR}/docs/kernels.md)
set_tests_properties(backend_coverage_table PROPERTIES SKIP_RETURN_CODE 77)
