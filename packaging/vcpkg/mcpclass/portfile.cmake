# vcpkg overlay port: vcpkg install mcpclass --overlay-ports=packaging/vcpkg
# Builds from the checkout this port lives in (set MCPCLASS_SOURCE_DIR to build another one).
if(DEFINED ENV{MCPCLASS_SOURCE_DIR})
  set(SOURCE_PATH "$ENV{MCPCLASS_SOURCE_DIR}")
else()
  get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
endif()

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DMCPCLASS_BUILD_TESTS=OFF
    -DMCPCLASS_BUILD_EXAMPLES=OFF
    -DMCPCLASS_WITH_TORCH=OFF
)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME mcpclass CONFIG_PATH lib/cmake/mcpclass)
vcpkg_fixup_pkgconfig()
vcpkg_copy_tools(TOOL_NAMES mcpclass AUTO_CLEAN)

file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug/include" "${CURRENT_PACKAGES_DIR}/debug/share")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
