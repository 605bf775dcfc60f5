#!/usr/bin/env python3
"""Runs every shell example of README.md and docs/*.md and checks what it prints.

    python3 tests/docs/docs_examples_test.py --sextant BIN --corpus DIR [--only TEXT] [FILE.md ...]

The convention (docs/CONTRIBUTING.md, "Examples in docs"):

- Inside a fenced code block, a line starting with `$ ` is a command; a command line ending in
  `\\` continues on the next line.
- The lines after a command, up to the next `$ ` line or the end of the block, are its expected
  output excerpt. The excerpt must appear in the command's stdout+stderr as an in-order
  subsequence of lines, compared with trailing whitespace stripped (leading spaces count). A line
  that is `...` or `[...]` (alone on its line, indentation allowed) stands for any number of
  lines. Blank lines at the end of an excerpt are ignored.
- The command must exit 0, or 1 (a user error, SPEC section 1) when its excerpt shows a
  `sextant: error:` line.
- A block preceded by the HTML comment `<!-- docs-test: skip REASON -->` (blank lines between
  are allowed) is not run; it is reported as SKIP with its reason. Only for what cannot run
  here: an MPI launcher, a GPU, a network server, a benchmark binary.
- A code block without `$ ` lines is not run (a synopsis with placeholders, a file's text).
  Each of its lines that starts a `sextant` command is listed as UNCHECKED, and a document with
  UNCHECKED lines but no `$ ` command at all fails: its examples look runnable but nothing
  checks them.

How commands run: through `bash -c` (so `$PRIMUS`, pipes and `&&` work), with `sextant` the
program under test (its directory first on PATH), PRIMUS and PRIMUS_PATH set to <corpus>/primus,
CORPUS to the corpus, and SEXTANT_DATA_DIR to the repository (its bundled example and module
defaults). The commands of one block run in order in one fresh temporary directory that holds
symbolic links `examples` and `tests` to the repository's folders, so repository-relative paths
work and files the commands write land there. Each command has --timeout seconds (120).

Output normalisation: the absolute paths of the Primus checkout, the corpus and the repository
are written `$PRIMUS`, `$CORPUS` and `$REPO` in the output before comparing, and the temporary
directory `.`, so an excerpt does not depend on where they are on one machine.

Exit status: 1 if any example fails, 77 if the corpus is absent (nothing run), else 0.
"""

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SKIP_RETURN_CODE = 77  # tests/docs/CMakeLists.txt gives CTest the same number

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
SKIP_COMMENT = re.compile(r"^\s*<!--\s*docs-test:\s*skip\b\s*(.*?)\s*-->\s*$")
# A line that starts a sextant command: optional VAR=value assignments and an MPI launcher
# with its options, then `sextant` or a path ending in /sextant, then a space or the end.
SEXTANT_COMMAND = re.compile(
    r"^\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*"
    r"(?:(?:mpirun|mpiexec|srun)(?:\s+-{1,2}\S+(?:\s+\d+)?)*\s+)?"
    r"(?:\S*/)?sextant(?:\s|$)"
)
ELLIPSIS = ("...", "[...]")


class Example:
    """One `$ ` command of a block, with its expected excerpt."""

    def __init__(self, doc, line, command, expected, block):
        self.doc = doc
        self.line = line  # 1-based line of the `$ ` in the document
        self.command = command
        self.expected = expected
        self.block = block

    @property
    def where(self):
        return f"{self.doc}:{self.line}"

    def expected_status(self):
        return 1 if any(e.startswith("sextant: error:") for e in self.expected) else 0


class Block:
    def __init__(self, doc, line, skip_reason):
        self.doc = doc
        self.line = line
        self.skip_reason = skip_reason
        self.examples = []
        self.unchecked = []  # (line, text)


