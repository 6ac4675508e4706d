"""The man pages against the binary and the code: sparkguard(1) documents every subcommand, every
option each one's --help lists (and no option it does not have), every exit code of DESIGN.md
section 2, every file of the run directory, every event and every environment variable;
sparkguard-profile(5) documents every key the profile readers accept (and no other), and its
examples load. Both render without a warning."""
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from man_source import help_options, line_text, read_page, sparkguard_invocations, tag_options

BINARY = os.environ.get("SPARKGUARD", "sparkguard")
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
MAN1 = SOURCE / "man" / "sparkguard.1"
MAN5 = SOURCE / "man" / "sparkguard-profile.5"
SRC = SOURCE / "src"
# The commands the WORKLOAD OPTIONS section serves (cli/workload_options.cpp's table).
WORKLOAD_COMMANDS = {"plan", "preflight", "run"}
DESIGN_EXIT_CODES = {"0", "2", "3", "4", "5", "125", "126", "127"}


def sparkguard(*args, env=None):
    full_env = dict(os.environ, SPARKGUARD_PROFILES=str(SOURCE / "profiles"))
    full_env.update(env or {})
    return subprocess.run([BINARY, *map(str, args)], capture_output=True, text=True, env=full_env, timeout=60)


def commands():
    out = sparkguard("--help").stdout
    names = re.findall(r"^  ([a-z][a-z-]*) {2,}", out.split("commands:\n", 1)[1], re.M)
    assert len(names) >= 6, out
    return names


def command_help(command):
    result = sparkguard(command, "--help")
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="module")
def page():
    return read_page(MAN1)


@pytest.fixture(scope="module")
def profile_page():
    return read_page(MAN5)


def tagged_options(section):
    options = {}
    for tag, _ in section.tags():
        options.update(tag_options(tag))
    return options


def documented_options(page, command):
    options = tagged_options(page["COMMANDS"].subsections[command])
    if command in WORKLOAD_COMMANDS:
        options.update(tagged_options(page["WORKLOAD OPTIONS"]))
    options["help"] = tag_options(page["COMMON OPTIONS"].tags()[0][0])["help"]
    return options


def source_text(relative):
    return (SRC / relative).read_text()


@pytest.mark.parametrize("man_page", [MAN1, MAN5], ids=lambda p: p.name)
def test_the_page_renders_without_warnings(man_page):
    env = dict(os.environ, LC_ALL="C.UTF-8", MANWIDTH="80")
    man = subprocess.run(["man", "--warnings", "-E", "UTF-8", "-l", str(man_page)], capture_output=True, text=True,
                         env=env, timeout=60)
    assert man.returncode == 0 and man.stderr == "", man.stderr
    assert "SPARKGUARD" in man.stdout
    groff = subprocess.run(["groff", "-man", "-ww", "-z", str(man_page)], capture_output=True, text=True, timeout=60)
    assert groff.returncode == 0 and groff.stderr == "", groff.stderr


def test_every_subcommand_has_a_section_and_no_other(page):
    assert list(page["COMMANDS"].subsections) == commands()


@pytest.mark.parametrize("command", ["run", "plan", "preflight", "thermal", "diagnose", "report", "drop-caches"])
def test_the_page_lists_exactly_the_options_of_the_commands_help(page, command):
    assert command in commands()
    in_help = help_options(command_help(command))
    in_man = documented_options(page, command)
    assert sorted(set(in_help) - set(in_man)) == [], f"options of `{command} --help` missing from the man page"
    assert sorted(set(in_man) - set(in_help)) == [], f"options in the man page that `{command}` does not have"
    for name, (short, metavar) in in_help.items():
        assert in_man[name] == (short, metavar), f"--{name}: man page says {in_man[name]}, --help says {(short, metavar)}"


def test_version_and_help_are_documented_and_the_page_names_the_binarys_version(page):
    version = sparkguard("--version")
    assert version.returncode == 0
    common = {name for tag, _ in page["COMMON OPTIONS"].tags() for name in tag_options(tag)}
    assert common == {"help", "version"}
    th = next(l for l in MAN1.read_text().splitlines() if l.startswith(".TH"))
    assert f'"{version.stdout.strip()}"' in th, (th, version.stdout)
    assert f'"{version.stdout.strip()}"' in next(l for l in MAN5.read_text().splitlines() if l.startswith(".TH"))


def test_every_exit_code_of_design_section_2_and_of_run_help_is_documented(page):
    tags = dict(page["EXIT STATUS"].tags())
    assert DESIGN_EXIT_CODES <= set(tags), sorted(tags)
    assert "trainer's own exit status" in tags["N"] and "128+N" in tags["N"]
    assert "128+N" in tags and "signal" in tags["128+N"]
    epilog = command_help("run").split("exit status:", 1)[1]
    in_help = set(re.findall(r"\b(\d+)\b(?!\+)", epilog.replace("/", " "))) - {"128"}
    assert in_help and in_help <= set(tags), (in_help, sorted(tags))


