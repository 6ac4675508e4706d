#!/usr/bin/python3
"""A round of real logs for the classifier's families test (tests/data/logs/families): the lists a collector
must avoid, the check of what the collectors wrote, and the merge that makes the round the held-back set.

  round.py used OUT_DIR [ROUND_DIR ...]   write OUT_DIR/used-projects.txt and used-urls.txt: every project and
                                          URL tests/data cites, and every entry of earlier rounds' directories
                                          (kept or set aside)
  round.py check ROUND_DIR                check ROUND_DIR/*/entries.jsonl (brief.md says what a collector writes);
                                          print each entry to set aside and why; exit 1 if any
  round.py merge ROUND ROUND_DIR ASIDE    make ROUND_DIR's entries not named in the file ASIDE the held round
                                          ROUND, after moving the held round into dev; copy their logs
  round.py twins                          list the look-alikes whose log is, numbers (not sizes), paths and
                                          addresses aside, the text of an OOM's log: no rule on the text gets both
                                          right

--data DIR (before the command) reads and writes another tests/data. Read the notes that `check` marks as
hedged: a verdict that rests on a maintainer's "probably" alone is set aside by hand (list it in ASIDE).

A round: `used` into a new ROUND_DIR (with every earlier round's directory); give each collector
scripts/families/brief.md with ROUND, NAME, AREA, DIR (the ROUND_DIR), CAP, STOP and TARGET filled in; `check`;
write ASIDE (every entry `check` set aside, and the hedged verdicts you set aside); `merge`; run
build/tests/unit_tests "recall and false alarms per family*" once and keep its output; then move the floors of
tests/unit/classifier_families_test.cpp and the table of README.md to what it printed, before any rule changes.
"""
import argparse
import json
import re
import shutil
import sys
from pathlib import Path

FAMILIES = {"allocator": "allocator-", "library": "library-", "kernel-kill": "kernel-kill-", "monitor": "monitor-",
            "driver": "driver-", "sigkill": "sigkill-", "recovered-then-died": "recovered-", "lookalike": "lookalike-"}
KEYS = ["file", "set", "project", "source", "url", "year", "family", "oom", "resembles", "collector_kind", "exit",
        "note", "doubt", "round"]
HEDGES = re.compile(r"\b(likely|probably|presumably|suspect|seems|appears to|may have|might|possibly|perhaps|"
                    r"unclear|not confirmed|unconfirmed)\b", re.I)
MAX_BYTES = 60_000


def github_project(url):
    m = re.match(r"https?://github\.com/([^/]+)/([^/#?]+)", url or "")
    return f"{m.group(1)}/{m.group(2)}".lower() if m else None


def cited(data):
    """The projects and URLs every manifest under DATA cites."""
    projects, urls = set(), set()
    for path in sorted(data.rglob("manifest.json")):
        manifest = json.loads(path.read_text())
        for entry in manifest["logs"] if isinstance(manifest, dict) else manifest:
            if entry.get("project"):
                projects.add(entry["project"].lower())
            for key in ("url", "source"):
                value = entry.get(key) or ""
                if value.startswith("http"):
                    urls.add(value.strip())
                projects.update(p for p in [github_project(value)] if p)
                # "keras-team/keras#13889", "config axolotl-ai-cloud/axolotl@13b80937:examples/...".
                projects.update(m.lower() for m in re.findall(r"(?<![\w./-])([\w.-]+/[\w.-]+)[#@]\w", value))
    return projects, urls


