"""sparkguard report, driven as a user would in the morning: the run directory a real ladder run
left behind, a synthetic GB10 night with every telemetry panel, torn and malformed files, and the
SVG timeline parsed back as XML and rendered by a real browser (headless Chromium)."""
import json
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import HF_TRAIN, PYTHON, sparkguard

SVG = "{http://www.w3.org/2000/svg}"
CAP = 1010 * 1000 * 1000
ZONE = timezone(timedelta(hours=1))
START = datetime(2025, 11, 29, 22, 14, 3, tzinfo=ZONE)


def stamp(seconds):
    return (START + timedelta(seconds=seconds)).isoformat(timespec="milliseconds")


def report(run_dir, *args):
    return sparkguard("report", run_dir, *args)


def report_json(run_dir):
    result = report(run_dir, "--json")
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def svg_of(run_dir, tmp_path, name="timeline.svg"):
    path = tmp_path / name
    result = report(run_dir, "--svg", path)
    assert result.returncode == 0, result.stderr.decode()
    return path, ET.parse(path).getroot()  # well-formed XML, or this raises


def titles(root):
    return [t.text for t in root.iter(SVG + "title")]


def texts(root):
    return [t.text for t in root.iter(SVG + "text")]


def group_with_title(root, prefix):
    return [g for g in root.iter(SVG + "g") if (t := g.find(SVG + "title")) is not None and t.text.startswith(prefix)]


def marker_x(root, prefix):
    return [float(g.find(SVG + "line").get("x1")) for g in group_with_title(root, prefix)]


def attempt_bands(root):
    bands = [g.find(SVG + "rect") for g in group_with_title(root, "attempt ")]
    return [(float(r.get("x")), float(r.get("x")) + float(r.get("width"))) for r in bands]


# --- the browser -------------------------------------------------------------------------------

def chromium(*args):
    binary = shutil.which("chromium")
    if not binary:
        pytest.skip("Debian's chromium package is not installed and could not be (scripts/setup.sh installs it)")
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", *args], capture_output=True, timeout=180)