def run_dir_files():
    names = set(re.findall(r'path / "([^"]+)"', source_text("report/run_dir.hpp")))
    assert {"train.log", "report.json"} <= names
    if '"stall-"' in source_text("supervise/supervisor.cpp"):
        names.add("stall-N.txt")
    if '"attempt-"' in source_text("supervise/supervisor.cpp") and '/ "final"' in source_text("supervise/supervisor.cpp"):
        names.add("attempt-N/FILE, final/FILE")
    if 'dir_.path / "notify"' in source_text("supervise/notifier.cpp"):
        names.add("notify/N-EVENT.json")
    if 'run_dir / "nodes" / host' in source_text("supervise/node.cpp"):
        names.add("nodes/HOST/")
    return names


def test_every_file_of_the_run_directory_is_documented_and_no_other(page):
    documented = {tag for tag, _ in page["FILES"].subsections["The run directory"].tags()}
    assert documented == run_dir_files()


def test_every_event_in_events_jsonl_is_documented(page):
    written = set()
    for cpp in (SRC / "supervise").glob("*.cpp"):
        written |= set(re.findall(r'events_\.write(?:_durable)?\("([a-z-]+)"', cpp.read_text()))
    assert "memory-low" in written
    written |= set(re.findall(r'\{"([a-z-]+)", std::move\(fields\)\}', source_text("telemetry/throttle_detector.cpp")))
    assert {"launch", "oom", "end", "power-cap", "throttle"} <= written
    body = dict(page["FILES"].subsections["The run directory"].tags())["events.jsonl"]
    listed = set(re.findall(r"[a-z][a-z-]+", body.split("The events:", 1)[1]))
    assert written <= listed, sorted(written - listed)


def environment_variables():
    read = set()
    for cpp in SRC.rglob("*.cpp"):
        read |= set(re.findall(r'getenv\("([A-Z_]+)"\)', cpp.read_text()))
    for names in re.findall(r"scan_env\(env, \{([^}]*)\}", source_text("preflight/cluster.cpp")):
        read |= set(re.findall(r'"([A-Z_]+)"', names))
    set_for_trainer = set(re.findall(r'env\.emplace_back\("([A-Z_]+)"', source_text("supervise/supervisor.cpp")))
    set_for_trainer |= set(re.findall(r'^env = "([A-Z_]+)"', (SOURCE / "profiles/trainers/generic.toml").read_text(), re.M))
    set_for_trainer |= set(re.findall(r'\{"(SPARKGUARD_[A-Z_]+)", ', source_text("supervise/notifier.cpp")))  # for hooks
    assert {"SPARKGUARD_PROFILES", "HOME", "WORLD_SIZE"} <= read
    assert {"SPARKGUARD_ATTEMPT", "SPARKGUARD_RUN_DIR", "SPARKGUARD_BATCH_SIZE"} <= set_for_trainer
    return read | set_for_trainer


def test_every_environment_variable_is_documented_and_no_other(page):
    documented = set()
    for tag, _ in page["ENVIRONMENT"].tags():
        documented |= set(re.findall(r"[A-Z][A-Z_]+", tag))
    assert documented == environment_variables()


def test_the_examples_use_only_options_that_exist(page):
    calls = [call for block in page["EXAMPLES"].examples() for call in sparkguard_invocations(block)]
    assert {command for command, _ in calls} >= {"run", "plan", "preflight", "report", "diagnose"}
    for command, options in calls:
        known = help_options(command_help(command))
        shorts = {f"-{short}" for short, _ in known.values() if short} | {"-h"}
        for option in options:
            assert option in shorts or option[2:] in known, f"sparkguard {command} has no {option}"


def test_every_rung_is_documented(page):
    rungs = set(re.findall(r'case Rung::\w+: return "([a-z0-9-]+)"', source_text("ladder/ladder.cpp")))
    assert len(rungs) == 4
    assert {tag for tag, _ in page["THE OOM LADDER"].tags()} == rungs


# sparkguard-profile(5)

def reader_keys(relative):
    """The keys in every reject_unknown_keys(...) list of a reader (and a kKeys table)."""
    text = source_text(relative)
    keys = set()
    for block in re.findall(r"reject_unknown_keys\([^{;]*\{([^}]*)\}", text) + re.findall(r"kKeys = \{([^}]*)\}", text):
        keys |= set(re.findall(r'"([a-z_0-9]+)"', block))
    assert keys, relative
    return keys


