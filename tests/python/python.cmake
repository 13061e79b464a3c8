# The Python module's tests, run by Debian's /usr/bin/python3 (the interpreter the module is
# built for) against build/python (tests/python/test_graphfuse.py).
if(TARGET graphfuse_python)
  add_test(NAME python_module
           COMMAND /usr/bin/python3 -m unittest -v test_graphfuse
           WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(python_module PROPERTIES TIMEOUT 300 LABELS python
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;GRAPHFUSE_CLI=$<TARGET_FILE:graphfuse>;GRAPHFUSE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()
