#!/usr/bin/python3
"""Checks the project's markdown files as a reader's renderer sees them.

Usage: markdown_check.py SOURCE_DIR   (checks every *.md that git tracks)
       markdown_check.py --self-test  (shows that each check can fail)

Two checks, both outside fenced code blocks:
  * a relative link (`[text](path)` or `[text](path#anchor)`) names a file
    or folder that exists;
  * a table's delimiter row (`|---|---:|`) has as many cells as the header
    row above it; otherwise the renderer shows no table at all, only pipes.

Exit status 0 when every file passes, 1 with one line per defect
(`file:line: what`), 2 on a usage error.

docs/reliability/notes.md is not link-checked: it is written to be pasted
into docs/RELIABILITY.md (leasehold-torture report --notes), so its links
are relative to docs/, and RELIABILITY.md itself is checked.
"""
import os
import re
import subprocess
import sys

LINK_RELATIVE_TO_ANOTHER_FILE = {"docs/reliability/notes.md"}
LINK = re.compile(r"\]\(([^)\s]+)\)")
DELIMITER = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def row_cells(row):
    """The cell count of one table row: pipes inside code or escaped do not split."""
    row = row.strip().replace("\\|", "")
    row = re.sub(r"`[^`]*`", "x", row)
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|"):
        row = row[:-1]
    return row.count("|") + 1


def check_text(path, text, exists, check_links=True):
    """The defects of one file's text; `exists(relative_path)` tells if a link target is there."""
    defects = []
    lines = text.split("\n")
    in_fence = False
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        stripped = line.strip()
        if number > 1 and "|" in stripped and DELIMITER.match(stripped):
            header = lines[number - 2]
            if row_cells(header) != row_cells(stripped):
                defects.append(f"{path}:{number}: table delimiter row has {row_cells(stripped)} cells, "
                               f"its header {row_cells(header)}")
        if not check_links:
            continue
        unquoted = re.sub(r"`[^`]*`", "", line)
        for match in LINK.finditer(unquoted):
            target = match.group(1)
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL or an anchor in the same file
            file_part = target.split("#", 1)[0]
            relative = os.path.normpath(os.path.join(os.path.dirname(path), file_part))
            if not exists(relative):
                defects.append(f"{path}:{number}: link to {target}: no such file")
    return defects


def self_test():
    """Each check must find its defect and pass the good form."""
    present = {"docs/a.md", "docs"}.__contains__
    cases = [
        ("| a | b |\n|---|---|\n| 1 | 2 |\n", 0),
        ("| a | b | c |\n|---|---:|\n", 1),
        ("| a `x|y` | b |\n|---|---|\n", 0),
        ("see [a](a.md#top) and [web](https://example.org)\n", 0),
        ("see [b](b.md)\n", 1),
        ("```\n| a | b |\n|---|\n[c](c.md)\n```\n", 0),
    ]
    failures = 0
    for text, want in cases:
        got = check_text("docs/x.md", text, present)
        if len(got) != want:
            print(f"self-test: {text!r}: want {want} defects, got {got}")
            failures += 1
    print("self-test: ok" if failures == 0 else f"self-test: {failures} failed")
    return 0 if failures == 0 else 1


def tracked_markdown(root):
    """The *.md files git tracks under root; outside a git checkout (a source
    tarball), every *.md except in build trees and node_modules."""
    listed = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True)
    if listed.returncode == 0:
        return listed.stdout.split()
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".")) and d != "node_modules"]
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names if n.endswith(".md")]
    return sorted(found)


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    if argv[1] == "--self-test":
        return self_test()
    root = argv[1]
    files = tracked_markdown(root)
    if not files:
        print(f"no markdown files tracked under {root}", file=sys.stderr)
        return 2
    defects = []
    for path in files:
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        defects += check_text(path, text, lambda p: os.path.exists(os.path.join(root, p)),
                              check_links=path not in LINK_RELATIVE_TO_ANOTHER_FILE)
    for d in defects:
        print(d)
    print(f"{len(files)} markdown files, {len(defects)} defects")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
