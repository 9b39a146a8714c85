#!/usr/bin/python3
"""Checks the project's markdown files as a reader's renderer sees them.

Usage: markdown_check.py SOURCE_DIR   (every *.md: tracked_files() in check_support.py)
       markdown_check.py --self-test  (shows that each check can fail)

Three checks, all outside fenced code blocks:
  * a relative link (`[text](path)` or `[text](path#anchor)`) names a file
    or folder that exists;
  * its #anchor (or a bare `(#anchor)` into the same file) names a heading
    of that markdown file, by GitHub's rule: lower case, punctuation other
    than `-` and `_` dropped, each space a `-`, and `-1`, `-2`... for
    repeated headings;
  * a table's delimiter row (`|---|---:|`) has as many cells as the header
    row above it; otherwise the renderer shows no table at all, only pipes.

Exit status 0 when every file passes, 1 with one line per defect
(`file:line: what`), 2 on a usage error.

"""
import os
import re
import sys

from check_support import main, report, run_self_test, tracked_files

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


def heading_anchor(heading):
    """GitHub's anchor for one heading's text (before de-duplication)."""
    text = re.sub(r"<[^>]*>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(text):
    """Every heading anchor of a markdown text, repeats numbered as GitHub does."""
    seen = {}
    anchors = set()
    in_fence = False
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        match = None if in_fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = heading_anchor(match.group(1))
        n = seen.get(base, 0)
        seen[base] = n + 1
        anchors.add(base if n == 0 else f"{base}-{n}")
    return anchors


def check_text(path, text, exists, check_links=True, anchors=None):
    """The defects of one file's text; `exists(relative_path)` tells if a link
    target is there, `anchors(relative_path)` gives a markdown file's anchors."""
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
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # a URL
            file_part, _, anchor = target.partition("#")
            relative = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not exists(relative):
                defects.append(f"{path}:{number}: link to {target}: no such file")
            elif anchor and anchors is not None and relative.endswith(".md") and anchor not in anchors(relative):
                defects.append(f"{path}:{number}: link to {target}: no heading with that anchor in {relative}")
    return defects


def self_test():
    """Each check must find its defect and pass the good form."""
    present = {"docs/a.md", "docs", "docs/x.md"}.__contains__
    files = {"docs/a.md": "# Top\n## The revision record (`log/x.h`)\n## Notes\n## Notes\n",
             "docs/x.md": "## Here\n"}
    cases = [
        ("| a | b |\n|---|---|\n| 1 | 2 |\n", 0),
        ("| a | b | c |\n|---|---:|\n", 1),
        ("| a `x|y` | b |\n|---|---|\n", 0),
        ("see [a](a.md#top) and [web](https://example.org)\n", 0),
        ("see [b](b.md)\n", 1),
        ("```\n| a | b |\n|---|\n[c](c.md)\n```\n", 0),
        ("[r](a.md#the-revision-record-logxh) [n](a.md#notes-1) [h](#here)\n", 0),
        ("[r](a.md#the-revision-record)\n", 1),
        ("[n](a.md#notes-2) [h](#there)\n", 2),
    ]
    return run_self_test(cases, lambda text: check_text("docs/x.md", text, present,
                                                        anchors=lambda p: anchors_of(files[p])))


def check_tree(root):
    files = [f for f in tracked_files(root) if f.endswith(".md")]
    if not files:
        print(f"no markdown files tracked under {root}", file=sys.stderr)
        return 2
    texts = {}

    def text_of(path):
        if path not in texts:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                texts[path] = f.read()
        return texts[path]

    defects = []
    for path in files:
        defects += check_text(path, text_of(path), lambda p: os.path.exists(os.path.join(root, p)),
                              anchors=lambda p: anchors_of(text_of(p)))
    return report(defects, f"{len(files)} markdown files, {len(defects)} defects")


if __name__ == "__main__":
    sys.exit(main(sys.argv, __doc__, self_test, check_tree))
