#!/usr/bin/env python3
"""The fuzzing and stressed-run parts of the reliability aggregate.

docs/reliability/totals.json is the record kept in the repository (the
layout and the "torture" section: torture/totals_file.h). Runs are written
under build directories, never into tracked files; this folds them into the
aggregate and rewrites their section of docs/RELIABILITY.md:

  reliability_totals.py fuzz TOTALS PAGE LEDGER...
      folds fuzzing runs (lines of scripts/fuzz-ledger.sh record) into
      "fuzz": per target the runs, executions (net*: frames), seconds and
      failed runs, the executions since the last failed run, and the first
      and last run's commit and date; rewrites the page's "fuzz" section.
  reliability_totals.py stress TOTALS PAGE LINE
      folds one stressed `make test` run (a JSON line of
      scripts/stress-test-run.sh) into "stress" and rewrites the page's
      "stress" section; prints the passes in a row.
  reliability_totals.py page TOTALS PAGE
      rewrites the "fuzz" and "stress" sections from the aggregate alone.

Errors: a malformed aggregate, ledger line or run line exits 2 with the file
and line and what is wrong, and writes nothing.
"""
import json
import os
import sys

FORMAT = 1


class Bad(Exception):
    pass


def dump(value, depth=0):
    """The aggregate's layout (torture/totals_file.cc's layout() is the same)."""
    if not isinstance(value, dict) or depth >= 3 or not value:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    pad = " " * (depth + 1)
    items = [pad + json.dumps(k, ensure_ascii=False) + ": " + dump(value[k], depth + 1) for k in sorted(value)]
    return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"