def entries(round_dir):
    """(collector, line number, entry) for every line of ROUND_DIR/*/entries.jsonl; a line that is no JSON is an
    entry of its own with the error."""
    for path in sorted(Path(round_dir).glob("*/entries.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                try:
                    yield path.parent, number, json.loads(line)
                except json.JSONDecodeError as error:
                    yield path.parent, number, {"_error": f"not JSON: {error}"}


def problems(entry, log, used_projects, used_urls, seen_projects, seen_files):
    """Why ENTRY (with its log file LOG) cannot be kept, worst first."""
    if "_error" in entry:
        return [entry["_error"]]
    why = []
    project, file, family = entry.get("project", "").lower(), entry.get("file", ""), entry.get("family")
    from_url = github_project(entry.get("url"))
    if project in used_projects or (from_url and from_url in used_projects):
        why.append("project already used")
    if entry.get("url", "").strip() in used_urls:
        why.append("URL already used")
    if not entry.get("url", "").startswith("https://"):
        why.append("URL is not https:// (the families test cites only those)")
    if from_url and from_url != project:
        why.append(f"URL is {from_url}'s, not {project}'s")
    if project in seen_projects:
        why.append(f"project also collected by {seen_projects[project]}")
    if file in seen_files:
        why.append(f"file also written by {seen_files[file]}")
    if not re.fullmatch(r"[a-z0-9-]+\.log", file):
        why.append("file name is not [a-z0-9-]+.log")
    if family not in FAMILIES:
        why.append(f"family {family!r} is none of {', '.join(FAMILIES)}")
    elif not file.startswith(FAMILIES[family]):
        why.append(f"file name does not begin {FAMILIES[family]}")
    if (family == "lookalike") == bool(entry.get("oom")):
        why.append("a look-alike is oom false, and only a look-alike is")
    if family == "lookalike" and entry.get("resembles") not in set(FAMILIES) - {"lookalike"}:
        why.append("a look-alike names the family it resembles")
    if not log.is_file():
        why.append(f"no log {log}")
    else:
        content = log.read_bytes()
        try:
            content.decode("utf-8")
        except UnicodeDecodeError:
            why.append("log is not UTF-8")
        if len(content) > MAX_BYTES:
            why.append(f"log is over {MAX_BYTES} bytes")
        if not content.strip():
            why.append("log is empty")
    if set(entry) - set(KEYS):
        why.append(f"unknown fields {sorted(set(entry) - set(KEYS))}")
    if entry.get("doubt"):
        why.append(f"collector's doubt: {entry['doubt']}")
    return why


def check(data, round_dir):
    used_projects, used_urls = cited(data)
    seen_projects, seen_files, aside, count = {}, {}, 0, 0
    for collector, number, entry in entries(round_dir):
        count += 1
        log = collector / "logs" / entry.get("file", "")
        why = problems(entry, log, used_projects, used_urls, seen_projects, seen_files)
        seen_projects.setdefault(entry.get("project", "").lower(), collector.name)
        seen_files.setdefault(entry.get("file", ""), collector.name)
        name = entry.get("file", f"line {number}")
        if why:
            aside += 1
            print(f"{collector.name}/entries.jsonl:{number}: set aside {name}: {'; '.join(why)}")
        elif HEDGES.search(entry.get("note", "")):
            print(f"{collector.name}/entries.jsonl:{number}: read the note of {name}: "
                  f"hedged ({', '.join(sorted(set(m.lower() for m in HEDGES.findall(entry['note']))))})")
    print(f"{count} entries, {aside} to set aside")
    return 1 if aside else 0


def used(data, out_dir, round_dirs):
    projects, urls = cited(data)
    for round_dir in round_dirs:
        for _, _, entry in entries(round_dir):
            projects.update(p.lower() for p in [entry.get("project"), github_project(entry.get("url"))] if p)
            urls.update(u.strip() for u in [entry.get("url")] if u)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "used-projects.txt").write_text("".join(p + "\n" for p in sorted(projects)))
    (out / "used-urls.txt").write_text("".join(u + "\n" for u in sorted(urls)))
    print(f"{len(projects)} projects, {len(urls)} URLs")
    return 0


def write_manifest(path, manifest):
    lines = ",\n".join("    " + json.dumps(entry, ensure_ascii=False) for entry in manifest["logs"])
    path.write_text('{\n  "about": ' + json.dumps(manifest["about"], ensure_ascii=False) + ',\n  "logs": [\n' +
                    lines + "\n  ]\n}\n")


def merge(data, number, round_dir, aside_file):
    families = data / "logs" / "families"
    path = families / "manifest.json"
    manifest = json.loads(path.read_text())
    aside = {line.strip() for line in Path(aside_file).read_text().splitlines() if line.strip()}
    used_projects, used_urls = cited(data)
    unknown = aside - {entry.get("file") for _, _, entry in entries(round_dir)}
    if unknown:
        sys.exit(f"{aside_file} names what no entry of {round_dir} is: {', '.join(sorted(unknown))}")
    new = []
    for collector, number_in_file, entry in entries(round_dir):
        if entry.get("file") in aside:
            continue
        log = collector / "logs" / entry.get("file", "")
        why = problems(entry, log, used_projects, used_urls, {}, {})
        if why:
            sys.exit(f"{collector.name}/entries.jsonl:{number_in_file}: {entry.get('file')}: {'; '.join(why)} "
                     f"(name it in {aside_file} to set it aside)")
        used_projects.add(entry["project"].lower())
        used_urls.add(entry["url"].strip())
        new.append((log, {**entry, "set": "held", "round": number}))
    for entry in manifest["logs"]:
        if entry["set"] == "held":
            entry["set"] = "dev"
    for log, entry in new:
        shutil.copyfile(log, families / entry["file"])
        manifest["logs"].append({key: entry[key] for key in KEYS if entry.get(key) not in (None, "")})
    write_manifest(path, manifest)
    print(f"round {number}: {len(new)} logs held back, {len(aside)} set aside; the last held round is dev now")
    return 0


def normalised(text):
    """A log's lines with what differs between runs of the same failure made one token: addresses, paths, numbers
    (not sizes: a rule may read those)."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"0x[0-9a-fA-F]+", "H", line.strip())
        line = re.sub(r"(?:[A-Za-z]:)?[\\/][^\s:'\"()]+", "P", line)
        line = re.sub(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])(?!\s?(?:[KMGTP]i?B|bytes|[KMGT]b)\b)", "N", line)  # not a size
        if line:
            lines.append(" ".join(line.split()))
    return tuple(lines)


def twins(data):
    families = data / "logs" / "families"
    by_text = {}
    for entry in json.loads((families / "manifest.json").read_text())["logs"]:
        text = (families / entry["file"]).read_bytes().decode("utf-8", "replace")
        by_text.setdefault(normalised(text), []).append(entry)
    lookalikes = sum(1 for group in by_text.values() for e in group if not e["oom"])
    shared = 0
    for text, group in by_text.items():
        if len({e["oom"] for e in group}) < 2:
            continue
        shared += sum(1 for e in group if not e["oom"])
        print(" | ".join(text)[:100])
        for e in sorted(group, key=lambda e: (e["oom"], e["file"])):
            print(f"  {'OOM       ' if e['oom'] else 'look-alike'} {e['set']:4} {e['file']}")
    print(f"{shared} of {lookalikes} look-alikes have an OOM's text")
    return 0


def main():
    root = Path(__file__).resolve().parents[2]
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=root / "tests" / "data", help="the tests/data to read and write")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("used")
    p.add_argument("out_dir")
    p.add_argument("round_dirs", nargs="*")
    p = commands.add_parser("check")
    p.add_argument("round_dir")
    p = commands.add_parser("merge")
    p.add_argument("round", type=int)
    p.add_argument("round_dir")
    p.add_argument("aside")
    commands.add_parser("twins")
    args = parser.parse_args()
    if args.command == "used":
        return used(args.data, args.out_dir, args.round_dirs)
    if args.command == "check":
        return check(args.data, args.round_dir)
    if args.command == "twins":
        return twins(args.data)
    return merge(args.data, args.round, args.round_dir, args.aside)


if __name__ == "__main__":
    sys.exit(main())