def parse_document(path, name):
    """The fenced code blocks of a markdown file, with their examples."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks = []
    i = 0
    last_text = None  # the last non-blank line outside a block
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            if lines[i].strip():
                last_text = lines[i]
            i += 1
            continue
        indent, fence = len(m.group(1)), m.group(2)
        skip = SKIP_COMMENT.match(last_text) if last_text is not None else None
        block = Block(name, i + 1, (skip.group(1) or "no reason given") if skip else None)
        body = []  # (line number, text without the fence's indentation)
        i += 1
        while i < len(lines):
            close = FENCE.match(lines[i])
            if close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence) \
                    and not close.group(3).strip():
                break
            text = lines[i]
            strip = min(indent, len(text) - len(text.lstrip(" ")))
            body.append((i + 1, text[strip:]))
            i += 1
        i += 1  # the closing fence
        last_text = None
        split_examples(block, body)
        blocks.append(block)
    return blocks


def split_examples(block, body):
    j = 0
    while j < len(body):
        number, text = body[j]
        if not text.startswith("$ "):
            j += 1
            continue
        command_lines = [text[2:]]
        while command_lines[-1].rstrip().endswith("\\") and j + 1 < len(body):
            j += 1
            command_lines.append(body[j][1])
        j += 1
        expected = []
        while j < len(body) and not body[j][1].startswith("$ "):
            expected.append(body[j][1].rstrip())
            j += 1
        while expected and not expected[-1]:
            expected.pop()
        block.examples.append(Example(block.doc, number, "\n".join(command_lines), expected, block))
    if not block.examples:
        block.unchecked = [(n, t.strip()) for n, t in body if SEXTANT_COMMAND.match(t)]


def match_excerpt(expected, actual):
    """None if expected is an in-order subsequence of actual, else a reason."""
    position = 0
    last_found = None
    for e in expected:
        if e.strip() in ELLIPSIS:
            continue
        while position < len(actual) and actual[position] != e:
            position += 1
        if position == len(actual):
            after = f" after output line {last_found + 1}" if last_found is not None else ""
            return f"expected line not found{after}: {e!r}"
        last_found = position
        position += 1
    return None


def truncate(lines, head=40, tail=20):
    if len(lines) <= head + tail + 1:
        return lines
    return lines[:head] + [f"[... {len(lines) - head - tail} lines ...]"] + lines[-tail:]


def run_command(command, cwd, env, timeout):
    """(exit status or None on timeout, output text)."""
    process = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = process.communicate(timeout=timeout)
        return process.returncode, out.decode("utf-8", errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
        return None, out.decode("utf-8", errors="replace")


def normalise(text, replacements):
    for path, name in replacements:
        text = text.replace(path, name)
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sextant", required=True, help="path of the sextant program")
    parser.add_argument("--corpus", default="", help="root of the shared corpus")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per command")
    parser.add_argument("--only", default="", help="run only examples whose file:line or "
                        "command contains this text")
    parser.add_argument("docs", nargs="*", help="markdown files (default README.md, docs/*.md)")
    args = parser.parse_args()

    root = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    # As in the other tests (src/util/corpus_path.h), the environment variable overrides.
    corpus = os.environ.get("SEXTANT_CORPUS_DIR") or args.corpus
    if not corpus or not os.path.isdir(corpus):
        print(f"SKIP: corpus not found at {corpus!r}; the docs' examples read it")
        return SKIP_RETURN_CODE
    corpus = os.path.realpath(corpus)
    primus = os.path.join(corpus, "primus")
    sextant = os.path.realpath(args.sextant)
    if not os.access(sextant, os.X_OK):
        print(f"FAIL: {args.sextant} is not an executable program")
        return 1

    docs = args.docs or ["README.md"] + sorted(
        os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))

    scratch = tempfile.mkdtemp(prefix="sextant-docs-")
    bindir = os.path.join(scratch, "bin")
    os.mkdir(bindir)
    os.symlink(sextant, os.path.join(bindir, "sextant"))
    env = dict(os.environ)
    env.update({
        "PATH": bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
        "PRIMUS": primus, "PRIMUS_PATH": primus, "CORPUS": corpus,
        "SEXTANT_DATA_DIR": root,
    })
    env.pop("SEXTANT_CORPUS_DIR", None)

    failures = 0
    totals = {"PASS": 0, "FAIL": 0, "SKIP": 0, "UNCHECKED": 0}
    summary = []
    try:
        for doc in docs:
            path = doc if os.path.isabs(doc) else os.path.join(root, doc)
            counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "UNCHECKED": 0}
            commands = 0
            for block_number, block in enumerate(parse_document(path, doc)):
                commands += len(block.examples)
                for number, text in block.unchecked:
                    print(f"{doc}:{number}: UNCHECKED (no `$ `): {text}")
                    counts["UNCHECKED"] += 1
                examples = [e for e in block.examples
                            if not args.only or args.only in e.where or args.only in e.command]
                if not examples:
                    continue
                if block.skip_reason is not None:
                    for e in examples:
                        print(f"{e.where}: SKIP ({block.skip_reason})")
                        counts["SKIP"] += 1
                    continue
                workdir = os.path.join(scratch, f"{os.path.basename(doc)}-{block_number}")
                os.mkdir(workdir)
                for folder in ("examples", "tests"):
                    os.symlink(os.path.join(root, folder), os.path.join(workdir, folder))
                replacements = sorted([(workdir + "/", "./"), (workdir, "."), (primus, "$PRIMUS"),
                                       (corpus, "$CORPUS"), (root, "$REPO")],
                                      key=lambda r: -len(r[0]))
                for e in examples:
                    status, output = run_command(e.command, workdir, env, args.timeout)
                    actual = [l.rstrip() for l in normalise(output, replacements).split("\n")]
                    if actual and not actual[-1]:
                        actual.pop()
                    want = e.expected_status()
                    if status is None:
                        reason = f"timed out after {args.timeout:g} s"
                    elif status != want:
                        reason = f"exit status {status}, expected {want}"
                    else:
                        reason = match_excerpt(e.expected, actual)
                    if reason is None:
                        print(f"{e.where}: PASS")
                        counts["PASS"] += 1
                        continue
                    counts["FAIL"] += 1
                    print(f"{e.where}: FAIL: {reason}")
                    print("  command:")
                    print("\n".join("    $ " + l if k == 0 else "      " + l
                                    for k, l in enumerate(e.command.split("\n"))))
                    print("  expected excerpt:")
                    print("\n".join("    | " + l for l in truncate(e.expected)) or "    (none)")
                    print(f"  actual output (exit status {status}):")
                    print("\n".join("    | " + l for l in truncate(actual)) or "    (none)")
            if commands == 0 and counts["UNCHECKED"]:
                print(f"{doc}: FAIL: {counts['UNCHECKED']} sextant command line(s) in code "
                      "blocks and no `$ ` example: write them as `$ ` examples with their output")
                counts["FAIL"] += 1
            failures += counts["FAIL"]
            for k in totals:
                totals[k] += counts[k]
            summary.append((doc, counts))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print("\nSummary (PASS / FAIL / SKIP / UNCHECKED):")
    for doc, c in summary:
        if any(c.values()):
            print(f"  {doc:34} {c['PASS']:3} {c['FAIL']:3} {c['SKIP']:3} {c['UNCHECKED']:3}")
    print(f"  {'total':34} {totals['PASS']:3} {totals['FAIL']:3} {totals['SKIP']:3} "
          f"{totals['UNCHECKED']:3}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
