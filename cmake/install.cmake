# `cmake --install build --prefix P`: the CLI, the libraries and their headers, the shipped
# rules (and target profiles), a CMake package (find_package(graphfuse CONFIG)) and pkg-config
# files. docs/library.md shows how a program uses them.
include(CMakePackageConfigHelpers)

set(GRAPHFUSE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/graphfuse)
set(GRAPHFUSE_DATA_DIR ${CMAKE_INSTALL_DATADIR}/graphfuse)

install(TARGETS graphfuse RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# One export set per library so the package config loads a library's targets only when its
# dependencies are found: a circuit rewriter needs neither protobuf nor oneDNN installed.
install(TARGETS graphfuse_engine EXPORT graphfuseEngineTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS graphfuse_onnx EXPORT graphfuseOnnxTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS graphfuse_kernels EXPORT graphfuseKernelsTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
target_include_directories(graphfuse_kernels PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
foreach(part Engine Onnx Kernels)
  install(EXPORT graphfuse${part}Targets NAMESPACE graphfuse:: DESTINATION ${GRAPHFUSE_CMAKE_DIR})
endforeach()

# Public headers: engine/include and kernels/include hold only the public API; the generated
# version header joins them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/graphfuse ${PROJECT_SOURCE_DIR}/kernels/include/graphfuse
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/graphfuse/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/graphfuse)

# Data: the rule libraries and, where present, the target profiles.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/rules DESTINATION ${GRAPHFUSE_DATA_DIR})
if(EXISTS ${PROJECT_SOURCE_DIR}/targets)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/targets DESTINATION ${GRAPHFUSE_DATA_DIR})
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/graphfuseConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/graphfuseConfig.cmake
  INSTALL_DESTINATION ${GRAPHFUSE_CMAKE_DIR}
  PATH_VARS GRAPHFUSE_DATA_DIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/graphfuseConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/graphfuseConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/graphfuseConfigVersion.cmake
        DESTINATION ${GRAPHFUSE_CMAKE_DIR})

# pkg-config: graphfuse (the engine), graphfuse-onnx, graphfuse-kernels. The libraries are
# static, so each file's Requires/Libs name what its library links, for a plain --libs.
# The prefix is found relative to the .pc file (${pcfiledir}), so the files stay right for
# `cmake --install --prefix P` whatever CMAKE_INSTALL_PREFIX was at configure time.
file(RELATIVE_PATH GRAPHFUSE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
foreach(pc graphfuse graphfuse-onnx graphfuse-kernels)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/${pc}.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()
