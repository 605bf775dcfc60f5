#!/usr/bin/env python3
"""Tests of scripts/check_layering.py on copies of the real src/ tree with one deliberate fault.

Each fault test first runs the check on the unmodified copy and asserts the expected problem line
is absent there, so a test passes only because of the fault it injects, whatever else the tree
holds at the time.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check_layering.py")


def run_check(root, *args):
    result = subprocess.run(
        [sys.executable, SCRIPT, "--root", root, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout.splitlines()


def append_line(path, line):
    """Appends one line to a file and returns its 1-based line number."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        text += "\n"
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + line + "\n")
    return text.count("\n") + 1


def set_deps(cmake_path, area, deps_words):
    """Rewrites the DEPS list of sextant_area(<area> DEPS ...) to deps_words."""
    with open(cmake_path, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(r"sextant_area\(" + area + r"((?:\s+DEPS)?)([^)]*?)(?=\s+(?:TEST_DEPS|PCH|LIBS|TEST_LIBS)\b|\))")
    new_text, count = pattern.subn("sextant_area(" + area + " DEPS " + deps_words, text, count=1)
    assert count == 1, cmake_path
    with open(cmake_path, "w", encoding="utf-8") as f:
        f.write(new_text)


def declared_deps(cmake_path):
    with open(cmake_path, encoding="utf-8") as f:
        words = re.search(r"sextant_area\(([^)]*)\)", f.read()).group(1).split()
    deps, current = [], None
    for word in words[1:]:
        if word in ("DEPS", "TEST_DEPS", "PCH", "LIBS", "TEST_LIBS"):
            current = word
        elif current == "DEPS":
            deps.append(word)
    return deps


class CopiedTree(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="sextant-layering-")
        shutil.copytree(os.path.join(ROOT, "src"), os.path.join(self.tmp, "src"))
        shutil.copytree(os.path.join(ROOT, "cmake"), os.path.join(self.tmp, "cmake"))
        shutil.copy(os.path.join(ROOT, "CMakeLists.txt"), self.tmp)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def path(self, rel):
        return os.path.join(self.tmp, rel)

    def assert_fault_reported(self, mutate):
        """Runs the check, applies mutate() (which returns the line it must cause), reruns."""
        _, before = run_check(self.tmp)
        expected = mutate()
        self.assertNotIn(expected, before, "the unmodified copy already reports it")
        rc, after = run_check(self.tmp)
        self.assertEqual(rc, 1)
        self.assertIn(expected, after)

    def include_fault(self, rel, header, area, other, where="DEPS"):
        line = append_line(self.path(rel), f'#include "{header}"')
        return f'{rel}:{line}: includes "{header}" but {area} does not declare {other} in {where}'

    def test_upward_include(self):
        # util is the bottom layer; projection sits near the top.
        self.assert_fault_reported(lambda: self.include_fault(
            "src/util/units.cc", "projection/performance_model.h", "util", "projection"))

    def test_undeclared_sideways_include(self):
        # hardware and model both sit directly on util; neither may use the other undeclared.
        self.assert_fault_reported(lambda: self.include_fault(
            "src/hardware/gpu_spec.cc", "model/model_spec.h", "hardware", "model"))

    def test_stale_dep(self):
        # config includes nothing of snapshot; declaring it is a dependency nobody uses.
        cmake = self.path("src/config/CMakeLists.txt")
        deps = " ".join(declared_deps(cmake) + ["snapshot"])

        def mutate():
            set_deps(cmake, "config", deps)
            return ("src/config/CMakeLists.txt: config declares snapshot in DEPS "
                    "but no non-test file of config includes a snapshot/ header")

        self.assert_fault_reported(mutate)

    def test_cycle_is_named(self):
        # Declaring the upward include makes it legal as an include but closes a cycle:
        # projection -> ... -> util -> projection.
        cmake = self.path("src/util/CMakeLists.txt")
        append_line(self.path("src/util/units.cc"), '#include "projection/performance_model.h"')
        set_deps(cmake, "util", "projection")
        rc, out = run_check(self.tmp)
        self.assertEqual(rc, 1)
        cycles = [l for l in out if l.startswith("dependency cycle in DEPS: ")]
        self.assertEqual(len(cycles), 1, out)
        chain = cycles[0][len("dependency cycle in DEPS: "):].split(" -> ")
        self.assertEqual(chain[0], chain[-1])
        self.assertIn("util", chain)
        self.assertIn("projection", chain)
        # Every step of the named cycle is a declared edge.
        for a, b in zip(chain, chain[1:]):
            self.assertIn(b, declared_deps(self.path(f"src/{a}/CMakeLists.txt")), (a, b))

    def test_test_files_may_use_test_deps_only(self):
        # A test file including an area neither in DEPS nor TEST_DEPS is reported ...
        self.assert_fault_reported(lambda: self.include_fault(
            "src/util/units_test.cc", "model/model_spec.h", "util", "model", "DEPS or TEST_DEPS"))
        # ... and accepted once TEST_DEPS names it, while the library file still may not.
        with open(self.path("src/util/CMakeLists.txt"), encoding="utf-8") as f:
            text = f.read()
        with open(self.path("src/util/CMakeLists.txt"), "w", encoding="utf-8") as f:
            f.write(text.replace("sextant_area(util ", "sextant_area(util TEST_DEPS model ", 1))
        _, out = run_check(self.tmp)
        self.assertFalse([l for l in out if l.startswith("src/util/units_test.cc:")], out)
        expected = self.include_fault("src/util/units.cc", "model/model_spec.h", "util", "model")
        _, out = run_check(self.tmp)
        self.assertIn(expected, out)


class RealTree(unittest.TestCase):
    def test_markdown_lists_every_area_after_its_deps(self):
        _, lines = run_check(ROOT, "--markdown")
        areas = sorted(d for d in os.listdir(os.path.join(ROOT, "src"))
                       if os.path.isfile(os.path.join(ROOT, "src", d, "CMakeLists.txt")))
        seen = []
        for line in lines:
            match = re.fullmatch(r"- `(\w+)` -> (.*)", line)
            self.assertTrue(match, line)
            name, rest = match.groups()
            deps = [] if rest == "(none)" else [d.strip("`") for d in rest.split(", ")]
            self.assertEqual(sorted(deps),
                             sorted(declared_deps(os.path.join(ROOT, "src", name, "CMakeLists.txt"))))
            for dep in deps:
                self.assertIn(dep, seen, f"{name} listed before its dependency {dep}")
            seen.append(name)
        self.assertEqual(sorted(seen), areas)

    def doc_section(self, marker):
        with open(os.path.join(ROOT, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
            doc = f.read()
        match = re.search(f"<!-- {marker}:begin -->\n(.*?)<!-- {marker}:end -->", doc, re.S)
        self.assertTrue(match, f"docs/ARCHITECTURE.md has no <!-- {marker}:begin/end --> section")
        return match.group(1).strip("\n").splitlines()

    def test_architecture_doc_matches_deps(self):
        _, lines = run_check(ROOT, "--markdown")
        self.assertEqual(
            self.doc_section("deps"),
            lines,
            "docs/ARCHITECTURE.md's Dependencies section differs from the DEPS lines; "
            "paste the output of scripts/check_layering.py --markdown between the markers",
        )

    def test_architecture_diagram_matches_deps(self):
        _, lines = run_check(ROOT, "--diagram")
        self.assertEqual(
            self.doc_section("diagram"),
            ["```"] + lines + ["```"],
            "docs/ARCHITECTURE.md's dependency matrix differs from the DEPS lines; "
            "paste the output of scripts/check_layering.py --diagram between the markers",
        )

    def test_diagram_marks_exactly_the_declared_edges(self):
        _, lines = run_check(ROOT, "--diagram")
        rows = [l for l in lines if re.match(r"\w+ +■", l) or re.match(r"\w+ +[x·]", l)]
        names = [r.split()[0] for r in rows]
        for row in rows:
            name, *cells = row.split()
            self.assertEqual(len(cells), len(names), row)
            marked = sorted(names[k] for k, c in enumerate(cells) if c == "x")
            self.assertEqual(marked, sorted(declared_deps(
                os.path.join(ROOT, "src", name, "CMakeLists.txt"))), row)
            self.assertEqual(cells[names.index(name)], "■", row)


if __name__ == "__main__":
    unittest.main()
