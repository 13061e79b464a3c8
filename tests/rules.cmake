# One ctest test per rule file or rule-test file: `graphfuse test FILE` must pass.
file(GLOB_RECURSE GRAPHFUSE_RULE_TEST_FILES CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/rules/*.yaml ${CMAKE_SOURCE_DIR}/tests/rules/*.yaml)
foreach(rule_file ${GRAPHFUSE_RULE_TEST_FILES})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR} ${rule_file})
  add_test(NAME "rules:${rel}" COMMAND graphfuse test ${rel} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
endforeach()
