"""Event hooks (--notify): the webhook example POSTs every chosen event of a real laddered run to a
listener on 127.0.0.1, in order; a hook that hangs is killed at its timeout while the run goes
on; a hook that fails is a warning; hooks also come from ~/.config/sparkguard/config.toml."""
import http.server
import json
import os
import threading

from conftest import HF_TRAIN, PYTHON, SOURCE, base_env, read_events, read_report, sparkguard

EXAMPLES = SOURCE / "scripts" / "examples"
CAP = 1010 * 1000 * 1000  # hf_train.py --width 8: 8x1024 dies, 4x1024 fits (see test_run_ladder.py)


def local_env(**extra):
    env = base_env(**extra)
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(proxy, None)  # test traffic stays on loopback
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    return env


class Listener:
    """An HTTP server on 127.0.0.1 that keeps every POSTed body, for the test's lifetime."""

    def __init__(self):
        bodies = self.bodies = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def laddered(out):
    return ["prlimit", f"--as={CAP}", PYTHON, HF_TRAIN, "--output_dir", out, "--per_device_train_batch_size", 8,
            "--max_seq_length", 1024, "--warmup_steps", 4, "--max_steps", 6, "--save_steps", 2, "--width", 8]


def test_the_webhook_example_gets_every_chosen_event_of_a_laddered_run_in_order(tmp_path):
    listener = Listener()
    try:
        env = local_env(WEBHOOK_URL=listener.url, WEBHOOK_FORMAT="json")
        result = sparkguard("run", "--run-dir", tmp_path / "run", "--ladder", "smaller-batch",
                            "--notify", EXAMPLES / "notify-webhook.sh", "--notify-on", "oom,rung,end",
                            "--", *laddered(tmp_path / "out"), cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr.decode()[-3000:]
    finally:
        listener.close()
    got = listener.bodies
    names = [b["event"] for b in got]
    attempts = len(read_report(tmp_path / "run")["attempts"])
    assert attempts >= 2 and names == ["oom", "rung"] * (attempts - 1) + ["end"]  # no "start": not chosen
    oom, rung, end = got[0], got[1], got[-1]
    assert oom["attempt"] == 1 and oom["kind"] == "cpu-allocator" and "ran out of memory" in oom["summary"]
    assert rung["rung"] == "smaller-batch" and "batch_size 8 -> 4" in rung["summary"]
    assert end["outcome"] == "succeeded" and end["run_dir"] == str(tmp_path / "run")
    assert all(b["time"] and b["summary"] for b in got)
    assert "notify-failed" not in [e["event"] for e in read_events(tmp_path / "run")]


def test_a_hanging_hook_is_killed_at_its_timeout_and_the_relaunch_does_not_wait(tmp_path):
    hook = tmp_path / "hang.sh"
    hook.write_text(f"#!/bin/sh\necho \"$SPARKGUARD_EVENT $$\" >> {tmp_path / 'started'}\nexec sleep 600\n")
    hook.chmod(0o755)
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--ladder", "smaller-batch", "--notify", hook,
                        "--notify-on", "oom,end", "--notify-timeout", "3s", "--", *laddered(tmp_path / "out"),
                        cwd=tmp_path, env=local_env())
    assert result.returncode == 0, result.stderr.decode()[-3000:]
    events = read_events(tmp_path / "run")
    names = [e["event"] for e in events]
    failed = [e for e in events if e["event"] == "notify-failed"]
    ooms = names.count("oom")
    assert [f["for"] for f in failed] == ["oom"] * ooms + ["end"] and all(f["timed_out"] for f in failed)
    # the relaunch happened while the oom hook still hung: attempt 2 launched before it was killed
    assert names.index("launch", names.index("oom")) < names.index("notify-failed")
    for line in (tmp_path / "started").read_text().split("\n")[:-1]:  # every hook process is gone
        assert not os.path.exists(f"/proc/{line.split()[1]}")


def test_a_failing_hook_is_a_warning_and_the_run_still_succeeds(tmp_path):
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--notify", "sh -c 'echo nope >&2; exit 3'",
                        "--", "true", cwd=tmp_path, env=local_env())
    assert result.returncode == 0
    failed = [e for e in read_events(tmp_path / "run") if e["event"] == "notify-failed"]
    assert failed == [{**failed[0], "hook": "sh", "for": "end", "exit_code": 3, "timed_out": False}]
    assert b"notify hook sh for end: exited 3" in result.stderr
    assert read_report(tmp_path / "run")["outcome"] == "succeeded"


def test_hooks_from_the_user_config_file_and_its_errors_name_the_line(tmp_path):
    config = tmp_path / "xdg" / "sparkguard" / "config.toml"
    config.parent.mkdir(parents=True)
    record = tmp_path / "record.json"
    config.write_text(f'[notify]\ncommands = [["sh", "-c", "cat > {record}"]]\non = ["end"]\ntimeout = "10s"\n')
    result = sparkguard("run", "--run-dir", tmp_path / "run", "--", "true", cwd=tmp_path,
                        env=local_env(XDG_CONFIG_HOME=str(tmp_path / "xdg")))
    assert result.returncode == 0, result.stderr.decode()
    sent = json.loads(record.read_text())
    assert sent["event"] == "end" and sent["outcome"] == "succeeded"
    config.write_text('[notify]\non = ["end", "tea-time"]\n')
    bad = sparkguard("run", "--", "true", cwd=tmp_path, env=local_env(XDG_CONFIG_HOME=str(tmp_path / "xdg")))
    assert bad.returncode == 2 and f"{config}:2:".encode() in bad.stderr and b"tea-time" in bad.stderr
