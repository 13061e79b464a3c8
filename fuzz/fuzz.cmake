# The fuzz targets in ctest (fuzz/, docs/fuzzing.md). fuzz_build configures and builds them
# with clang + libFuzzer + ASan + UBSan into <build>/fuzz, a CMake project of its own (a test
# fixture, so a plain `cmake --build` does not pay for it; ccache makes rebuilds cheap); then
# fuzz_<target> runs each target for GRAPHFUSE_FUZZ_SECONDS on its corpus, which replays every
# seed and regression input first; -seed=1 fixes the mutation sequence, so a CI failure is a
# change, not luck. Without clang or libFuzzer's runtime they are skipped.
# Longer runs: scripts/fuzz TARGET SECONDS.
set(GRAPHFUSE_FUZZ_SECONDS 3 CACHE STRING "seconds ctest fuzzes each target for")
add_test(NAME fuzz_build COMMAND ${CMAKE_CURRENT_LIST_DIR}/build.sh ${PROJECT_BINARY_DIR}/fuzz)
set_tests_properties(fuzz_build PROPERTIES FIXTURES_SETUP graphfuse_fuzz SKIP_RETURN_CODE 77
                     TIMEOUT 1800 LABELS fuzz)
foreach(t rules graph_text graph_yaml graph_json graph_gfb onnx onnx_external apply graphdef tfjs)
  add_test(NAME fuzz_${t}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/run.sh ${PROJECT_BINARY_DIR}/fuzz ${t} ${GRAPHFUSE_FUZZ_SECONDS} -seed=1)
  set_tests_properties(fuzz_${t} PROPERTIES FIXTURES_REQUIRED graphfuse_fuzz SKIP_RETURN_CODE 77
                       TIMEOUT 300 LABELS fuzz)
endforeach()

# The property test at scale (tests/unit/property_rewrite_test.cpp): 10^4 random DAGs x every
# shipped rule set; ctest runs 200. `cmake --build build --target property_soak`
# (GRAPHFUSE_PROPERTY_SEED in the environment varies it).
add_custom_target(property_soak
  COMMAND ${CMAKE_COMMAND} -E env GRAPHFUSE_PROPERTY_CASES=10000 $<TARGET_FILE:unit_tests>
          --gtest_filter=PropertyRewrite.*
  DEPENDS unit_tests WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} USES_TERMINAL)
