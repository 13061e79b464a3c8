# The installed library as a separate project sees it (tests/embed/embed_test.sh): install to a
# temporary prefix, build examples/embed with find_package(graphfuse CONFIG) and pkg-config.
# Not in sanitizer builds (scripts/sanitize): their installed libraries need the sanitizer
# runtime that a plain consumer project does not link; packaging is checked by the plain build.
if(GRAPHFUSE_INSTALL AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  add_test(NAME embed_installed_package
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/embed_test.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(embed_installed_package PROPERTIES TIMEOUT 300 LABELS embed)
endif()