def documented_keys(section):
    """The key names in a section's tags: "a, b or c (type...)" names a, b and c."""
    keys = set()
    for tag, _ in section.tags():
        keys |= set(re.findall(r"[a-z][a-z_0-9]*", tag.split(" (", 1)[0]))
    for sub in section.subsections.values():
        keys |= documented_keys(sub)
    return keys - {"or"}


@pytest.mark.parametrize("section, reader, tables", [
    ("TRAINER PROFILES", "ladder/trainer_profile.cpp", {"detect", "syntax", "knobs", "method", "resume", "progress"}),
    ("PLATFORM PROFILES", "accounting/platform.cpp", set()),
    ("THE MODEL CATALOG", "accounting/catalog.cpp", {"model"}),
    ("ANCHORS", "accounting/anchors.cpp", {"anchor"}),
])
def test_every_key_the_reader_accepts_is_documented_and_no_other(profile_page, section, reader, tables):
    accepted = reader_keys(reader)
    if "knobs" in tables:
        accepted |= set(re.findall(r'case Knob::\w+: return "([a-z_]+)"', source_text(reader)))
    assert tables <= accepted
    text = profile_page[section].text()
    for table in tables:
        assert f"[{table}" in text or f"[[{table}]]" in text, f"{section}: table [{table}] is not described"
    documented = documented_keys(profile_page[section])
    assert sorted(accepted - tables - documented) == [], f"{section}: keys the reader accepts but the page omits"
    assert sorted(documented - accepted) == [], f"{section}: keys the page names but the reader rejects"


def test_the_prequantized_list_is_documented(profile_page):
    assert reader_keys("ladder/prequantized.cpp") == {"originals"}
    assert "[originals]" in profile_page["PRE-QUANTISED MODELS"].text()


def test_the_workload_file_keys_are_the_workload_options(page, profile_page):
    options = set(tagged_options(page["WORKLOAD OPTIONS"])) - {"workload"}
    keys = {o for o in options if not o.startswith("no-")}
    text = profile_page["WORKLOAD FILES"].text()
    listed = set(re.findall(r"[a-z][a-z0-9-]+", text.split("without their dashes:", 1)[1].split(".", 1)[0]))
    assert listed == keys


def test_the_examples_in_sparkguard_profile_5_are_valid_and_load(profile_page, tmp_path):
    blocks = profile_page["DESCRIPTION"].examples()
    toml_blocks = [b for s in profile_page.values() for b in s.examples() if not b.startswith("$") and "error:" not in b
                   and not b.startswith("mine.toml")]
    assert len(toml_blocks) >= 4 and blocks
    for block in toml_blocks:
        tomllib.loads(block)
    profiles = tmp_path / "profiles"
    for block in toml_blocks:
        first = block.splitlines()[0]
        if first.startswith("# ~/.config/sparkguard/profiles/"):
            target = profiles / first.split("profiles/", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block + "\n")
        elif first.startswith("model = "):
            (tmp_path / "workload.toml").write_text(block + "\n")
    env = {"SPARKGUARD_PROFILES": f"{profiles}:{SOURCE / 'profiles'}"}
    trainer = sparkguard("run", "--print-default-profile", "--", "python", "mysft.py", "--qlora", env=env)
    assert trainer.returncode == 0, trainer.stderr
    assert trainer.stdout.splitlines()[0] == f"# {profiles / 'trainers' / 'mysft.toml'}"
    platform = sparkguard("plan", "--params", "8B", "--platform", "rtx6000", "--json", env=env)
    assert platform.returncode in (0, 3), platform.stderr
    workload = sparkguard("plan", "--workload", tmp_path / "workload.toml", "--budget-gb", "100", "--json", env=env)
    assert workload.returncode == 0, workload.stderr


def test_the_error_examples_are_what_the_binary_says(tmp_path):
    profiles = tmp_path / "profiles"
    (profiles / "trainers").mkdir(parents=True)
    mine = profiles / "trainers" / "mine.toml"
    expected = {
        'name = "mine"\npriorty = 5\n': "mine.toml:2:1: unknown key 'priorty' (did you mean 'priority'?)",
        'name = "mine"\n[knobs.batch_size]\nflags = ["--bs"]\nenv_var = "X"\n': "mine.toml:4:1: unknown key 'env_var' in [knobs.batch_size]",
        'name = "mine"\npriority = "5"\n': "mine.toml:2:12: 'priority' must be an integer",
    }
    page_text = "\n".join(line_text(l) or "" for l in MAN5.read_text().splitlines())
    for content, message in expected.items():
        mine.write_text(content)
        result = sparkguard("run", "--", "python", "train.py", env={"SPARKGUARD_PROFILES": f"{profiles}:{SOURCE / 'profiles'}"})
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert message in page_text
