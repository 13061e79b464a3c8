# Quantized models (tests/quant): include() this from tests/CMakeLists.txt.
# quant_ort applies rules/onnx to the small QDQ models in tests/quant/models (four quantization
# styles) and has ONNX Runtime check that no quantized kernel is lost and that the outputs agree;
# skipped (77) without node/npm/registry or without /usr/bin/python3's onnx and numpy.
add_test(NAME quant_ort
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/quant_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR}/rules/onnx)
set_tests_properties(quant_ort PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS ort
                     RESOURCE_LOCK ort_node_modules)
