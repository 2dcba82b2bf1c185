#!/usr/bin/python3
"""The vcpkg port and the Conan recipe ask for exactly what CMake requires.

usage: check_recipes.py SOURCE_DIR

Neither vcpkg nor Conan can fetch anything here, so the recipes are checked against the build
instead of built. The packages CMake needs are read from the project's own CMake files (every
find_package, pkg_check_modules, find_path and find_library), each marked required (REQUIRED,
outside any if) or optional. One table maps each to its vcpkg ports, its Conan reference and, for
an optional one, the recipe feature/option that carries it and the CMake switch that turns it on.
Then:
  - a CMake package the table does not know fails, naming the file;
  - required packages are the port's default dependencies and unconditional Conan requires,
    optional ones exactly the dependencies of their vcpkg feature and the requires under their
    Conan option, and nothing else is in either recipe;
  - each feature/option sets its CMake switch (portfile's vcpkg_check_features, conanfile's
    generate()), and the switch is an option() of the project;
  - Boost is pinned to the version CMake asks for EXACT (Conan exactly; vcpkg ports as version>=,
    since only a consumer's manifest can pin) and OpenSSL's major version matches;
  - both recipes, and bindings/python/pyproject.toml, carry the project's version.
Exit 0 when all hold, 1 listing every mismatch.
"""
import ast
import json
import os
import re
import sys

# CMake package (or the name a find_path/find_library looks for) ->
#   (vcpkg ports, Conan reference name, feature); feature None = always needed.
# TOOLCHAIN marks what the compiler or the build tools provide, not a package.
TOOLCHAIN = "toolchain"
PACKAGES = {
    "Boost": (["boost-asio", "boost-beast", "boost-json", "boost-url"], "boost", None),
    "Threads": TOOLCHAIN,
    "OpenSSL": (["openssl"], "openssl", None),
    "fmt": (["fmt"], "fmt", None),
    "yaml-cpp": (["yaml-cpp"], "yaml-cpp", None),
    "CLI11": (["cli11"], "cli11", None),
    "valijson": (["valijson"], "valijson", None),
    "re2": (["re2"], "re2", None),
    "libpcre2-8": (["pcre2"], "pcre2", None),
    "libutf8proc": (["utf8proc"], "utf8proc", None),
    "hiredis": (["hiredis"], "hiredis", None),
    "doctest": (["doctest"], "doctest", "tests"),
    "Torch": (["libtorch"], "libtorch", "learned"),
    "sentencepiece": (["sentencepiece"], "sentencepiece", "learned"),
    "sentencepiece_train": (["sentencepiece"], "sentencepiece", "learned"),
    "hnswlib/hnswlib.h": (["hnswlib"], "hnswlib", "learned"),
    "dnnl": (["onednn"], "onednn", "learned"),
    "OpenMP": TOOLCHAIN,
}
# pkg_check_modules needs a pkg-config: a host tool in both recipes.
PKG_CONFIG_TOOL = ("pkgconf", "pkgconf")
# recipe feature -> the CMake option it switches; Conan's option is with_<feature>.
FEATURE_OPTIONS = {"learned": "MCPCLASS_WITH_LEARNED", "tests": "MCPCLASS_BUILD_TESTS"}
VCPKG_HELPERS = {"vcpkg-cmake", "vcpkg-cmake-config"}

CALL = re.compile(r"^\s*(find_package|pkg_check_modules|find_path|find_library|if|elseif|else|endif)"
                  r"\s*\(([^)]*)\)", re.M | re.I)
