# Fresh-machine guard: every file configure found, the compiler read and the linker took comes
# from a package scripts/setup installs (scripts/debian-packages) or a hard dependency of one
# (tests/deps/check_debian_packages.py).
add_test(NAME deps_debian_packages
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_debian_packages.py ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR}/scripts/debian-packages)
set_tests_properties(deps_debian_packages PROPERTIES SKIP_RETURN_CODE 77 LABELS deps)
# The guard itself: with the OpenCL development package cut from the list (the fresh-machine
# failure of libdnnl-dev's CMake package), it must name libOpenCL.so and its package; with
# python3-dev cut, the Python header the module compiles against.
add_test(NAME deps_debian_packages_detects_cut
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_debian_packages.py ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR}/scripts/debian-packages --without ocl-icd-opencl-dev)
set_tests_properties(deps_debian_packages_detects_cut PROPERTIES LABELS deps
  PASS_REGULAR_EXPRESSION "FAIL [^\n]*libOpenCL[^\n]*: from package ocl-icd-opencl-dev")
# (Only where the Python module is built: the sanitizer build leaves it out.)
if(TARGET graphfuse_python)
add_test(NAME deps_debian_packages_detects_cut_python
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/check_debian_packages.py ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR}/scripts/debian-packages --without python3-dev)
set_tests_properties(deps_debian_packages_detects_cut_python PROPERTIES LABELS deps
  PASS_REGULAR_EXPRESSION "FAIL /usr/include/python3[^\n]*/Python.h: from package libpython3")
endif()
