# Install rules: headers, libraries, the mcpclass tool, CMake package files
# (mcpclassConfig.cmake + version file, namespaced targets) and pkg-config files.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(MCPCLASS_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/mcpclass")
if(MCPCLASS_WITH_LEARNED)
  set(MCPCLASS_CONFIG_WITH_LEARNED TRUE)
else()
  set(MCPCLASS_CONFIG_WITH_LEARNED FALSE)
endif()

install(DIRECTORY "${PROJECT_SOURCE_DIR}/include/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(FILES "${PROJECT_BINARY_DIR}/layers/util/mcpclass/version.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/mcpclass")

install(TARGETS mcpclass EXPORT mcpclassTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
if(TARGET mcpclass-cli)
  install(TARGETS mcpclass-cli RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
endif()

# The run-time modules, the sentencepiece shim and the libtorch plugin: libmcpclass.so and the
# installed tool look for them in <libdir>/mcpclass/ relative to themselves
# (src/tokenizers/sentencepiece_shim_path.hpp); the `torch` component of the CMake package imports
# them as mcpclass::sentencepiece_shim and mcpclass::torch_plugin for consumers that bundle them.
if(TARGET mcpclass_spm)
  set(_mcpclass_modules mcpclass_spm)
  if(TARGET mcpclass_torch)
    list(APPEND _mcpclass_modules mcpclass_torch)
  endif()
  install(TARGETS ${_mcpclass_modules} EXPORT mcpclassTorchTargets
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}/mcpclass")
  install(EXPORT mcpclassTorchTargets NAMESPACE mcpclass::
          DESTINATION "${MCPCLASS_INSTALL_CMAKEDIR}")
endif()

if(TARGET mcpclass_capi)
  install(FILES "${MCPCLASS_CAPI_INCLUDE_DIR}/mcpclass/mcpclass.h"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/mcpclass")
  install(TARGETS mcpclass_capi_static EXPORT mcpclassTargets
          ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
  install(TARGETS mcpclass_capi EXPORT mcpclassCapiTargets
          LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" NAMELINK_COMPONENT Unspecified
          RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
  install(EXPORT mcpclassCapiTargets NAMESPACE mcpclass::
          DESTINATION "${MCPCLASS_INSTALL_CMAKEDIR}")

  # pkg-config: relocatable (paths relative to the .pc file).
  set(_mcpclass_pcdir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  file(RELATIVE_PATH MCPCLASS_PC_RELATIVE_PREFIX "/prefix/${_mcpclass_pcdir}" "/prefix")
  string(REGEX REPLACE "/$" "" MCPCLASS_PC_RELATIVE_PREFIX "${MCPCLASS_PC_RELATIVE_PREFIX}")
  # The static core never links libtorch: the learned classifiers dlopen their modules.
  # `pkg-config --variable=sentencepiece_shim` and `--variable=torch_plugin` tell static consumers
  # where they are.
  set(MCPCLASS_PC_TORCH_LIBS "")
  set(MCPCLASS_PC_SHIM_VARIABLE "# built without the learned classifiers: no run-time modules")
  if(MCPCLASS_WITH_LEARNED)
    set(MCPCLASS_PC_TORCH_LIBS " -ldnnl -lgomp -ldl")  # the native encoder: oneDNN on OpenMP
    set(MCPCLASS_PC_SHIM_VARIABLE "sentencepiece_shim=\${libdir}/mcpclass/libmcpclass_spm.so\ntorch_plugin=\${libdir}/mcpclass/libmcpclass_torch.so")
  endif()
  foreach(_pc mcpclass mcpclass-static)
    configure_file("${CMAKE_CURRENT_LIST_DIR}/${_pc}.pc.in"
                   "${PROJECT_BINARY_DIR}/install-pkgconfig/${_pc}.pc" @ONLY)
    install(FILES "${PROJECT_BINARY_DIR}/install-pkgconfig/${_pc}.pc"
            DESTINATION "${_mcpclass_pcdir}")
  endforeach()
endif()

install(EXPORT mcpclassTargets NAMESPACE mcpclass:: DESTINATION "${MCPCLASS_INSTALL_CMAKEDIR}")

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/mcpclassConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/mcpclassConfig.cmake"
  INSTALL_DESTINATION "${MCPCLASS_INSTALL_CMAKEDIR}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/mcpclassConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/mcpclassConfig.cmake"
              "${PROJECT_BINARY_DIR}/mcpclassConfigVersion.cmake"
        DESTINATION "${MCPCLASS_INSTALL_CMAKEDIR}")
