"""`cmake --install` and `cpack -G DEB`: what lands where, that an installed binary reads the
profiles installed beside it (not the source tree it was built from), how ~/.config and
$SPARKGUARD_PROFILES override them, and the Debian package's control fields, file list and an
unpacked binary that runs. (Installing the .deb on a clean Debian 12 is scripts/check-deb-install.sh,
too slow for every run.)"""
import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

BINARY = Path(os.environ.get("SPARKGUARD", "sparkguard"))
SOURCE = Path(os.environ.get("SPARKGUARD_SOURCE", Path(__file__).resolve().parents[2]))
BUILD = Path(os.environ.get("SPARKGUARD_BUILD", BINARY.resolve().parents[1]))
HF_COMMAND = ["--", "python", "train.py", "--per_device_train_batch_size", "2"]
EXAMPLES = {"notify-ntfy.sh", "notify-webhook.sh", "notify-mail.sh", "sparkguard.sbatch", "sparkguard-two-nodes.sbatch", "sparkguard-llama8b.service", "torchrun-two-nodes.sh", "sparkguard-drop-caches.sudoers",
            "sparkguard-resume@.service"}


def shipped_profiles():
    return sorted(str(p.relative_to(SOURCE / "profiles")) for p in (SOURCE / "profiles").rglob("*.toml"))


def clean_env(home, **extra):
    """No SPARKGUARD_PROFILES, no XDG_CONFIG_HOME, HOME an empty directory of the test's."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARKGUARD_PROFILES", "XDG_CONFIG_HOME")}
    env.update(HOME=str(home), **extra)
    return env


def run(binary, *args, env, cwd):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)


def first_line(result):
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()[0]


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("install") / "prefix"
    done = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return prefix


@pytest.fixture
def elsewhere(tmp_path):
    """A working directory and an empty HOME, away from the source tree."""
    (tmp_path / "cwd").mkdir()
    (tmp_path / "home").mkdir()
    return tmp_path / "cwd", tmp_path / "home"


def test_install_puts_the_binary_the_man_pages_the_profiles_and_the_examples_in_place(prefix):
    assert os.access(prefix / "bin" / "sparkguard", os.X_OK)
    for page, section in (("sparkguard.1", 1), ("sparkguard-profile.5", 5)):
        installed = prefix / "share" / "man" / f"man{section}" / f"{page}.gz"
        assert gzip.decompress(installed.read_bytes()) == (SOURCE / "man" / page).read_bytes()
    profiles = prefix / "share" / "sparkguard" / "profiles"
    assert sorted(str(p.relative_to(profiles)) for p in profiles.rglob("*.toml")) == shipped_profiles()
    examples = prefix / "share" / "doc" / "sparkguard" / "examples"
    assert {p.name for p in examples.iterdir()} == EXAMPLES
    assert os.access(examples / "sparkguard.sbatch", os.X_OK)


def test_man_finds_the_installed_pages(prefix, elsewhere):
    cwd, home = elsewhere
    env = clean_env(home, MANPATH=str(prefix / "share" / "man"))
    for args, page in ((["sparkguard"], "man1/sparkguard.1.gz"), (["5", "sparkguard-profile"], "man5/sparkguard-profile.5.gz")):
        found = subprocess.run(["man", "-w", *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
        assert found.stdout.strip() == str(prefix / "share" / "man" / page), found.stderr
    rendered = subprocess.run(["man", "--warnings", "-l", str(prefix / "share/man/man1/sparkguard.1.gz")], capture_output=True,
                              text=True, env=dict(env, LC_ALL="C.UTF-8", MANWIDTH="80"), cwd=cwd, timeout=60)
    assert rendered.returncode == 0 and rendered.stderr == "" and "OOM LADDER" in rendered.stdout


def test_the_installed_binary_reads_the_profiles_installed_beside_it(prefix, elsewhere):
    cwd, home = elsewhere
    installed = prefix / "share" / "sparkguard" / "profiles"
    binary = prefix / "bin" / "sparkguard"
    env = clean_env(home)
    assert first_line(run(binary, "run", "--print-default-profile", *HF_COMMAND, env=env, cwd=cwd)) == \
        f"# {installed / 'trainers' / 'hf.toml'}"
    plan = run(binary, "plan", "--model", "llama-3.1-8b", "--budget-gb", "100", "--json", env=env, cwd=cwd)
    assert plan.returncode == 0, plan.stderr
    answer = json.loads(plan.stdout)
    assert answer["verdict"] == "fits"
    assert answer["model"]["source"].endswith(f"in {installed / 'models.toml'}")


def test_an_edit_to_the_installed_catalog_is_what_the_installed_binary_sees(prefix, elsewhere, tmp_path):
    """The installed copy, not the source tree's, is read: a model added only there is found."""
    cwd, home = elsewhere
    shutil.copytree(prefix, tmp_path / "copy")
    catalog = tmp_path / "copy" / "share" / "sparkguard" / "profiles" / "models.toml"
    entry = re.search(r'\[\[model\]\]\nname = "llama-3.1-8b"\n(?:.+\n)+', catalog.read_text()).group(0)
    catalog.write_text(catalog.read_text() + "\n" + entry.replace('"llama-3.1-8b"', '"install-probe-8b"', 1)
                       .replace("meta-llama/Llama-3.1-8B", "example/install-probe-8b").replace("aliases", "# aliases"))
    binary = tmp_path / "copy" / "bin" / "sparkguard"
    probe = run(binary, "plan", "--model", "install-probe-8b", "--budget-gb", "100", env=clean_env(home), cwd=cwd)
    assert probe.returncode == 0, probe.stderr
    assert run(BINARY, "plan", "--model", "install-probe-8b", "--budget-gb", "100", env=clean_env(home),
               cwd=cwd).returncode == 2


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare(1) for a mount namespace")
def test_the_installed_binary_works_with_the_source_trees_profiles_hidden(prefix, elsewhere):
    cwd, home = elsewhere
    hide = f"mount -t tmpfs none '{SOURCE / 'profiles'}' && exec \"$@\""

    def plan_with_source_profiles_hidden(binary):
        return subprocess.run(["unshare", "--mount", "sh", "-c", hide, "sh", str(binary), "plan", "--model", "llama-3.1-8b",
                               "--budget-gb", "100", "--json"], capture_output=True, text=True, env=clean_env(home),
                              cwd=cwd, timeout=120)

    result = plan_with_source_profiles_hidden(prefix / "bin" / "sparkguard")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["model"]["source"].startswith("catalog entry llama-3.1-8b")
    # The control: the build tree's binary has only the source tree to fall back on, and finds nothing.
    control = plan_with_source_profiles_hidden(BINARY)
    assert control.returncode == 2 and "models.toml" in control.stderr, control.stderr
    assert (SOURCE / "profiles" / "models.toml").is_file()  # hidden in the namespace only


