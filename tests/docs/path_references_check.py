#!/usr/bin/python3
"""Checks that the file paths the tree names still exist.

Usage: path_references_check.py SOURCE_DIR   (tracked_files() in check_support.py)
       path_references_check.py --self-test

A comment that says "see node/timers.h" or a doc that says
"`torture/run.cc`" goes stale when the file is renamed or split. This reads
every tracked source, script, CMake and markdown file and finds each
path-like word that starts with one of the tree's top-level folders and
ends in a known extension (.h .cc .md .sh .py .txt .json .jsonl .proto),
outside #include lines (the compiler checks those); each must exist.
A word with a placeholder (`<name>`, `*`) is a pattern, not a path, and is
skipped, as are this folder's own files (their self-tests name fake paths).

Exit status 0 when every path exists, 1 with one line per stale path
(`file:line: path`), 2 on a usage error.
"""
import os
import re
import sys

from check_support import main, report, run_self_test, tracked_files

READ_EXTENSIONS = (".h", ".cc", ".md", ".sh", ".py", ".txt", ".cmake", ".proto", ".in")
PATH_EXTENSIONS = r"(?:h|cc|md|sh|py|txt|json|jsonl|proto)"
SKIPPED_FOLDER = "tests/docs/"


def path_pattern(top_folders):
    tops = "|".join(re.escape(t) for t in sorted(top_folders))
    return re.compile(r"(?<![\w/.\-$<*])((?:%s)/[A-Za-z0-9_\-/.]+?\.%s)(?![\w<*])" % (tops, PATH_EXTENSIONS))


def stale_paths(path, text, pattern, exists):
    """The `file:line: path` lines for the paths in text that do not exist."""
    out = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.lstrip().startswith("#include"):
            continue
        for match in pattern.finditer(line):
            if not exists(match.group(1)):
                out.append(f"{path}:{number}: {match.group(1)}")
    return out


def self_test():
    pattern = path_pattern({"node", "docs"})
    present = {"node/timers.h", "docs/core.md"}.__contains__
    cases = [
        ("// see node/timers.h and docs/core.md.\n", 0),
        ("// see node/timer.h\n", 1),
        ('#include "node/gone.h"\n', 0),
        ("// each node/<name>.h, node/*.cc\n", 0),
        ("x = build/node/gone.h  # not a top folder\n", 0),
        ("`docs/gone.md`, (node/gone.cc)\n", 2),
    ]
    return run_self_test(cases, lambda text: stale_paths("t.cc", text, pattern, present))


def check_tree(root):
    files = tracked_files(root)
    tops = {f.split("/", 1)[0] for f in files if "/" in f and not f.startswith(".")}
    pattern = path_pattern(tops)
    stale = []
    read = 0
    for path in files:
        name = os.path.basename(path)
        if path.startswith(SKIPPED_FOLDER) or not (name.endswith(READ_EXTENSIONS) or name == "Makefile"):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        read += 1
        stale += stale_paths(path, text, pattern, lambda p: os.path.exists(os.path.join(root, p)))
    return report(stale, f"{read} files read, {len(stale)} stale paths")


if __name__ == "__main__":
    sys.exit(main(sys.argv, __doc__, self_test, check_tree))
