# NHWC (TensorFlow-converted) models through the layout rules (issue 10): include() this from
# tests/CMakeLists.txt. One test per shared CNN; skipped (77) without ../shared/models or
# python3-onnx. Targets: Transposes, FusedConv and QuickGelu counts ONNX Runtime 1.30 reaches
# on the same NHWC files (2 Transposes after its transpose optimizer; 9 / 35 / 26 FusedConv;
# 16 FusedConv + 49 QuickGelu on efficientnet_b0, which tests/layout/make_efficientnet.py
# generates with random weights, since ../shared/models has none with SiLU and squeeze-excite).
foreach(spec "resnet18;2;9;0" "mobilenet_v2;2;35;0" "squeezenet1_1;2;26;0" "efficientnet_b0;2;16;49")
  list(GET spec 0 model)
  list(GET spec 1 max_transposes)
  list(GET spec 2 min_fused)
  list(GET spec 3 min_quick_gelu)
  add_test(NAME layout_nhwc_${model}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/nhwc_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/layout_nhwc/${model} ${model} ${max_transposes} ${min_fused} ${min_quick_gelu})
  set_tests_properties(layout_nhwc_${model} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "layout;ort"
                       RESOURCE_LOCK ort_node_modules)
endforeach()

# Pad and Resize through the layout rules, checked with ONNX Runtime (no reference kernels).
add_test(NAME layout_pad_resize_ort
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/pad_resize_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR}
                 ${CMAKE_CURRENT_BINARY_DIR}/layout_pad_resize)
set_tests_properties(layout_pad_resize_ort PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS "layout;ort"
                     RESOURCE_LOCK ort_node_modules)