def whole(where, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Bad(f"{where}: not a whole number >= 0")
    return value


def text(where, value):
    if not isinstance(value, str):
        raise Bad(f"{where}: not a string")
    return value


def stamp(where, value):
    if not isinstance(value, dict):
        raise Bad(f"{where}: not an object")
    return {"commit": text(where + ".commit", value.get("commit")), "date": text(where + ".date", value.get("date"))}


def load(path):
    if not os.path.exists(path):
        return {"format": FORMAT}
    try:
        with open(path) as f:
            data = json.load(f)
    except ValueError as e:
        raise Bad(f"{path}: not JSON ({e})")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise Bad(f"{path}: format: missing or not {FORMAT} (a file this tool does not know)")
    try:
        if "fuzz" in data:
            check_fuzz(data["fuzz"])
        if "stress" in data:
            check_stress(data["stress"])
    except Bad as e:
        raise Bad(f"{path}: {e}")
    return data


def check_fuzz(f):
    if not isinstance(f, dict) or not isinstance(f.get("targets"), dict):
        raise Bad("fuzz.targets: missing or not an object")
    for name, t in f["targets"].items():
        if not isinstance(t, dict):
            raise Bad(f"fuzz.targets.{name}: not an object")
        for k in ("runs", "executions", "seconds", "failed"):
            whole(f"fuzz.targets.{name}.{k}", t.get(k))
    clean = f.get("clean_since_last_failure")
    if not isinstance(clean, dict):
        raise Bad("fuzz.clean_since_last_failure: missing or not an object")
    for k in ("libfuzzer", "net"):
        whole(f"fuzz.clean_since_last_failure.{k}", clean.get(k))
    stamp("fuzz.first", f.get("first"))
    stamp("fuzz.last", f.get("last"))


def check_stress(s):
    if not isinstance(s, dict):
        raise Bad("stress: not an object")
    for k in ("runs", "passed", "failed", "passes_in_a_row", "seconds"):
        whole(f"stress.{k}", s.get(k))
    if not isinstance(s.get("loads"), dict):
        raise Bad("stress.loads: missing or not an object")
    for name, n in s["loads"].items():
        whole(f"stress.loads.{name}", n)
    stamp("stress.first", s.get("first"))
    stamp("stress.last", s.get("last"))
    stamp("stress.last_failed", s.get("last_failed"))
    text("stress.last_failed_tests", s.get("last_failed_tests"))


def widen(section, commit, date):
    """Moves the section's first/last run stamps to cover a run of `date`."""
    if not section["first"]["date"] or date < section["first"]["date"]:
        section["first"] = {"commit": commit, "date": date}
    if not section["last"]["date"] or date >= section["last"]["date"]:
        section["last"] = {"commit": commit, "date": date}


def fold_fuzz(data, path, lines):
    f = data.setdefault("fuzz", {"targets": {}, "clean_since_last_failure": {"libfuzzer": 0, "net": 0},
                                 "first": {"commit": "", "date": ""}, "last": {"commit": "", "date": ""}})
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        where = f"{path}:{n}"
        try:
            r = json.loads(line)
        except ValueError:
            raise Bad(f"{where}: not JSON")
        if not isinstance(r, dict):
            raise Bad(f"{where}: not a JSON object")
        target = text(where + ": target", r.get("target"))
        result = text(where + ": result", r.get("result"))
        if result not in ("ok", "failed", "no-count"):
            raise Bad(f"{where}: result: not ok, failed or no-count")
        count = whole(where + ": count", r.get("count"))
        t = f["targets"].setdefault(target, {"runs": 0, "executions": 0, "seconds": 0, "failed": 0})
        t["runs"] += 1
        t["executions"] += count
        t["seconds"] += whole(where + ": seconds", r.get("seconds"))
        t["failed"] += result == "failed"
        kind = "net" if target.startswith("net") else "libfuzzer"
        clean = f["clean_since_last_failure"]
        clean[kind] = 0 if result == "failed" else clean[kind] + count
        widen(f, text(where + ": commit", r.get("commit")), text(where + ": date", r.get("date")))


def fold_stress(data, line):
    s = data.setdefault("stress", {"runs": 0, "passed": 0, "failed": 0, "passes_in_a_row": 0, "seconds": 0,
                                   "loads": {}, "first": {"commit": "", "date": ""},
                                   "last": {"commit": "", "date": ""}, "last_failed": {"commit": "", "date": ""},
                                   "last_failed_tests": ""})
    try:
        r = json.loads(line)
    except ValueError:
        raise Bad("the run line: not JSON")
    if not isinstance(r, dict):
        raise Bad("the run line: not a JSON object")
    result = text("result", r.get("result"))
    if result not in ("passed", "failed"):
        raise Bad("result: not passed or failed")
    commit, date = text("commit", r.get("commit")), text("date", r.get("date"))
    s["runs"] += 1
    s["seconds"] += whole("seconds", r.get("seconds"))
    load_name = text("load", r.get("load"))
    s["loads"][load_name] = s["loads"].get(load_name, 0) + 1
    if result == "passed":
        s["passed"] += 1
        s["passes_in_a_row"] += 1
    else:
        s["failed"] += 1
        s["passes_in_a_row"] = 0
        s["last_failed"] = {"commit": commit, "date": date}
        s["last_failed_tests"] = text("failed", r.get("failed", ""))
    widen(s, commit, date)


def span(section):
    first, last = section["first"], section["last"]
    return (f"Runs from {first['date'][:10]} (commit {first['commit']}) "
            f"to {last['date'][:10]} (commit {last['commit']}).")


def render_fuzz(data):
    f = data.get("fuzz")
    out = ["## Fuzzing volume", ""]
    if not f or not f["targets"]:
        return "\n".join(out + ["No fuzzing runs counted yet.", ""])
    out += [span(f), "", "Every long fuzzing run (`make fuzz`, and the fuzzing load of a stressed run; docs/fuzzing.md),",
            "added up per target.", "",
            "| target | runs | executions (net: frames) | seconds | failed runs |", "|---|---:|---:|---:|---:|"]
    total = [0, 0, 0, 0]
    for name in sorted(f["targets"], key=lambda k: (k.startswith("net"), k)):
        t = f["targets"][name]
        row = [t["runs"], t["executions"], t["seconds"], t["failed"]]
        out.append(f"| {name} | {row[0]} | {row[1]:,} | {row[2]:,} | {row[3]} |")
        if not name.startswith("net"):
            total = [a + b for a, b in zip(total, row)]
    out.append(f"| **libFuzzer total** | {total[0]} | {total[1]:,} | {total[2]:,} | {total[3]} |")
    clean = f["clean_since_last_failure"]
    out += ["", f"Since the last failed run: {clean['libfuzzer']:,} libFuzzer executions, "
                f"{clean['net']:,} network frames.", ""]
    return "\n".join(out)


def render_stress(data):
    s = data.get("stress")
    out = ["## `make test` on a busy machine", ""]
    if not s or not s["runs"]:
        return "\n".join(out + ["No stressed runs counted yet.", ""])
    out += [span(s), "", "Each run: a fresh clone's `make test` with every core kept busy "
            "(scripts/stress-test-run.sh; docs/testing.md).", "",
            "| runs | passed | failed | passes in a row | hours |", "|---:|---:|---:|---:|---:|",
            f"| {s['runs']} | {s['passed']} | {s['failed']} | {s['passes_in_a_row']} | {s['seconds'] / 3600:.1f} |",
            "", "| load | runs |", "|---|---:|"]
    out += [f"| {name} | {n} |" for name, n in sorted(s["loads"].items())]
    if s["last_failed"]["date"]:
        tests = s["last_failed_tests"] or "(no test named)"
        out += ["", f"Last failed run: {s['last_failed']['date'][:10]} (commit {s['last_failed']['commit']}): {tests}."]
    out.append("")
    return "\n".join(out)


def replace_section(page, name, body):
    """torture/totals_file.cc's replace_section()."""
    begin, end = f"<!-- begin {name} -->\n", f"<!-- end {name} -->\n"
    section = begin + body + ("" if not body or body.endswith("\n") else "\n") + end
    b = page.find(begin)
    e = -1 if b < 0 else page.find(end, b)
    if e < 0:
        return page + ("" if not page or page.endswith("\n") else "\n") + "\n" + section
    return page[:b] + section + page[e + len(end):]


def write(path, content):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(content)
    os.replace(tmp, path)


def save(data, totals, page_path, sections):
    page = open(page_path).read() if os.path.exists(page_path) else ""
    for name, body in sections:
        page = replace_section(page, name, body)
    write(totals, dump(data) + "\n")
    write(page_path, page)


def main(argv):
    if len(argv) < 3 or argv[0] not in ("fuzz", "stress", "page"):
        sys.exit(__doc__)
    cmd, totals, page = argv[0], argv[1], argv[2]
    try:
        data = load(totals)
        if cmd == "fuzz":
            for path in argv[3:]:
                with open(path) as f:
                    fold_fuzz(data, path, f.readlines())
        elif cmd == "stress":
            if len(argv) != 4:
                sys.exit(__doc__)
            fold_stress(data, argv[3])
            check_stress(data["stress"])
    except (Bad, OSError) as e:
        print(f"reliability_totals: {e} (nothing written)", file=sys.stderr)
        return 2
    save(data, totals, page, [("fuzz", render_fuzz(data)), ("stress", render_stress(data))])
    if cmd == "stress":
        print(data["stress"]["passes_in_a_row"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
