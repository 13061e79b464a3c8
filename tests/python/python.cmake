# The Python module's tests, run by Debian's /usr/bin/python3 (the interpreter the module is
# built for) against build/python (tests/python/test_graphfuse.py).
if(TARGET graphfuse_python)
  add_test(NAME python_module
           COMMAND /usr/bin/python3 -m unittest -v test_graphfuse
           WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(python_module PROPERTIES TIMEOUT 300 LABELS python
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;GRAPHFUSE_CLI=$<TARGET_FILE:graphfuse>;GRAPHFUSE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  # optimize with onnx.ModelProto / bytes / paths and external data (python/graphfuse/_onnx_model.py).
  add_test(NAME python_onnx_model
           COMMAND /usr/bin/python3 -m unittest -v test_onnx_model
           WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(python_onnx_model PROPERTIES TIMEOUT 120 LABELS python
    ENVIRONMENT "PYTHONPATH=${PROJECT_BINARY_DIR}/python;GRAPHFUSE_CLI=$<TARGET_FILE:graphfuse>;GRAPHFUSE_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  # `pip install .` in a fresh venv, reusing this build (pyproject.toml, python/build_backend).
  add_test(NAME python_pip_install
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/pip_install_test.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set_tests_properties(python_pip_install PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS python
                       RESOURCE_LOCK graphfuse_python_build)
endif()
