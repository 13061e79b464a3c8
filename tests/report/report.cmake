# `graphfuse report` in a real browser and `graphfuse dot` through Graphviz (tests/report).
add_test(NAME report_in_browser COMMAND ${CMAKE_CURRENT_LIST_DIR}/report_test.sh $<TARGET_FILE:graphfuse> ${PROJECT_SOURCE_DIR})
set_tests_properties(report_in_browser PROPERTIES TIMEOUT 300 LABELS report)