KEYWORDS = {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH", "CONFIG", "EXACT"}


def cmake_files(src):
    for d in ("", "cmake", "src", "capi"):
        base = os.path.join(src, d)
        for root, dirs, files in os.walk(base):
            if d == "":
                dirs[:] = []
            for f in files:
                if f == "CMakeLists.txt" or f.endswith(".cmake"):
                    yield os.path.join(root, f)


def cmake_requirements(src):
    """{name: (required, enclosing if-conditions, file, args)} from the project's CMake files."""
    found = {}
    for path in cmake_files(src):
        text = re.sub(r"#[^\n]*", "", open(path, encoding="utf-8").read())
        stack = []
        for m in CALL.finditer(text):
            cmd, args = m.group(1).lower(), m.group(2).split()
            if cmd == "if":
                stack.append(" ".join(args))
                continue
            if cmd == "endif":
                stack.pop()
                continue
            if cmd in ("elseif", "else"):
                continue
            if cmd == "find_package":
                name = args[0]
            elif cmd == "pkg_check_modules":
                name = [a for a in args[1:] if a not in KEYWORDS][0]
            else:  # find_path / find_library VAR NAME
                name = args[1]
            required = "REQUIRED" in args and not stack
            rel = os.path.relpath(path, src)
            found[name] = (required, list(stack), rel, args)
    return found


def vcpkg_port(src):
    port = json.load(open(os.path.join(src, "packaging/vcpkg/mcpclass/vcpkg.json")))
    portfile = open(os.path.join(src, "packaging/vcpkg/mcpclass/portfile.cmake")).read()
    return port, portfile


def dep_name(d):
    return d if isinstance(d, str) else d["name"]


def conan_recipe(src):
    """requires by option condition, tool requires, options and the CMake variables generate() sets."""
    tree = ast.parse(open(os.path.join(src, "packaging/conan/conanfile.py")).read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    attrs = {t.id: n.value for n in cls.body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}

    def calls(node, method, cond=None, out=None):
        out = [] if out is None else out
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If):
                c = ast.unparse(child.test)
                for stmt in child.body:
                    calls(ast.Module(body=[stmt], type_ignores=[]), method, c, out)
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr == method and child.args
                    and isinstance(child.args[0], ast.Constant)):
                out.append((child.args[0].value, cond))
            calls(child, method, cond, out)
        return out

    requires = calls(methods["requirements"], "requires")
    tools = calls(methods["build_requirements"], "tool_requires") if "build_requirements" in methods else []
    variables = {}
    for n in ast.walk(methods["generate"]):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript):
            key = n.targets[0].slice
            if isinstance(key, ast.Constant):
                variables[key.value] = ast.unparse(n.value)
    options = ast.literal_eval(attrs["options"]) if "options" in attrs else {}
    version = attrs["version"].value if "version" in attrs else None
    return requires, tools, variables, options, version


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    src = argv[1]
    problems = []
    need = cmake_requirements(src)
    project_version = re.search(r"project\(\s*mcpclass\s+VERSION\s+([0-9.]+)",
                                open(os.path.join(src, "CMakeLists.txt")).read()).group(1)
    cmake_options = set(re.findall(r"^\s*option\(\s*(\w+)", "\n".join(
        open(p).read() for p in cmake_files(src)), re.M))

    want_default, want_feature, conan_always, conan_feature = set(), {}, set(), {}
    uses_pkg_config = False
    for name, (required, stack, path, args) in sorted(need.items()):
        if name == "PkgConfig":
            uses_pkg_config = True
            continue
        entry = PACKAGES.get(name)
        if entry is None:
            problems.append(f"{path} needs package {name}, which check_recipes.py does not map "
                            "to a vcpkg port and a Conan reference (add it to PACKAGES)")
            continue
        if entry == TOOLCHAIN:
            continue
        ports, conan, feature = entry
        if required and feature:
            problems.append(f"{path} requires {name} unconditionally, but the table puts it behind "
                            f"the '{feature}' feature")
        if not required and not feature:
            problems.append(f"{path} finds {name} as optional ({' '.join(args)}), but the table "
                            "makes it a dependency of every build")
        for cond in stack:
            switch = FEATURE_OPTIONS.get(feature or "")
            if switch and cond != switch:
                problems.append(f"{path} finds {name} under if({cond}), but its feature "
                                f"'{feature}' switches {switch}")
        if feature:
            want_feature.setdefault(feature, set()).update(ports)
            conan_feature.setdefault(feature, set()).add(conan)
        else:
            want_default.update(ports)
            conan_always.add(conan)

    # vcpkg
    port, portfile = vcpkg_port(src)
    version = next(port.get(k) for k in ("version", "version-semver", "version-string") if k in port)
    if version != project_version:
        problems.append(f"vcpkg.json version {version} != project version {project_version}")
    deps = port.get("dependencies", [])
    host = {dep_name(d) for d in deps if isinstance(d, dict) and d.get("host")}
    default = {dep_name(d) for d in deps if not (isinstance(d, dict) and d.get("host"))}
    if default != want_default:
        problems.append(f"vcpkg.json dependencies {sorted(default)} != what CMake always requires "
                        f"{sorted(want_default)} (missing {sorted(want_default - default)}, "
                        f"extra {sorted(default - want_default)})")
    want_host = VCPKG_HELPERS | ({PKG_CONFIG_TOOL[0]} if uses_pkg_config else set())
    if host != want_host:
        problems.append(f"vcpkg.json host dependencies {sorted(host)} != {sorted(want_host)}")
    features = port.get("features", {})
    for f in sorted(set(features) | set(want_feature)):
        have = {dep_name(d) for d in features.get(f, {}).get("dependencies", [])}
        if have != want_feature.get(f, set()):
            problems.append(f"vcpkg feature '{f}' depends on {sorted(have)}, CMake's optional "
                            f"'{f}' packages are {sorted(want_feature.get(f, set()))}")
        switch = FEATURE_OPTIONS.get(f)
        if not switch or not re.search(rf"^\s*{re.escape(f)}\s+{switch}\s*$", portfile, re.M):
            problems.append(f"portfile.cmake does not map feature '{f}' to its CMake option "
                            f"{switch} in vcpkg_check_features")
    # Boost: the version CMake asks for, EXACT.
    boost_args = need.get("Boost", (None, None, None, []))[3]
    boost_version = next((a for a in boost_args if re.fullmatch(r"[0-9.]+", a)), None)
    if "EXACT" not in boost_args or not boost_version:
        problems.append("CMake no longer asks for an EXACT Boost version: update check_recipes.py")
    for d in deps:
        if dep_name(d).startswith("boost-") and (not isinstance(d, dict) or d.get("version>=") != boost_version):
            problems.append(f"vcpkg.json {dep_name(d)} is not \"version>=\": \"{boost_version}\"")
    usage = open(os.path.join(src, "packaging/vcpkg/mcpclass/usage")).read()
    for p in PACKAGES["Boost"][0]:
        if f'"name": "{p}", "version": "{boost_version}"' not in usage:
            problems.append(f"usage does not show the override pinning {p} to {boost_version}")

    # Conan
    requires, tools, variables, options, cversion = conan_recipe(src)
    if cversion != project_version:
        problems.append(f"conanfile.py version {cversion} != project version {project_version}")
    by_cond = {}
    for ref, cond in requires:
        by_cond.setdefault(cond, {})[ref.split("/")[0]] = ref
    always = set(by_cond.get(None, {}))
    if always != conan_always:
        problems.append(f"conanfile.py always requires {sorted(always)} != what CMake always "
                        f"requires {sorted(conan_always)} (missing {sorted(conan_always - always)}, "
                        f"extra {sorted(always - conan_always)})")
    boost_ref = by_cond.get(None, {}).get("boost")
    if boost_ref != f"boost/{boost_version}":
        problems.append(f"conanfile.py requires {boost_ref}, CMake asks for Boost {boost_version} EXACT")
    openssl_major = next((a for a in need.get("OpenSSL", (0, 0, 0, []))[3] if a.isdigit()), None)
    ossl = by_cond.get(None, {}).get("openssl", "")
    if openssl_major and f">={openssl_major} <{int(openssl_major) + 1}" not in ossl:
        problems.append(f"conanfile.py requires {ossl}, CMake asks for OpenSSL {openssl_major}")
    for cond in by_cond:
        if cond is not None and not re.fullmatch(r"self\.options\.with_\w+", cond):
            problems.append(f"conanfile.py requires packages under `if {cond}`: use one option each")
    for f in sorted(set(conan_feature) | {c.rsplit('with_', 1)[1] for c in by_cond if c}):
        have = set(by_cond.get(f"self.options.with_{f}", {}))
        if have != conan_feature.get(f, set()):
            problems.append(f"conanfile.py option with_{f} requires {sorted(have)}, CMake's optional "
                            f"'{f}' packages are {sorted(conan_feature.get(f, set()))}")
        if f"with_{f}" not in options:
            problems.append(f"conanfile.py has no option with_{f}")
        switch = FEATURE_OPTIONS.get(f)
        if variables.get(switch) != f"bool(self.options.with_{f})":
            problems.append(f"conanfile.py generate() does not set {switch} from with_{f}")
    extra_options = set(options) - {f"with_{f}" for f in FEATURE_OPTIONS}
    if extra_options:
        problems.append(f"conanfile.py options {sorted(extra_options)} switch nothing in CMake")
    tool_names = {ref.split("/")[0] for ref, _ in tools}
    if uses_pkg_config and PKG_CONFIG_TOOL[1] not in tool_names:
        problems.append("CMake uses pkg_check_modules, but conanfile.py has no tool_requires pkgconf")
    for switch in FEATURE_OPTIONS.values():
        if switch not in cmake_options:
            problems.append(f"{switch} is not an option() of the project any more")

    # The Python package carries the same version.
    pyproject = open(os.path.join(src, "bindings/python/pyproject.toml")).read()
    pyversion = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.M)
    if not pyversion or pyversion.group(1) != project_version:
        problems.append(f"bindings/python/pyproject.toml version "
                        f"{pyversion and pyversion.group(1)} != project version {project_version}")

    mapped = sorted(n for n in need if n != "PkgConfig")
    print(f"check_recipes: CMake needs {len(mapped)} packages ({', '.join(mapped)}); "
          f"vcpkg: {len(want_default)} default ports, features {sorted(want_feature)}; "
          f"conan: {len(conan_always)} requires, options {sorted('with_' + f for f in conan_feature)}")
    if problems:
        print("check_recipes: FAILED:")
        for p in problems:
            print(f"  - {p}")
        return 1
    print("check_recipes: OK: both recipes match CMake")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