def user_hf_profile(directory):
    target = directory / "sparkguard" / "profiles" / "trainers" / "hf.toml"
    target.parent.mkdir(parents=True)
    target.write_text((SOURCE / "profiles" / "trainers" / "hf.toml").read_text()
                      .replace('description = "', 'description = "overridden: '))
    return target


def test_a_users_profile_overrides_the_shipped_one_and_sparkguard_profiles_overrides_both(prefix, elsewhere, tmp_path):
    cwd, home = elsewhere
    binary = prefix / "bin" / "sparkguard"
    in_home = user_hf_profile(home / ".config")
    assert first_line(run(binary, "run", "--print-default-profile", *HF_COMMAND, env=clean_env(home), cwd=cwd)) == \
        f"# {in_home}"
    in_xdg = user_hf_profile(tmp_path / "xdg")
    env = clean_env(home, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    assert first_line(run(binary, "run", "--print-default-profile", *HF_COMMAND, env=env, cwd=cwd)) == f"# {in_xdg}"
    in_env = user_hf_profile(tmp_path / "env")
    env["SPARKGUARD_PROFILES"] = f"{tmp_path / 'nowhere'}:{in_env.parents[1]}"
    assert first_line(run(binary, "run", "--print-default-profile", *HF_COMMAND, env=env, cwd=cwd)) == f"# {in_env}"


def test_a_users_platform_adds_to_the_shipped_ones_and_a_users_catalog_replaces_the_shipped_one(prefix, elsewhere):
    cwd, home = elsewhere
    binary = prefix / "bin" / "sparkguard"
    no_gpu = clean_env(home, PATH=f"{SOURCE / 'tests' / 'fakes'}:{os.environ['PATH']}", SPARKGUARD_FAKE_GPU="none")
    mine = home / ".config" / "sparkguard" / "profiles"
    (mine / "platforms").mkdir(parents=True)
    (mine / "platforms" / "lab-box.toml").write_text("unified = false\nmemory_gb = 96\nreserve_gb = 1\n")
    for platform, budget in (("lab-box", 95.0), ("gpu-24gb", 23.5)):
        plan = run(binary, "plan", "--params", "7B", "--platform", platform, "--json", env=no_gpu, cwd=cwd)
        assert plan.returncode in (0, 3), plan.stderr
        assert json.loads(plan.stdout)["budget_gb"] == budget
    catalog = (SOURCE / "profiles" / "models.toml").read_text()
    only = re.search(r'\[\[model\]\]\nname = "qwen2.5-7b"\n(?:.+\n)+', catalog).group(0)
    (mine / "models.toml").write_text(only)
    assert run(binary, "plan", "--model", "qwen2.5-7b", "--budget-gb", "100", env=clean_env(home), cwd=cwd).returncode == 0
    missing = run(binary, "plan", "--model", "llama-3.1-8b", "--budget-gb", "100", env=clean_env(home), cwd=cwd)
    assert missing.returncode == 2, missing.stdout


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    done = subprocess.run(["cpack", "-G", "DEB", "-B", str(out)], cwd=BUILD, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    debs = list(out.glob("sparkguard_*.deb"))
    assert len(debs) == 1, list(out.iterdir())
    return debs[0]


def field(deb, name):
    return subprocess.run(["dpkg-deb", "--field", str(deb), name], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_the_package_names_itself_and_its_shared_library_dependencies(deb):
    version = subprocess.run([str(BINARY), "--version"], capture_output=True, text=True).stdout.split()[-1]
    assert field(deb, "Package") == "sparkguard"
    assert field(deb, "Version") == version
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    assert field(deb, "Architecture") == arch
    assert deb.name == f"sparkguard_{version}_{arch}.deb"
    depends = [d.strip().split()[0] for d in field(deb, "Depends").split(",")]
    # dpkg-shlibdeps reads these off the binary; Debian 12's libspdlog1.10 provides libspdlog1.10-fmt9.
    for library in ("libspdlog1.10", "libfmt9", "libtomlplusplus3", "libc6", "libstdc++6"):
        assert any(d == library or d.startswith(library + "-") for d in depends), depends
    assert field(deb, "Section") == "utils"
    assert field(deb, "Maintainer")


def test_the_package_holds_exactly_the_install_tree_under_usr(deb, prefix):
    listing = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True, check=True).stdout
    in_deb = {line.split()[-1].lstrip(".") for line in listing.splitlines() if not line.startswith("d")}
    installed = {"/usr/" + str(p.relative_to(prefix)) for p in prefix.rglob("*") if not p.is_dir()}
    assert in_deb == installed
    assert {"/usr/bin/sparkguard", "/usr/share/man/man1/sparkguard.1.gz", "/usr/share/man/man5/sparkguard-profile.5.gz",
            "/usr/share/sparkguard/profiles/trainers/hf.toml", "/usr/share/doc/sparkguard/examples/sparkguard.sbatch"} <= in_deb


def test_the_unpacked_package_runs_and_reads_its_own_profiles(deb, tmp_path, elsewhere):
    cwd, home = elsewhere
    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    binary = root / "usr" / "bin" / "sparkguard"
    assert "not stripped" not in subprocess.run(["file", "-L", str(binary)], capture_output=True, text=True).stdout
    version = run(binary, "--version", env=clean_env(home), cwd=cwd)
    assert version.returncode == 0 and version.stdout.startswith("sparkguard ")
    assert first_line(run(binary, "run", "--print-default-profile", *HF_COMMAND, env=clean_env(home), cwd=cwd)) == \
        f"# {root / 'usr/share/sparkguard/profiles/trainers/hf.toml'}"
    plan = run(binary, "plan", "--model", "llama-3.1-8b", "--budget-gb", "100", env=clean_env(home), cwd=cwd)
    assert plan.returncode == 0 and f"in {root / 'usr/share/sparkguard/profiles/models.toml'}" in plan.stdout
