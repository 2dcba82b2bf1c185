#!/usr/bin/env python3
"""Fails when a doctest TEST_CASE name holds a ';': doctest_discover_tests splits its listing
there, so the case would be registered as ctests that match nothing and pass without running.
usage: check_test_names.py TESTS_DIR"""
import pathlib
import re
import sys

bad = []
for path in sorted(pathlib.Path(sys.argv[1]).rglob("*.cpp")):
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        for name in re.findall(r'TEST_CASE\("((?:[^"\\]|\\.)*)"', line):
            if ";" in name:
                bad.append(f"{path}:{number}: {name}")
if bad:
    print("test case names with ';' (ctest would never run them):\n" + "\n".join(bad))
    sys.exit(1)
print("every test case name registers with ctest")
