#!/usr/bin/python3
"""The fresh-machine guard: would a new Debian machine have every file this build used?

usage: check-deb-closure.py [--without PKG]... BUILD_DIR [BUILD_DIR...]

The build's system inputs are the CMake package files that configure read, every header the
compiler included (`ninja -t deps`) and every library on a link line (`ninja -t commands`). Each
must belong to a Debian package that a fresh machine gets from scripts/debian-packages.txt:
a declared package, one in the Depends/Pre-Depends closure of the declared ones (Recommends do
not count: install-deps.sh installs without them), or one every Debian system has (priority
required or important, with their own closure). Anything else was installed here by chance.

Exit 0 when every owner is covered; 1 listing each uncovered package with one file it owns; 2 on
bad usage. `--without PKG` drops a declared package first (to show that the guard notices).
Needs only python3's standard library, dpkg, apt-cache and ninja.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MULTIARCH_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib", "/lib")


def output(*cmd):
    return subprocess.run(cmd, check=False, capture_output=True, text=True).stdout


def declared_packages():
    """scripts/debian-packages.txt as install-deps.sh reads it (scripts/debian-packages.sh)."""
    return output(os.path.join(HERE, "debian-packages.sh")).split()


def configure_inputs(build):
    """build.ninja names the files configure read as inputs of its own regeneration rule."""
    with open(os.path.join(build, "build.ninja"), encoding="utf-8", errors="replace") as f:
        text = f.read().replace("$\n", " ")
    files = set()
    for line in text.splitlines():
        if line.startswith("build build.ninja") and "RERUN_CMAKE" in line:
            files.update(t for t in line.split() if t.startswith("/"))
    return files


def included_headers(build):
    lines = output("ninja", "-C", build, "-t", "deps").splitlines()
    return {l.strip() for l in lines if l.startswith("    /")}


def linked_libraries(build):
    commands = output("ninja", "-C", build, "-t", "commands")
    files = set(re.findall(r"(/usr/[^\s'\";]+\.(?:a|so(?:\.[0-9]+)*))(?=[\s'\";]|$)", commands))
    for name in set(re.findall(r"(?:^|\s)-l([\w+.-]+)", commands)):
        for d in MULTIARCH_DIRS:
            found = [os.path.join(d, f"lib{name}{ext}") for ext in (".so", ".a")]
            found = [p for p in found if os.path.exists(p)]
            if found:
                files.add(found[0])
                break
    return files


def owners(paths):
    """Each /usr path -> the packages owning it, as written or resolved (a -dev symlink and the
    library it points to may belong to two packages, and both are needed)."""
    forms_of = {}
    for p in paths:
        if not p.startswith("/usr/") or p.startswith("/usr/local/"):
            continue
        forms = {p, os.path.realpath(p)}
        # merged /usr: dpkg may know the file under /lib or /bin
        forms |= {f[4:] for f in forms if re.match(r"/usr/(lib|bin|sbin)/", f)}
        forms_of[p] = forms
    every = sorted(set().union(*forms_of.values())) if forms_of else []
    owner = {}
    for i in range(0, len(every), 400):
        for line in output("dpkg-query", "-S", *every[i:i + 400]).splitlines():
            pkgs, sep, path = line.partition(": ")
            if sep and not pkgs.startswith("diversion"):
                owner[path] = [p.strip().split(":")[0] for p in pkgs.split(",")]
    return {p: sorted({o for f in forms for o in owner.get(f, [])}) for p, forms in forms_of.items()}


def depends_closure(packages):
    if not packages:
        return set()
    text = output("apt-cache", "depends", "--recurse", "--important", "--no-recommends",
                  "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces",
                  "--no-enhances", *packages)
    names = set(packages)
    for line in text.splitlines():
        kind, sep, name = line.strip().partition(":")
        if not sep:  # a package heading, or a provider listed under a virtual package
            names.add(line.strip().strip("<>"))
        elif kind.lstrip("|") in ("Depends", "PreDepends"):
            names.add(name.strip().strip("<>"))
    return {n.split(":")[0] for n in names if n}


def base_system():
    rows = output("dpkg-query", "-W", "-f", "${Package} ${Priority} ${Essential}\n").splitlines()
    fields = [r.split() for r in rows]
    base = [f[0] for f in fields if len(f) >= 3 and (f[1] in ("required", "important") or f[2] == "yes")]
    return depends_closure(base)


def main(argv):
    without, builds = [], []
    args = iter(argv[1:])
    for a in args:
        if a == "--without":
            without.append(next(args, ""))
        elif a in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            builds.append(a)
    if not builds:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for b in builds:
        if not os.path.exists(os.path.join(b, "build.ninja")):
            print(f"check-deb-closure: {b} has no build.ninja (build it with Ninja first)", file=sys.stderr)
            return 2
    declared = [p for p in declared_packages() if p not in without]
    used = set()
    for b in builds:
        used |= configure_inputs(b) | included_headers(b) | linked_libraries(b)
    owned = owners(used)
    covered = depends_closure(declared) | base_system()
    uncovered = {}
    for path, pkgs in sorted(owned.items()):
        for pkg in pkgs:
            if pkg not in covered:
                uncovered.setdefault(pkg, path)
    print(f"check-deb-closure: {len(used)} system files used in {', '.join(builds)}; "
          f"{len({p for ps in owned.values() for p in ps})} packages own them; "
          f"{len(declared)} declared in scripts/debian-packages.txt cover {len(covered)} with "
          f"their Depends and the base system")
    if not uncovered:
        print("check-deb-closure: OK: a fresh Debian machine with the declared packages has every one")
        return 0
    print("check-deb-closure: FAILED: the build used files of packages a fresh machine lacks "
          "(neither declared in scripts/debian-packages.txt nor a Depends of a declared one):")
    for pkg, path in sorted(uncovered.items()):
        print(f"  {pkg:30} e.g. {path}")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