def read_png(path):
    """(width, height, rows of RGB(A) bytes): enough of PNG for Chromium's screenshots."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw, stride = zlib.decompress(idat), width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride) if kind else ():
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            else:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        prev = line
    return width, height, bpp, rows


def pixels_near(png, rgb, tolerance=30):
    width, height, bpp, rows = png
    count = 0
    for row in rows:
        for x in range(0, width * bpp, bpp):
            if abs(row[x] - rgb[0]) + abs(row[x + 1] - rgb[1]) + abs(row[x + 2] - rgb[2]) <= tolerance:
                count += 1
    return count


def rendered(svg_path, png_path):
    """Chromium parses the file as SVG (no parsererror) and draws it; returns the decoded screenshot."""
    dom = chromium("--dump-dom", svg_path.as_uri())
    assert dom.returncode == 0, dom.stderr.decode()[-2000:]
    assert b"<svg" in dom.stdout and b"parsererror" not in dom.stdout
    shot = chromium(f"--screenshot={png_path}", "--window-size=1400,900", svg_path.as_uri())
    assert shot.returncode == 0 and png_path.exists(), shot.stderr.decode()[-2000:]
    png = read_png(png_path)
    assert png[:2] == (1400, 900)
    return png


# --- a real night, shortened ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def ladder_run(tmp_path_factory):
    """The real PyTorch trainer under an address-space cap: OOM, drop-caches, shorter-packing,
    smaller-batch, success (the numbers of test_run_ladder.py)."""
    tmp = tmp_path_factory.mktemp("ladder")
    run, out = tmp / "run", tmp / "out"
    command = ["prlimit", f"--as={CAP}", PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 8,
               "--max_seq_length", 1024, "--warmup_steps", 4, "--max_steps", 8, "--save_steps", 2, "--logging_steps", 2,
               "--width", 8]
    result = sparkguard("run", "--run-dir", run, "--min-seq", 512, "--", *command, cwd=tmp)
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    return run


def test_text_summary_of_a_real_ladder_run(ladder_run):
    result = report(ladder_run)
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    saved = json.loads((ladder_run / "report.json").read_text())
    lines = text.splitlines()
    assert lines[1] == "outcome   succeeded (exit 0): succeeded on attempt 4"
    assert "attempts (4)" in lines
    rows = [i for i, line in enumerate(lines) if line[:5].strip() in {"1", "2", "3", "4"}]
    assert [lines[i].split()[1] for i in rows] == ["as", "drop-caches", "shorter-packing", "smaller-batch"]
    assert lines[rows[0]].endswith("batch 8, seq 1024") and lines[rows[3]].endswith("batch 4×2, seq 512, drop-caches")
    assert all(": OOM cpu-allocator while training: RuntimeError" in lines[i + 1] for i in rows[:3])
    assert "from step 4: OOM" in lines[rows[1] + 1]
    assert "steps 4→8: succeeded" in lines[rows[3] + 1]
    assert "     skipped shorter-packing: already at the floor (seq_len 512, --min-seq 512)" in lines
    assert f"reproduce {saved['reproduce']}\n" in text
    assert "final     batch 4×2, seq 512, drop-caches" in lines
    peak = max(a["measured"]["peak_pool_used_gb"] for a in saved["attempts"])
    assert f"peak pool used {peak:.2f} GB" in text
    assert all(len(line) <= 80 for line in lines if not line.startswith("reproduce"))
    if not (ladder_run / "thermal.csv").exists():
        assert "missing   thermal.csv: absent" in text


def test_json_summary_of_a_real_ladder_run(ladder_run):
    out = report_json(ladder_run)
    saved = json.loads((ladder_run / "report.json").read_text())
    assert out["outcome"] == "succeeded" and out["exit_code"] == 0
    assert [a["rung"] for a in out["attempts"]] == [None, "drop-caches", "shorter-packing", "smaller-batch"]
    assert [a["outcome"] for a in out["attempts"]] == ["oom", "oom", "oom", "succeeded"]
    assert all(a["oom_kind"] == "cpu-allocator" and a["phase"] == "train" for a in out["attempts"][:3])
    assert [a["resumed_at_step"] for a in out["attempts"]] == [None, 4, 4, 4]
    assert out["attempts"][3]["last_step"] == 8
    assert all(a["duration_s"] > 0 for a in out["attempts"])
    assert out["final_config"] == saved["final_config"] and out["reproduce"] == saved["reproduce"]
    assert out["memory"]["peak_pool_used_gb"] == pytest.approx(max(a["measured"]["peak_pool_used_gb"] for a in saved["attempts"]), abs=1e-3)
    assert "train.log" in out["files"] and "events.jsonl" in out["files"]
    assert out["warnings"] == []


def test_timeline_of_a_real_ladder_run(ladder_run, tmp_path):
    path, root = svg_of(ladder_run, tmp_path)
    labels = texts(root)
    # a band too narrow for "attempt N · rung" (a short attempt on a loaded machine) says "N · rung"
    for label in ["attempt 1 · as given", "attempt 2 · drop-caches", "attempt 3 · shorter-packing", "attempt 4 · smaller-batch"]:
        assert label in labels or label.removeprefix("attempt ") in labels
    assert len(group_with_title(root, "OOM cpu-allocator")) == 3
    assert len(group_with_title(root, "→ ")) == 3
    assert len(group_with_title(root, "succeeded")) == 1
    # Each OOM sits at the end of the attempt it ended; the end marker at the last attempt's end.
    bands = attempt_bands(root)
    for x, (_, band_end) in zip(sorted(marker_x(root, "OOM")), bands[:3]):
        assert abs(x - band_end) <= 2
    assert abs(marker_x(root, "succeeded")[0] - bands[3][1]) <= 2
    steps = [p for p in root.iter(SVG + "polyline") if p.get("stroke") == "#7048e8"] + \
            [c for c in root.iter(SVG + "circle") if c.get("fill") == "#7048e8"]
    assert steps, "the step rate from train.log is drawn"
    png = rendered(path, tmp_path / "ladder.png")
    assert pixels_near(png, (0xe0, 0x31, 0x31)) > 3 * 100  # three OOM lines, 2 px by ~500 px
    assert pixels_near(png, (0xe7, 0xf0, 0xfb), 4) > 50000  # the shaded attempts


# --- a synthetic GB10 night: power pinned near 100 W, temperature climbing ---------------------------

HEADER = ("timestamp,elapsed_s,attempt,rung,step,gpu_temp_c,gpu_power_w,gpu_power_limit_w,gpu_sm_clock_mhz,"
          "gpu_util_pct,gpu_throttle,mem_total_gb,mem_available_gb,mem_free_gb,mem_cached_gb,trainer_rss_gb")
HOURS = 9
OOM1, OOM2 = 6 * 60, 40 * 60  # attempt 1 dies loading, attempt 2 training
THROTTLE, THROTTLE_END = 5 * 3600, 5 * 3600 + 40 * 60


def attempt_of(t):
    return 1 if t < OOM1 else 2 if t < OOM2 else 3


def step_at(t):
    if t < OOM1 + 30:
        return None
    if t < OOM2:
        return int((t - OOM1 - 30) / 30)
    slow = max(0, min(t, THROTTLE_END) - THROTTLE) * 0.4  # 40% slower while throttled
    return 50 + int((t - OOM2 - 30 - slow) / 30)


def write_gb10_night(run):
    run.mkdir()
    end = HOURS * 3600
    rows = [HEADER]
    for i in range(end // 30 + 1):
        t = i * 30
        n = attempt_of(t)
        temp = 38 + 47 * (1 - 0.5 ** (t / 5400)) + (2.5 if THROTTLE <= t < THROTTLE_END else 0)
        power = 62 if t < OOM2 else 99.1 + (i % 5) * 0.3
        used = 42 + 75 * min(1, (t % OOM2) / 300) if t < OOM2 else 96 + (i % 11) * 0.4
        step = step_at(t)
        rows.append(f"{stamp(t)},{t},{n},{['', 'drop-caches', 'shorter-packing'][n - 1]},{'' if step is None else step},"
                    f"{temp:.1f},{power:.2f},240,{2405 if t < THROTTLE else 1900},97,"
                    f"{'sw_power_cap' if t >= OOM2 else 'none'},121.7,{121.7 - used:.2f},3.2,9.5,{used - 8:.2f}")
    (run / "thermal.csv").write_text("\n".join(rows) + "\n")
    peak_temp, peak_at = max((float(r.split(",")[5]), float(r.split(",")[1])) for r in rows[1:])

    log = [f"{stamp(0)} sparkguard attempt 1: batch 8, seq_len 4096",
           f"{stamp(20)} stderr Loading checkpoint shards:  50%|#####     | 2/4 [00:10<00:10,  5.00s/it]",
           f"{stamp(OOM1)} sparkguard attempt 2 (rung drop-caches): batch 8, seq_len 4096, caches dropped"]
    last = None
    for t in range(OOM1, end + 1, 30):
        if t == OOM2:
            log.append(f"{stamp(t)} sparkguard attempt 3 (rung shorter-packing): batch 8, seq_len 2048")
        step = step_at(t)
        if step is not None and step != last:
            log.append(f"{stamp(t)} stderr {step * 100 // 1000:3d}%|###       | {step}/1000 [00:00<00:00, 0.03it/s]")
            last = step
    (run / "train.log").write_text("\n".join(log) + "\n")

    def event(t, name, **fields):
        return json.dumps({"time": stamp(t), "event": name, **fields})

    events = [event(0, "plan", verdict="tight", peak_gb=96.4, budget_gb=113.7),
              event(1, "launch", attempt=1, pid=4242, argv=["python", "train.py"], config={}),
              event(OOM1, "exit", attempt=1, exit_code=137, last_step=None),
              event(OOM1, "oom", attempt=1, kind="kernel-oom-kill", phase="load", evidence="Out of memory: Killed process 4242 (python)", reason=""),
              event(OOM1 + 1, "rung", rung="drop-caches", change="drop the page cache before launch", config={}),
              event(OOM1 + 2, "drop-caches", attempt=2, ok=True),
              event(OOM1 + 3, "launch", attempt=2, pid=4300, argv=[], config={}),
              event(OOM2, "exit", attempt=2, exit_code=137, last_step=49),
              event(OOM2, "oom", attempt=2, kind="cgroup-oom-kill", phase="train", evidence="memory cgroup out of memory: <Killed> & gone", reason=""),
              event(OOM2 + 1, "rung", rung="shorter-packing", change="seq_len 4096 -> 2048", config={}),
              event(OOM2 + 2, "resume", attempt=3, checkpoint="out/checkpoint-40", step=40),
              event(OOM2 + 3, "launch", attempt=3, pid=4400, argv=[], config={}),
              event(OOM2 + 125, "power-cap", sample_time=stamp(OOM2 + 125), attempt=3, power_w=99.4, cap_w=100, held_s=120,
                    platform="dgx-spark", source="platform", message="power held near the dgx-spark sustained cap of ~100 W (rated 240 W): this is the platform's power cap, not a configuration problem"),
              event(THROTTLE, "throttle", attempt=3, step=step_at(THROTTLE), temp_c=86.9, power_w=99.7, cap_w=100, step_time_s=42.1, baseline_step_time_s=30.0, slowdown=1.4, temp_rise_c=6.2),
              event(THROTTLE_END, "throttle-end", attempt=3, duration_s=2400, why="step time recovered"),
              event(end, "exit", attempt=3, exit_code=0, last_step=step_at(end)),
              event(end, "end", outcome="succeeded", exit_code=0, summary="succeeded on attempt 3")]
    (run / "events.jsonl").write_text("\n".join(events) + "\n")

    def config(seq, drop):
        return {"batch_size": 8, "grad_accum": 1, "seq_len": seq, "method": "qlora", "drop_caches": drop}

    def attempt(n, rung, t0, t1, outcome, seq, drop, **extra):
        return {"n": n, "rung": rung, "config": config(seq, drop), "argv": ["python", "train.py"], "env": {},
                "outcome": outcome, "exit_code": 0 if outcome == "succeeded" else 137, "oom_kind": None, "phase": None,
                "evidence": None, "confidence": None, "started": stamp(t0), "ended": stamp(t1), "resumed_from": None,
                "last_step": step_at(t1 - 1), "skipped_rungs": [], "notes": [],
                "measured": {"peak_pool_used_gb": 117.0 if outcome == "oom" else 100.4, "peak_trainer_rss_gb": 109.0}, **extra}

    saved = {
        "outcome": "succeeded", "exit_code": 0, "summary": "succeeded on attempt 3", "profile": "hf-trainer",
        "command": ["python", "train.py"], "started": stamp(0), "ended": stamp(end),
        "attempts": [
            attempt(1, None, 1, OOM1, "oom", 4096, False, oom_kind="kernel-oom-kill", phase="load", confidence="certain",
                    evidence="Out of memory: Killed process 4242 (python)"),
            attempt(2, "drop-caches", OOM1 + 3, OOM2, "oom", 4096, True, oom_kind="cgroup-oom-kill", phase="train",
                    confidence="certain", evidence="memory cgroup out of memory: <Killed> & gone"),
            attempt(3, "shorter-packing", OOM2 + 3, end, "succeeded", 2048, True, resumed_from="out/checkpoint-40")],
        "skipped_at_end": [], "final_config": config(2048, True),
        "reproduce": "python train.py --max_seq_length 2048 --load_in_4bit",
        "plan": {"peak_gb": 96.4, "train_peak_gb": 88.1, "budget_gb": 113.7, "verdict": "tight"},
        "telemetry": {"rows": len(rows) - 1, "gpu_rows": len(rows) - 1, "peak_temp_c": peak_temp, "peak_temp_at": stamp(peak_at),
                      "mean_power_w": 96.2, "max_power_w": 100.3, "cap_w": 100, "seconds_at_cap": 29400,
                      "throttle_episodes": 1, "seconds_throttled": 2400, "peak_pool_used_gb": 117.0, "peak_trainer_rss_gb": 109.0},
    }
    (run / "report.json").write_text(json.dumps(saved, indent=2))
    return run


@pytest.fixture
def gb10_night(tmp_path):
    return write_gb10_night(tmp_path / "2025-11-29-train")


def test_text_summary_of_a_gb10_night(gb10_night):
    result = report(gb10_night)
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    words = " ".join(text.split())
    assert "when      2025-11-29 22:14:03 → 2025-11-30 07:14:03 (UTC+01:00), 9h00m" in text
    assert "5m59s: OOM kernel-oom-kill while loading: Out of memory: Killed process 4242 (python)" in words
    assert "33m57s, step 66: OOM cgroup-oom-kill while training: memory cgroup out of memory: <Killed> & gone" in words
    assert "3 shorter-packing batch 8, seq 2048, qlora, drop-caches 8h19m, steps 40→1016: succeeded" in words
    assert "memory    peak pool used 117.0 GB of 121.7 GB (attempt 1), trainer RSS 109.0 GB" in text
    assert "          estimate 96.4 GB peak (training 88.1 GB): measured 121% of it" in text
    assert "          budget 113.7 GB (tight)" in text
    assert "gpu peak 84 °C at 07:14, power mean 96 W, max 100 W, cap 100 W, 8h10m at the cap" in words
    assert "power held near the dgx-spark sustained cap of ~100 W" in words
    assert "throttle  1 episode, 40m00s throttled" in text
    assert "missing" not in text


def test_timeline_of_a_gb10_night(gb10_night, tmp_path):
    path, root = svg_of(gb10_night, tmp_path)
    assert path.stat().st_size < 200_000
    lines = {p.get("stroke"): p for p in root.iter(SVG + "polyline")}
    for color, what in [("#e8590c", "temperature"), ("#1971c2", "power"), ("#868e96", "power limit"),
                        ("#2f9e44", "pool memory used"), ("#495057", "pool total"), ("#7048e8", "step rate")]:
        assert color in lines, f"no {what} line"
    assert any("estimate 96.4 GB" == t for t in texts(root))
    assert any(t.startswith("cap 100 W") for t in texts(root))
    assert [t for t in titles(root) if t.startswith("OOM")] == [
        "OOM kernel-oom-kill: load: Out of memory: Killed process 4242 (python)",
        "OOM cgroup-oom-kill: train: memory cgroup out of memory: <Killed> & gone"]
    assert any(t.startswith("throttle: step time ×1.40, 87 °C, 100 W") for t in titles(root))
    assert any(t.startswith("power cap: power held near") for t in titles(root))
    # Where things happened: the throttle marker at 5 h of 9, the axis in local time of day.
    bands = attempt_bands(root)
    left, right = bands[0][0], bands[-1][1]
    assert marker_x(root, "throttle")[0] == pytest.approx(left + (right - left) * (THROTTLE - 1) / (HOURS * 3600 - 1), abs=2)
    assert {"23:00", "11-30", "07:00", "+46m", "+8h46m"} <= set(texts(root))
    png = rendered(path, tmp_path / "gb10.png")
    assert pixels_near(png, (0xe8, 0x59, 0x0c)) > 500  # the temperature line
    assert pixels_near(png, (0x9c, 0x36, 0xb5)) > 100  # the throttle marker


def test_json_carries_the_telemetry_section_when_present(gb10_night):
    out = report_json(gb10_night)
    assert out["telemetry"]["source"] == "report.json"
    assert out["telemetry"]["seconds_at_cap"] == 29400 and out["telemetry"]["throttle_episodes"] == 1
    assert out["memory"]["estimate_peak_gb"] == 96.4 and out["memory"]["plan_verdict"] == "tight"
    assert out["duration_s"] == 9 * 3600
    saved = json.loads((gb10_night / "report.json").read_text())
    del saved["telemetry"]
    (gb10_night / "report.json").write_text(json.dumps(saved))
    out = report_json(gb10_night)
    assert out["telemetry"]["source"] == "thermal.csv"
    assert out["telemetry"]["peak_temp_c"] == pytest.approx(84.3, abs=0.05)
    assert out["telemetry"]["throttle_episodes"] == 1


def test_without_the_telemetry_section_thermal_csv_alone_gives_time_at_the_cap(gb10_night):
    saved = json.loads((gb10_night / "report.json").read_text())
    del saved["telemetry"]
    (gb10_night / "report.json").write_text(json.dumps(saved))
    (gb10_night / "events.jsonl").unlink()
    (gb10_night / "env-report.json").write_text(json.dumps({"platform": "dgx-spark", "verdict": "ready"}))
    out = report_json(gb10_night)["telemetry"]
    assert out["source"] == "thermal.csv"
    assert out["cap_w"] == 100 and out["seconds_at_cap"] == 30000  # attempt 3, from 40 min to the end
    assert out["throttle_episodes"] == 1 and out["seconds_throttled"] > 0
    assert "cap 100 W, 8h20m at the cap" in " ".join(report(gb10_night).stdout.decode().split())
    (gb10_night / "env-report.json").write_text(json.dumps({"platform": "generic-nvidia"}))
    out = report_json(gb10_night)["telemetry"]
    assert out["cap_w"] == 240 and out["seconds_at_cap"] == 0 and out["throttle_episodes"] == 0  # the driver's limit


# --- torn, missing and malformed files ----------------------------------------------------------------

def test_torn_last_lines_are_warnings(gb10_night, tmp_path):
    for name, torn in [("events.jsonl", '{"time": "2025-11-30T07:14:'), ("thermal.csv", stamp(99999) + ",99999,3,,"),
                       ("train.log", stamp(99999)[:17])]:
        with open(gb10_night / name, "a") as f:
            f.write(torn)
    result = report(gb10_night)
    assert result.returncode == 0, result.stderr.decode()
    stderr = result.stderr.decode()
    for name, line in [("events.jsonl", 18), ("thermal.csv", 1083)]:
        assert f"warning: {gb10_night / name}:{line}: torn line ignored" in stderr
    assert f"{gb10_night / 'train.log'}:" in stderr and stderr.count("torn line ignored") == 3
    assert report_json(gb10_night)["warnings"] and svg_of(gb10_night, tmp_path)


def test_a_run_without_telemetry_or_events_still_reports(gb10_night, tmp_path):
    (gb10_night / "thermal.csv").unlink()
    (gb10_night / "events.jsonl").unlink()
    (gb10_night / "train.log").unlink()
    result = report(gb10_night)
    assert result.returncode == 0, result.stderr.decode()
    text = result.stdout.decode()
    assert "thermal.csv: absent" in text and "events.jsonl: absent" in text and "train.log: absent" in text
    _, root = svg_of(gb10_night, tmp_path)
    assert "no thermal.csv in this run directory" in texts(root)
    assert len(group_with_title(root, "OOM")) == 2  # from report.json


@pytest.mark.parametrize("name,content,message", [
    ("events.jsonl", "not json\n{}\n", "events.jsonl:1: not JSON"),
    ("events.jsonl", '{"event": "launch"}\n', "events.jsonl:1: field 'time': missing or not a string"),
    ("thermal.csv", HEADER + "\n" + stamp(0) + ",0,1,,,hot,,,,,,,,,,\n" + stamp(30) + ",30,1,,,,,,,,,,,,,\n",
     "thermal.csv:2: field 'gpu_temp_c': not a number: 'hot'"),
    ("train.log", "yesterday stdout hello\n" + stamp(0) + " stdout hi\n", "train.log:1: field 'timestamp'"),
    ("report.json", "{not json", "report.json: not JSON"),
    ("report.json", '{"outcome": "succeeded"}', "report.json: not a sparkguard report"),
])
def test_malformed_files_exit_2_naming_file_line_and_field(gb10_night, name, content, message):
    (gb10_night / name).write_text(content)
    result = report(gb10_night)
    assert result.returncode == 2
    assert message in result.stderr.decode()
    assert result.stdout == b""


def test_usage_errors(tmp_path):
    missing = report(tmp_path / "nowhere")
    assert missing.returncode == 2 and b"no such run directory" in missing.stderr
    empty = report(tmp_path)
    assert empty.returncode == 2 and b"report.json: missing" in empty.stderr
    assert sparkguard("report").returncode == 2
    assert sparkguard("report", tmp_path, "--bogus").returncode == 2
    help_text = sparkguard("report", "--help")
    assert help_text.returncode == 0 and b"--svg FILE" in help_text.stdout and b"--json" in help_text.stdout
    assert b"report" in sparkguard("--help").stdout
