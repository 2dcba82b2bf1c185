# vcpkg overlay port: vcpkg install mcpclass[learned] --overlay-ports=packaging/vcpkg
# Builds from the checkout this port lives in (set MCPCLASS_SOURCE_DIR to build another one).
# The project asks for Boost 1.81.0 EXACT: a port can only say "version>=", so a consumer pins
# the boost-* ports with "overrides" in its own manifest (see usage).
if(DEFINED ENV{MCPCLASS_SOURCE_DIR})
  set(SOURCE_PATH "$ENV{MCPCLASS_SOURCE_DIR}")
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
endif()

vcpkg_check_features(OUT_FEATURE_OPTIONS FEATURE_OPTIONS
  FEATURES
    learned MCPCLASS_WITH_LEARNED
    tests MCPCLASS_BUILD_TESTS
)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${FEATURE_OPTIONS}
    -DMCPCLASS_BUILD_EXAMPLES=OFF
    -DMCPCLASS_CCACHE=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME mcpclass CONFIG_PATH lib/cmake/mcpclass)
vcpkg_fixup_pkgconfig()
vcpkg_copy_tools(TOOL_NAMES mcpclass AUTO_CLEAN)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
