"""sparkguard run as a process supervisor: output passes through unchanged and lands in
train.log, exit codes pass through, bad input is refused before the trainer starts."""
import json
import os
import re
import stat
import subprocess
import textwrap
import time
from pathlib import Path

from conftest import PYTHON, SOURCE, base_env, read_events, read_report, sparkguard

STAMP = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d"


def script(tmp_path, name, body):
    path = tmp_path / name
    path.write_text("#!/usr/bin/python3\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def test_stdout_and_stderr_pass_through_byte_for_byte(tmp_path):
    payload = b"plain line\n\xff\xfe invalid utf-8 \x00 nul\nprogress 1\rprogress 2\r\nno newline at the end"
    trainer = script(tmp_path, "emit.py", f"""
        import sys
        sys.stdout.buffer.write({payload!r}); sys.stdout.flush()
        sys.stderr.buffer.write(b"to stderr\\n")
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == payload
    assert b"to stderr\n" in result.stderr
    assert all(line.startswith(b"sparkguard: ") or line == b"to stderr" for line in result.stderr.splitlines())


def test_train_log_has_a_timestamped_line_per_line_and_progress_update(tmp_path):
    trainer = script(tmp_path, "emit.py", r"""
        import sys
        print("first"); sys.stdout.flush()
        sys.stderr.write("  5%|5 | 5/100\r 10%|# | 10/100\r"); sys.stderr.flush()
        sys.stdout.write("last without newline"); sys.stdout.flush()
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = (tmp_path / "run" / "train.log").read_text().splitlines()
    trainer_lines = [l for l in lines if " sparkguard " not in l]
    assert all(re.match(STAMP + r" (stdout|stderr) ", l) for l in trainer_lines), trainer_lines
    bodies = [l.split(" ", 2)[1:] for l in trainer_lines]
    assert ["stdout", "first"] in bodies
    assert ["stderr", "  5%|5 | 5/100"] in bodies and ["stderr", " 10%|# | 10/100"] in bodies
    assert ["stdout", "last without newline"] in bodies


def test_a_100mb_line_passes_through_in_bounded_memory(tmp_path):
    trainer = script(tmp_path, "flood.py", """
        import sys
        chunk = b"x" * (1 << 20)
        for _ in range(100):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"\\nend\\n")
    """)
    out = tmp_path / "out.bin"
    with open(out, "wb") as sink:
        proc = subprocess.Popen([os.environ.get("SPARKGUARD", "sparkguard"), "run", "--run-dir", tmp_path / "run", "--",
                                 trainer], stdout=sink, stderr=subprocess.PIPE, env=base_env(), cwd=tmp_path)
        peak_kb = 0
        while proc.poll() is None:  # sparkguard's own peak (VmHWM), not that of the children it waits for
            try:
                status = Path(f"/proc/{proc.pid}/status").read_text()
                peak_kb = max(peak_kb, int(status.split("VmHWM:")[1].split()[0]))
            except (OSError, IndexError):
                pass
            time.sleep(0.02)
    assert proc.returncode == 0, proc.stderr.read()
    assert out.stat().st_size == 100 * (1 << 20) + 5
    assert 0 < peak_kb < 32 * 1024, f"sparkguard held {peak_kb} KB for a 100 MB line"
    log = (tmp_path / "run" / "train.log").read_bytes()
    assert b" stdout+ " in log and log.count(b"x") == 100 * (1 << 20)


def test_a_failure_that_is_not_oom_passes_the_exit_code_through_without_relaunch(tmp_path):
    trainer = script(tmp_path, "fail.py", """
        import sys
        print("Traceback (most recent call last):\\nValueError: bad dataset path", file=sys.stderr)
        sys.exit(3)
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, cwd=tmp_path)
    assert result.returncode == 3
    report = read_report(tmp_path / "run")
    assert report["outcome"] == "failed" and report["exit_code"] == 3
    assert len(report["attempts"]) == 1 and report["attempts"][0]["outcome"] == "failed"


def test_a_trainer_killed_by_a_signal_exits_128_plus_n(tmp_path):
    trainer = script(tmp_path, "segv.py", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, cwd=tmp_path)
    assert result.returncode == 128 + 11
    assert read_report(tmp_path / "run")["attempts"][0]["exit_code"] == 139


def test_a_missing_command_is_127_and_names_it_before_anything_is_created(tmp_path):
    result = sparkguard("run", "--", "no-such-trainer-xyz", "--epochs", "1", cwd=tmp_path)
    assert result.returncode == 127
    assert b"no-such-trainer-xyz" in result.stderr and b"not found" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_a_command_that_is_not_executable_is_126(tmp_path):
    path = tmp_path / "train.sh"
    path.write_text("echo hi\n")
    path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    result = sparkguard("run", "--", path, cwd=tmp_path)
    assert result.returncode == 126
    assert str(path).encode() in result.stderr


def test_an_unwritable_run_directory_is_refused_before_the_trainer_starts(tmp_path):
    marker = tmp_path / "started"
    trainer = script(tmp_path, "t.py", f"open({str(marker)!r}, 'w').write('x')\n")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    result = sparkguard("run", "--run-dir", blocker / "run", "--", trainer, cwd=tmp_path)
    assert result.returncode == 2
    assert b"run directory" in result.stderr and str(blocker).encode() in result.stderr
    assert not marker.exists()


def test_a_broken_trainer_config_is_refused_naming_file_and_line_before_anything_runs(tmp_path):
    config = tmp_path / "cfg.yml"
    config.write_text("base_model: x\nmicro_batch_size: 4\nsequence_len: [1024\n")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", "axolotl", "train", config, cwd=tmp_path,
                        env=base_env(PATH=f"{SOURCE / 'tests' / 'trainers' / 'bin'}:{os.environ['PATH']}"))
    assert result.returncode == 2
    assert f"{config}:4:".encode() in result.stderr and b"not valid YAML" in result.stderr
    assert not (tmp_path / "run").exists()


def test_a_profile_with_a_typo_names_file_line_and_column(tmp_path):
    profiles = tmp_path / "profiles" / "trainers"
    profiles.mkdir(parents=True)
    (profiles / "mine.toml").write_text('name = "mine"\n[knobs.batch_size]\nflgs = ["--bs"]\n')
    env = base_env(SPARKGUARD_PROFILES=f"{tmp_path / 'profiles'}:{SOURCE / 'profiles'}")
    trainer = script(tmp_path, "t.py", "pass\n")
    result = sparkguard("run", "--profile", "mine", "--", trainer, cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert f"{profiles / 'mine.toml'}:3:1".encode() in result.stderr and b"flgs" in result.stderr


def test_unknown_profile_lists_the_available_ones(tmp_path):
    result = sparkguard("run", "--profile", "hff", "--", "true", cwd=tmp_path)
    assert result.returncode == 2
    assert b"hff" in result.stderr and b"generic" in result.stderr


def test_placeholders_and_environment_reach_a_generic_script(tmp_path):
    trainer = script(tmp_path, "t.py", """
        import os, sys
        print(sys.argv[1:], os.environ["SPARKGUARD_BATCH_SIZE"], os.environ["SPARKGUARD_SEQ_LEN"], os.environ["SPARKGUARD_ATTEMPT"])
    """)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--batch", "4", "--seq", "1024", "--",
                        trainer, "--bs={batch_size}", "{seq_len}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == "['--bs=4', '1024'] 4 1024 1"
    assert read_report(tmp_path / "run")["profile"] == "generic"


def test_a_placeholder_without_a_value_is_a_usage_error(tmp_path):
    result = sparkguard("run", "--", "true", "{seq_len}", cwd=tmp_path)
    assert result.returncode == 2 and b"{seq_len}" in result.stderr


def test_print_default_profile_shows_the_detected_profile(tmp_path):
    result = sparkguard("run", "--print-default-profile", "--", "python", "train.py", "--output_dir", "x")
    assert result.returncode == 0
    assert b'name = "hf"' in result.stdout
    generic = sparkguard("run", "--print-default-profile")
    assert b'name = "generic"' in generic.stdout


def test_events_and_report_describe_a_clean_run(tmp_path):
    trainer = script(tmp_path, "t.py", "print({'loss': 1.0, 'epoch': 0.5})\n")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", trainer, "--output_dir", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # preflight's G1 probe runs beside the trainer: its event comes whenever it answers
    events = [e["event"] for e in read_events(tmp_path / "run") if e["event"] != "preflight"]
    assert events[-3:] == ["launch", "exit", "end"]
    report = read_report(tmp_path / "run")
    assert report["outcome"] == "succeeded" and report["exit_code"] == 0
    assert report["profile"] == "hf"
    assert report["reproduce"] == f"{trainer} --output_dir out"
    assert json.loads((tmp_path / "run" / "state.json").read_text())["options"]["command"][0] == str(trainer)


def test_default_run_directory_is_named_after_the_date_and_script(tmp_path):
    trainer = script(tmp_path, "finetune.py", "pass\n")
    assert sparkguard("run", "--", trainer, cwd=tmp_path).returncode == 0
    assert sparkguard("run", "--", trainer, cwd=tmp_path).returncode == 0
    names = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert len(names) == 2 and re.fullmatch(r"\d{4}-\d\d-\d\d-finetune", names[0]) and names[1] == names[0] + "-2"


def test_a_profile_can_teach_sparkguard_its_trainers_progress_lines(tmp_path):
    profiles = tmp_path / "profiles" / "trainers"
    profiles.mkdir(parents=True)
    (profiles / "mine.toml").write_text('name = "mine"\n[progress]\npatterns = ["^iteration (?<step>\\\\d+) of (?<total>\\\\d+)$"]\n')
    env = base_env(SPARKGUARD_PROFILES=f"{tmp_path / 'profiles'}:{SOURCE / 'profiles'}")
    trainer = script(tmp_path, "t.py", "for i in range(1, 8):\n    print(f'iteration {i} of 7', flush=True)\n")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--profile", "mine", "--", trainer, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert read_report(tmp_path / "run")["attempts"][0]["last_step"] == 7


def test_run_fit_that_finds_nothing_says_what_would_fit(tmp_path):
    result = sparkguard("run", "--fit", "--params", "20B", "--budget-gb", "24", "--", "/bin/true", cwd=tmp_path)
    assert result.returncode == 3
    stderr = result.stderr.decode()
    assert "--fit: no packing length and batch fit the budget; what would fit, best first: --method qlora --seq 832 (peak" in stderr


def test_env_report_gets_g1_from_the_probe_that_runs_beside_the_trainer(tmp_path):
    # The trainer runs until the probe has answered (importing torch takes seconds, more on a loaded machine).
    report_path = tmp_path / "run" / "env-report.json"
    trainer = script(tmp_path, "t.py", "import json, time\nprint('step 1/2', flush=True)\n"
                     f"for _ in range(600):\n    time.sleep(0.1)\n    try:\n"
                     f"        if 'pending' not in json.load(open({str(report_path)!r})): break\n"
                     "    except (OSError, ValueError):\n        pass\nprint('step 2/2')\n")
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", PYTHON, trainer, cwd=tmp_path)
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads((tmp_path / "run" / "env-report.json").read_text())
    assert "pending" not in report  # the probe answered while the trainer ran
    assert report["details"]["G1"]["python"] == PYTHON and report["details"]["G1"]["torch"]  # read by the probe
    events = [e["event"] for e in read_events(tmp_path / "run")]
    assert events.index("launch") < events.index("preflight") < events.index("end")
