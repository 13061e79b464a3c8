# One ctest test per rule file or rule-test file: `graphfuse test FILE` must pass.
file(GLOB_RECURSE GRAPHFUSE_RULE_TEST_FILES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/rules/*.yaml ${PROJECT_SOURCE_DIR}/tests/rules/*.yaml)
# A rule file without a `tests:` section (an ops schema, rules tested from another file)
# is checked instead: `graphfuse test` on it fails by design (it tests nothing). Graph files
# kept beside the tests (tests/rules/graphs/) are neither.
foreach(rule_file ${GRAPHFUSE_RULE_TEST_FILES})
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${rule_file})
  file(STRINGS ${rule_file} has_tests REGEX "^tests:")
  file(STRINGS ${rule_file} has_rules REGEX "^rules:")
  if(has_tests)
    add_test(NAME "rules:${rel}" COMMAND graphfuse test ${rel} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  elseif(has_rules)
    add_test(NAME "rules-check:${rel}" COMMAND graphfuse check ${rel} WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  endif()
endforeach()
