"""thermal.csv and train.log with the clock in zones whose offsets are not whole hours: every
timestamp carries the zone's offset at that instant (+05:30, -02:30 or -03:30), names the moment it
was written, and the rows join train.log's lines to the second."""
import csv
import textwrap
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from conftest import base_env, read_events, read_report, sparkguard

STEPS = 8


def trainer(tmp_path):
    path = tmp_path / "t.py"
    path.write_text("#!/usr/bin/python3\n" + textwrap.dedent(f"""
        import time
        for step in range(1, {STEPS} + 1):
            print(f"step {{step}}/{STEPS} loss 1.0", flush=True)
            time.sleep(0.7)
    """))
    path.chmod(0o755)
    return path


def instant(stamp, zone):
    """The moment a timestamp names, after checking its offset is the zone's at that moment."""
    moment = datetime.fromisoformat(stamp)
    assert moment.utcoffset() == moment.astimezone(ZoneInfo(zone)).utcoffset(), (stamp, zone)
    return moment.timestamp()


@pytest.mark.parametrize("zone", ["Asia/Kolkata", "America/St_Johns"])
def test_thermal_rows_join_train_log_in_a_half_hour_zone(tmp_path, zone):
    env = base_env(TZ=zone, SPARKGUARD_FAKE_GPU="gb10", SPARKGUARD_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1")
    run = tmp_path / "run"
    before = time.time()
    result = sparkguard("run", "--run-dir", run, "--thermal-interval", 1, "--", trainer(tmp_path), cwd=tmp_path, env=env)
    after = time.time()
    assert result.returncode == 0, result.stderr.decode()[-2000:]

    step_seen = {}  # step -> the moment train.log stamped its line
    log_lines = (run / "train.log").read_text().splitlines()
    for line in log_lines:
        stamp, rest = line.split(" ", 1)
        moment = instant(stamp, zone)
        assert before - 1 <= moment <= after + 1, f"{stamp} is not when it was written ({zone})"
        if f"/{STEPS} loss" in rest:
            step_seen[int(rest.split("step ", 1)[1].split("/", 1)[0])] = moment
    assert sorted(step_seen) == list(range(1, STEPS + 1))

    with open(run / "thermal.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 3
    joined = 0
    for row in rows:
        moment = instant(row["timestamp"], zone)
        assert before - 1 <= moment <= after + 1, f"{row['timestamp']} is not when it was written ({zone})"
        if not row["step"]:
            continue
        step = int(row["step"])
        # The row says the last step logged before it: that step's line came first, and the next
        # step's line (if any) came after it, within a second (steps are read from train.log).
        assert step_seen[step] <= moment + 0.001, (row, step_seen[step])
        if step + 1 in step_seen:
            assert step_seen[step + 1] > moment - 1.0, (row, step_seen[step + 1])
        joined += 1
    assert joined >= 3
    events = read_events(run)
    assert events and all(before - 1 <= instant(e["time"], zone) <= after + 1 for e in events)
    assert read_report(run)["outcome"] == "succeeded"
