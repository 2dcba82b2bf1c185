"""Conan 2 recipe for mcpclass: `conan create packaging/conan --build=missing`.

Builds from the checkout this recipe lives in (exports_sources reaches two levels up) with the
project's own CMake install rules; the package exposes the CMake config (mcpclass::mcpclass,
mcpclass::capi) through CMakeDeps and the pkg-config files through PkgConfigDeps.
"""

import os

from conan import ConanFile
from conan.tools.cmake import CMake, CMakeDeps, CMakeToolchain, cmake_layout
from conan.tools.gnu import PkgConfigDeps
from conan.tools.files import copy, rmdir


class McpclassConan(ConanFile):
    name = "mcpclass"
    version = "0.1.0"
    license = "Apache-2.0"
    url = "https://github.com/mcpclass/mcpclass"
    description = ("Embeddable C++20 library that classifies LLM queries and speaks the Model "
                   "Context Protocol, with a C ABI for Go, Python and other hosts")
    topics = ("llm", "mcp", "classification", "router")
    settings = "os", "arch", "compiler", "build_type"
    # Each option is one CMake switch (see generate()) and the packages it needs (requirements()).
    options = {"with_learned": [True, False], "with_tests": [True, False]}
    default_options = {"with_learned": False, "with_tests": False}
    package_type = "static-library"  # plus the C ABI shared library libmcpclass

    def export_sources(self):
        root = os.path.join(self.recipe_folder, "..", "..")
        for pattern in ("CMakeLists.txt", "LICENSE", "cmake/*", "include/*", "src/*",
                        "capi/*", "tests/*", "examples/*"):
            copy(self, pattern, root, self.export_sources_folder)

    def layout(self):
        cmake_layout(self)

    def requirements(self):
        self.requires("boost/1.81.0")  # CMake: find_package(Boost 1.81.0 EXACT ...)
        self.requires("openssl/[>=3 <4]")
        self.requires("cli11/2.3.2")
        self.requires("fmt/9.1.0")
        self.requires("yaml-cpp/0.7.0")
        self.requires("re2/20230301")
        self.requires("pcre2/10.42")  # tokenizer.json regexes (src/tokenizers/hf)
        self.requires("utf8proc/2.8.0")  # tokenizer.json normalizers
        self.requires("hiredis/1.2.0")  # route's semantic cache shared through Redis
        self.requires("valijson/1.0")
        if self.options.with_learned:
            self.requires("onednn/3.1")
            self.requires("hnswlib/0.7.0")
            self.requires("sentencepiece/0.1.98")
            self.requires("libtorch/2.4.0")
        if self.options.with_tests:
            self.requires("doctest/2.4.9")

    def build_requirements(self):
        self.tool_requires("pkgconf/2.0.3")  # CMake: pkg_check_modules (re2, pcre2, utf8proc, hiredis, sentencepiece)

    def validate(self):
        from conan.tools.build import check_min_cppstd
        check_min_cppstd(self, 20)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.variables["MCPCLASS_BUILD_TESTS"] = bool(self.options.with_tests)
        tc.variables["MCPCLASS_WITH_LEARNED"] = bool(self.options.with_learned)
        tc.variables["MCPCLASS_BUILD_EXAMPLES"] = False
        tc.variables["MCPCLASS_CCACHE"] = False
        tc.generate()
        CMakeDeps(self).generate()
        PkgConfigDeps(self).generate()  # pkg_check_modules: re2, pcre2, utf8proc, hiredis, sentencepiece

    def build(self):
        cmake = CMake(self)
        cmake.configure()
        cmake.build()

    def package(self):
        CMake(self).install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        # Consumers use Conan's generated files rather than the installed ones.
        rmdir(self, os.path.join(self.package_folder, "lib", "pkgconfig"))
        rmdir(self, os.path.join(self.package_folder, "lib", "cmake"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "mcpclass")

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "mcpclass::mcpclass")
        core.libs = ["mcpclass_core"]  # libmcpclass_core.a, the C++ library
        core.requires = ["boost::json", "boost::url", "openssl::ssl", "openssl::crypto", "fmt::fmt",
                         "yaml-cpp::yaml-cpp", "re2::re2", "valijson::valijson",
                         "hiredis::hiredis"]
        if self.options.with_learned:
            core.requires += ["onednn::onednn"]
        core.system_libs = ["pthread", "m"]

        capi = self.cpp_info.components["capi"]
        capi.set_property("cmake_target_name", "mcpclass::capi")
        capi.set_property("pkg_config_name", "mcpclass")
        capi.libs = ["mcpclass"]  # libmcpclass.so, the shared C ABI

        capi_static = self.cpp_info.components["capi_static"]
        capi_static.set_property("cmake_target_name", "mcpclass::capi_static")
        capi_static.libs = ["mcpclass_capi"]  # libmcpclass_capi.a, the C ABI for static linking
        capi_static.requires = ["core"]
