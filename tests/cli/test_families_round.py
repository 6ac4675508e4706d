"""scripts/families/round.py, the tool that makes a round of collected logs the classifier's held-back set: what
it refuses to keep, and what a merge does to the manifest."""
import json
import os
import subprocess
from pathlib import Path

SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
ROUND = SOURCE / "scripts" / "families" / "round.py"
PYTHON = "/usr/bin/python3"


def run(data, *args):
    return subprocess.run([PYTHON, str(ROUND), "--data", str(data), *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def data_dir(tmp_path, logs):
    """A tests/data with a families manifest of LOGS and another manifest citing a project by commit."""
    data = tmp_path / "data"
    families = data / "logs" / "families"
    families.mkdir(parents=True)
    (families / "manifest.json").write_text(json.dumps({"about": "test", "logs": logs}))
    (data / "trainers").mkdir()
    (data / "trainers" / "manifest.json").write_text(json.dumps([{"source": "config cited/trainer@13b8093:examples/a.yml"}]))
    return data


def entry(file, project, **fields):
    family = file.split("-")[0] if not file.startswith("kernel-kill") else "kernel-kill"
    e = {"file": file, "project": project, "source": f"{project}#1", "url": f"https://github.com/{project}/issues/1",
         "year": 2025, "family": family, "oom": family != "lookalike", "collector_kind": "RAM",
         "note": "The maintainer confirmed it and more memory fixed it."}
    if family == "lookalike":
        e["resembles"] = "library"
    e.update(fields)
    return e


def collector(round_dir, name, entries, missing=()):
    (round_dir / name / "logs").mkdir(parents=True)
    (round_dir / name / "entries.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    for e in entries:
        if e["file"] not in missing:
            (round_dir / name / "logs" / e["file"]).write_text("std::bad_alloc\n")


def test_check_sets_aside_what_cannot_be_kept(tmp_path):
    data = data_dir(tmp_path, [entry("library-old.log", "old/project", set="held", round=1)])
    round_dir = tmp_path / "round"
    collector(round_dir, "a", [
        entry("library-clean.log", "new/clean"),
        entry("library-reused.log", "Old/Project"),
        entry("library-trainer.log", "cited/trainer"),
        entry("library-doubted.log", "new/doubted", doubt="the thread never says"),
        entry("lookalike-no-family.log", "new/nofamily", resembles=None),
        entry("library-missing.log", "new/missing"),
        entry("allocator-wrong-prefix.log", "new/prefix", family="library"),
        entry("library-hedged.log", "new/hedged", note="A maintainer thinks it is probably memory."),
        entry("library-blog.log", "new/blog", url="http://blog.example/post"),
    ], missing={"library-missing.log"})
    collector(round_dir, "b", [entry("library-twice.log", "new/clean")])
    result = run(data, "check", round_dir)
    assert result.returncode == 1
    out = result.stdout
    reasons = {"library-reused.log": "project already used", "library-trainer.log": "project already used",
               "library-doubted.log": "collector's doubt: the thread never says",
               "lookalike-no-family.log": "names the family it resembles", "library-missing.log": "no log",
               "allocator-wrong-prefix.log": "does not begin library-", "library-twice.log": "also collected by a",
               "library-blog.log": "URL is not https://"}
    for file, reason in reasons.items():
        line = next((l for l in out.splitlines() if f"set aside {file}:" in l), "")
        assert reason in line, (file, out)
    assert "library-clean.log" not in out
    assert "read the note of library-hedged.log: hedged (probably)" in out
    assert "10 entries, 8 to set aside" in out


def test_merge_makes_the_round_held_and_the_last_one_dev(tmp_path):
    data = data_dir(tmp_path, [entry("library-old.log", "old/project", set="held", round=1)])
    round_dir = tmp_path / "round"
    collector(round_dir, "a", [entry("library-kept.log", "new/kept", exit=137),
                               entry("lookalike-kept.log", "new/lookalike"),
                               entry("library-doubted.log", "new/doubted", doubt="unsure")])
    aside = tmp_path / "aside.txt"
    aside.write_text("library-doubted.log\n")
    result = run(data, "merge", 2, round_dir, aside)
    assert result.returncode == 0, result.stderr
    families = data / "logs" / "families"
    manifest = json.loads((families / "manifest.json").read_text())
    assert [(e["file"], e["set"], e.get("round")) for e in manifest["logs"]] == [
        ("library-old.log", "dev", 1), ("library-kept.log", "held", 2), ("lookalike-kept.log", "held", 2)]
    assert list(manifest["logs"][1]) == ["file", "set", "project", "source", "url", "year", "family", "oom",
                                         "collector_kind", "exit", "note", "round"]
    assert manifest["logs"][2]["resembles"] == "library"
    assert (families / "library-kept.log").read_text() == "std::bad_alloc\n"
    assert not (families / "library-doubted.log").exists()


def test_merge_refuses_an_entry_it_should_not_keep(tmp_path):
    data = data_dir(tmp_path, [entry("library-old.log", "old/project", set="held", round=1)])
    before = (data / "logs" / "families" / "manifest.json").read_text()
    round_dir = tmp_path / "round"
    collector(round_dir, "a", [entry("library-kept.log", "new/kept"), entry("library-doubted.log", "new/doubted", doubt="unsure")])
    aside = tmp_path / "aside.txt"
    aside.write_text("")
    result = run(data, "merge", 2, round_dir, aside)
    assert result.returncode != 0
    assert "library-doubted.log: collector's doubt: unsure" in result.stderr
    assert (data / "logs" / "families" / "manifest.json").read_text() == before
    assert not (data / "logs" / "families" / "library-kept.log").exists()


def test_used_lists_every_cited_and_collected_project(tmp_path):
    data = data_dir(tmp_path, [entry("library-old.log", "old/project", set="dev")])
    round_dir = tmp_path / "round"
    collector(round_dir, "a", [entry("library-set-aside.log", "Earlier/Round", doubt="unsure")])
    out = tmp_path / "out"
    result = run(data, "used", out, round_dir)
    assert result.returncode == 0, result.stderr
    projects = (out / "used-projects.txt").read_text().split()
    assert {"old/project", "cited/trainer", "earlier/round"} <= set(projects)
    urls = (out / "used-urls.txt").read_text().split()
    assert "https://github.com/earlier/round/issues/1" not in urls  # the entry's own spelling is kept
    assert "https://github.com/Earlier/Round/issues/1" in urls
