# One ctest test per rule file or rule-test file: `graphfuse test FILE` must pass.
file(GLOB_RECURSE GRAPHFUSE_RULE_TEST_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/rules/*.yaml ${PROJECT_SOURCE_DIR}/tests/rules/*.yaml)
foreach(rule_file ${GRAPHFUSE_RULE_TEST_FILES})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${rule_file})
  add_test(NAME "rules:${rel}" COMMAND graphfuse test ${rel} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endforeach()
