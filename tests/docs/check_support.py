"""What the docs checks (markdown_check.py, path_references_check.py) share.

run_self_test(cases, find) runs each (text, wanted defect count) case
through find(text), which returns the defects found, and prints what
differed; 0 when every case matched, else 1.

main(argv, doc, self_test, check_tree) is their command line: `SOURCE_DIR`
runs check_tree(SOURCE_DIR), `--self-test` runs self_test(); anything else
prints the usage paragraph of doc (the second) and returns 2. Each function
returns the exit status.

tracked_files(root) lists the files of the tree, relative to root: those
git tracks, or outside a git checkout (an unpacked source tarball) every
file except in build trees, hidden folders and node_modules.

report(defects, summary) prints each defect on its own line, then the
summary line; the exit status is 1 if there was any defect, else 0.
"""
import os
import subprocess


def tracked_files(root):
    listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if listed.returncode == 0:
        return listed.stdout.splitlines()
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".")) and d != "node_modules"]
        found += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return sorted(found)


def run_self_test(cases, find):
    failures = 0
    for text, want in cases:
        got = find(text)
        if len(got) != want:
            print(f"self-test: {text!r}: want {want} defects, got {got}")
            failures += 1
    print("self-test: ok" if failures == 0 else f"self-test: {failures} failed")
    return 0 if failures == 0 else 1


def main(argv, doc, self_test, check_tree):
    if len(argv) != 2:
        print(doc.strip().split("\n\n")[1])
        return 2
    if argv[1] == "--self-test":
        return self_test()
    return check_tree(argv[1])


def report(defects, summary):
    for line in defects:
        print(line)
    print(summary)
    return 1 if defects else 0
