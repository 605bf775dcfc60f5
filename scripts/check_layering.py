#!/usr/bin/env python3
"""Checks that the #includes between src/ areas match the DEPS each area declares.

Every folder src/<area>/ is one library declared by
    sextant_area(<area> DEPS a b ... TEST_DEPS c ... LIBS ... TEST_LIBS ...)
in src/<area>/CMakeLists.txt. A file of <area> may include "<other>/..." only when <other> is
<area> itself or listed in DEPS; test, benchmark and fuzz files may also include TEST_DEPS.
Every declared DEP must be included by some non-test file (else the dependency is stale; a
dependency used only by tests belongs in TEST_DEPS), and the DEPS graph must be acyclic.

Exit status 0 when the tree is clean, 1 with one line per problem otherwise.
--markdown prints the dependency list, bottom layer first, and --diagram the same edges as a
matrix, top layer first; docs/ARCHITECTURE.md holds both (tests/layering checks they match).
"""

import argparse
import os
import re
import sys

AREA_CALL = re.compile(r"sextant_area\s*\(([^)]*)\)", re.S)
INCLUDE = re.compile(r'^\s*#\s*include\s*"([A-Za-z0-9_]+)/[^"]*"', re.M)
KEYWORDS = ("DEPS", "TEST_DEPS", "LIBS", "TEST_LIBS", "PCH")
TEST_SUFFIXES = ("_test.cc", "_perftest.cc", "_fuzz.cc")


class Area:
    def __init__(self, name, cmake, deps, test_deps):
        self.name = name
        self.cmake = cmake
        self.deps = deps
        self.test_deps = test_deps


def parse_area(root, cmake_path, folder):
    """Returns the Area declared in one CMakeLists.txt (path relative to root), or an error."""
    with open(os.path.join(root, cmake_path), encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())  # CMake comments
    match = AREA_CALL.search(text)
    if not match:
        return None, f"{cmake_path}:1: no sextant_area(...) call"
    words = match.group(1).split()
    lists = {k: [] for k in KEYWORDS}
    current = None
    for word in words[1:]:
        if word in KEYWORDS:
            current = word
        elif current is None:
            line = text[: match.start()].count("\n") + 1
            return None, f"{cmake_path}:{line}: unexpected argument '{word}' before DEPS"
        else:
            lists[current].append(word)
    if words[0] != folder:
        line = text[: match.start()].count("\n") + 1
        return None, f"{cmake_path}:{line}: declares area '{words[0]}' in folder src/{folder}"
    return Area(folder, cmake_path, lists["DEPS"], lists["TEST_DEPS"]), None


def load_areas(root):
    areas, problems = {}, []
    src = os.path.join(root, "src")
    for folder in sorted(os.listdir(src)):
        cmake = os.path.join("src", folder, "CMakeLists.txt")
        if not os.path.isfile(os.path.join(root, cmake)):
            continue
        area, problem = parse_area(root, cmake, folder)
        if problem:
            problems.append(problem)
        else:
            areas[folder] = area
    return areas, problems


def find_cycle(areas):
    """Returns one cycle of the DEPS graph as a list of areas (first == last), or None."""
    state = {}  # absent: unvisited, 1: on the current path, 2: done
    path = []

    def visit(name):
        state[name] = 1
        path.append(name)
        for dep in areas[name].deps:
            if dep not in areas:
                continue
            if state.get(dep) == 1:
                return path[path.index(dep) :] + [dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        path.pop()
        state[name] = 2
        return None

    for name in sorted(areas):
        if name not in state:
            cycle = visit(name)
            if cycle:
                return cycle
    return None


def layer_order(areas):
    """Areas bottom layer first: each after all its DEPS; ties by layer depth, then name."""
    depth = {}

    def level(name):
        if name not in depth:
            depth[name] = 0  # guards against cycles, which are reported separately
            deps = [d for d in areas[name].deps if d in areas]
            depth[name] = 1 + max((level(d) for d in deps), default=-1)
        return depth[name]

    return sorted(areas, key=lambda n: (level(n), n))


def diagram(areas):
    """Dependency matrix: row depends on column where marked; names read down the columns."""
    order = list(reversed(layer_order(areas)))
    width = max(map(len, order))
    lines = []
    for i in range(width):
        heads = "".join(f" {name.rjust(width)[i]} " for name in order)
        lines.append((" " * (width + 1) + heads).rstrip())
    for row in order:
        cells = "".join(
            " ■ " if col == row else (" x " if col in areas[row].deps else " · ") for col in order
        )
        lines.append((row.ljust(width + 1) + cells).rstrip())
    return lines


def check(root):
    src = os.path.join(root, "src")
    areas, problems = load_areas(root)
    for area in areas.values():
        for dep in area.deps + area.test_deps:
            if dep not in areas:
                problems.append(f"{area.cmake}: {area.name} declares unknown area '{dep}'")
    used = {name: set() for name in areas}
    for name, area in sorted(areas.items()):
        folder = os.path.join(src, name)
        for file in sorted(os.listdir(folder)):
            if not file.endswith((".h", ".cc")):
                continue
            path = os.path.join(folder, file)
            rel = os.path.relpath(path, root)
            is_test = file.endswith(TEST_SUFFIXES)
            allowed = set(area.deps) | (set(area.test_deps) if is_test else set())
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for match in INCLUDE.finditer(text):
                other = match.group(1)
                if other == name or other not in areas:
                    continue  # own headers, or a third-party "lib/x.h"
                if not is_test:
                    used[name].add(other)
                if other not in allowed:
                    line = text.count("\n", 0, match.start()) + 1
                    header = match.group(0).split('"')[1]
                    where = "DEPS or TEST_DEPS" if is_test else "DEPS"
                    problems.append(
                        f'{rel}:{line}: includes "{header}" but {name} does not declare '
                        f"{other} in {where}"
                    )
    for name, area in sorted(areas.items()):
        for dep in area.deps:
            if dep in areas and dep not in used[name]:
                problems.append(
                    f"{area.cmake}: {name} declares {dep} in DEPS "
                    f"but no non-test file of {name} includes a {dep}/ header"
                )
    cycle = find_cycle(areas)
    if cycle:
        problems.append("dependency cycle in DEPS: " + " -> ".join(cycle))
    return areas, problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.dirname(here), help="repository root")
    parser.add_argument("--markdown", action="store_true", help="print the dependency list")
    parser.add_argument("--diagram", action="store_true", help="print the dependency matrix")
    args = parser.parse_args()
    areas, problems = check(args.root)
    if args.diagram:
        print("\n".join(diagram(areas)))
        return 0
    if args.markdown:
        for name in layer_order(areas):
            deps = [d for d in layer_order(areas) if d in areas[name].deps]
            print(f"- `{name}` -> " + (", ".join(f"`{d}`" for d in deps) or "(none)"))
        return 0
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
