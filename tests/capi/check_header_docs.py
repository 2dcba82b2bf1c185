"""check_header_docs.py HEADER: the C ABI header keeps the promises of its conventions.

Every exported function has a doc comment that states its thread-safety; every function that
hands out a library-owned buffer names the one call that releases it (constructors `*_new*` are
covered by the header's `mcpc_x_new` / `mcpc_x_free` convention); every `*_free` is NULL-safe;
the version macros agree with each other.
"""

import re
import sys

header = open(sys.argv[1], encoding="utf-8").read()
problems = []
decls = list(re.finditer(
    r"(?:(/\*\*(?:(?!\*/).)*\*/)\s*)?^MCPC_API\s+[^;]*?\b(mcpc_\w+)\(([^)]*)\)", header,
    re.S | re.M))
if len(decls) < 30:
    sys.exit(f"only {len(decls)} declarations found: parser broken?")

for m in decls:
    doc, name, params = m.group(1) or "", m.group(2), m.group(3)
    if not doc:
        problems.append(f"{name}: no doc comment")
        continue
    if "Thread-safety:" not in doc:
        problems.append(f"{name}: thread-safety not stated")
    if name.endswith("_free") and "NULL-safe" not in doc:
        problems.append(f"{name}: not documented NULL-safe")
    for kind in re.findall(r"\b(char|mcpc_\w+)\s*\*\*\s*\w+", params):
        if kind == "mcpc_error":
            continue
        releaser = "mcpc_string_free" if kind == "char" else f"{kind}_free"
        if kind != "char" and re.fullmatch(rf"{kind}_new\w*", name):
            continue  # the mcpc_x_new / mcpc_x_free convention
        if releaser not in doc:
            problems.append(f"{name}: hands out {kind} but does not name {releaser}")

v = {k: re.search(rf"#define MCPC_VERSION_{k} (\d+)", header).group(1)
     for k in ("MAJOR", "MINOR", "PATCH")}
string = re.search(r'#define MCPC_VERSION_STRING "([^"]+)"', header).group(1)
if string != f"{v['MAJOR']}.{v['MINOR']}.{v['PATCH']}":
    problems.append(f"MCPC_VERSION_STRING {string} disagrees with the MAJOR/MINOR/PATCH macros")
for macro in ("MCPC_ABI_VERSION", "MCPC_VERSION_NUMBER"):
    if f"#define {macro}" not in header:
        problems.append(f"{macro} is not defined")
for fn in ("mcpc_version", "mcpc_abi_version"):
    if not any(m.group(2) == fn for m in decls):
        problems.append(f"{fn} is not declared")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"{len(decls)} functions: thread-safety stated, buffers' release named, versions agree")
