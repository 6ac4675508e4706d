"""A real two-node Slurm on this machine (Debian's slurm-wlm 22.05 and munge), for the multi-node
tests: slurmctld in a network + UTS + mount namespace of its own ("ctl", 10.77.0.1), `slurmd -N
node1` and `slurmd -N node2` each in another (10.77.0.11, 10.77.0.12), joined by veth pairs on a
bridge that lives inside ctl's namespace. Every address is private to these namespaces; no host
interface is touched. Each namespace has its own /etc/hosts and /etc/slurm (bind mounts), and
Slurm's clients (srun, sbatch, squeue, and sparkguard in front of srun) run inside ctl's, where
the controller is reachable. On a writable cgroup v1 memory hierarchy, TaskPlugin=task/cgroup with
ConstrainRAMSpace enforces `srun --mem` with the kernel's OOM killer: each node's mount namespace
sees its own directory of the bed's cgroup (/sys/fs/cgroup/memory/sg-slurm-bed-PID-NS/nodeN) bound
onto /sys/fs/cgroup/memory, so the nodes' steps (slurm_nodeN/uid_0/job_J/step_S: Debian's Slurm
names its cgroup root per node) and two beds on one machine never share a cgroup. A job without
--mem gets the node's RealMemory (8000 MB) as its limit. stop() kills every process and so every
namespace, veth and bridge, and removes the cgroups and the files."""
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

NODES = {"node1": "10.77.0.11", "node2": "10.77.0.12"}
CTL_ADDR = "10.77.0.1"
CGROUP_V1 = Path("/sys/fs/cgroup/memory")
CGROUP_CONF = """CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainRAMSpace=yes
ConstrainSwapSpace=yes
AllowedRAMSpace=100
AllowedSwapSpace=0
"""
HOSTS = "127.0.0.1 localhost\n" + f"{CTL_ADDR} ctl\n" + "".join(f"{a} {n}\n" for n, a in NODES.items())


def available():
    """Why the bed cannot start here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, bind mounts)"
    for tool in ("slurmctld", "slurmd", "srun", "munged", "unshare", "nsenter", "ip"):
        if not shutil.which(tool) and not Path(f"/usr/sbin/{tool}").exists():
            return f"needs {tool} (scripts/setup.sh installs slurm-wlm and munge)"
    return None


def memory_cgroups():
    """Why Slurm's task/cgroup cannot constrain memory on the bed here, or None."""
    if not (CGROUP_V1 / "memory.limit_in_bytes").exists() or not os.access(CGROUP_V1, os.W_OK):
        return f"needs a writable cgroup v1 memory hierarchy at {CGROUP_V1}"
    return None


def slurm_conf(base, task_plugin="task/cgroup"):
    nodes = "".join(f"NodeName={n} NodeAddr={a} CPUs=2 RealMemory=8000 State=UNKNOWN\n" for n, a in NODES.items())
    return f"""ClusterName=bed
SlurmctldHost=ctl({CTL_ADDR})
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={base}/munge.sock
StateSaveLocation={base}/ctld
SlurmdSpoolDir={base}/spool/%n
SlurmctldPidFile={base}/slurmctld.pid
SlurmdPidFile={base}/slurmd-%n.pid
SlurmctldLogFile={base}/slurmctld.log
SlurmdLogFile={base}/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin={task_plugin}
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/builtin
ReturnToService=2
SlurmctldTimeout=10
SlurmdTimeout=10
KillWait=5
MessageTimeout=5
InactiveLimit=0
{nodes}PartitionName=bed Nodes=node1,node2 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
"""


class SlurmBed:
    def __init__(self):
        self.base = Path(tempfile.mkdtemp(prefix="sg-slurm-"))
        self.holders = {}  # namespace name -> pid of the process that keeps it alive
        self.daemons = []
        self.no_memory_cgroups = memory_cgroups()  # why `srun --mem` is not enforced here, or None
        self.cgroup = None if self.no_memory_cgroups else CGROUP_V1 / f"sg-slurm-bed-{os.getpid()}-{time.monotonic_ns()}"

    # -- bring-up ---------------------------------------------------------------------------

    def start(self, timeout=20):
        started = time.monotonic()
        (self.base / "ctld").mkdir()
        (self.base / "etc").mkdir()
        (self.base / "etc" / "slurm.conf").write_text(
            slurm_conf(self.base, "task/none" if self.no_memory_cgroups else "task/cgroup"))
        (self.base / "etc" / "hosts").write_text(HOSTS)
        if self.cgroup:
            (self.base / "etc" / "cgroup.conf").write_text(CGROUP_CONF)
            for node in NODES:
                (self.cgroup / node).mkdir(parents=True)
        self._start_munge()
        for name in ("ctl", *NODES):
            (self.base / "spool" / name).mkdir(parents=True, exist_ok=True)
            self._make_namespace(name)
        self._wire()
        self._daemon("ctl", ["slurmctld", "-D", "-i"])
        for node in NODES:
            self._daemon(node, ["slurmd", "-D", "-N", node])
        if not self._nodes_idle(started + timeout):
            raise RuntimeError("the Slurm test bed did not come up:\n" + self.logs())
        self.bring_up_seconds = time.monotonic() - started

    def _start_munge(self):
        key = self.base / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.daemons.append(subprocess.Popen(
            ["munged", "-F", "--force", f"--socket={self.base}/munge.sock", f"--key-file={key}",
             f"--pid-file={self.base}/munged.pid", f"--log-file={self.base}/munged.log",
             f"--seed-file={self.base}/munged.seed"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True))
        deadline = time.monotonic() + 5
        while not (self.base / "munge.sock").exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    def _make_namespace(self, name):
        """A process in new network, UTS and mount namespaces with the bed's /etc/hosts and /etc/slurm."""
        own_cgroup = f"mount --bind {self.cgroup / name} {CGROUP_V1} && " if self.cgroup and name in NODES else ""
        script = (f"mount --make-rprivate / && mount --bind {self.base}/etc/hosts /etc/hosts && {own_cgroup}"
                  f"mkdir -p /etc/slurm && mount --bind {self.base}/etc /etc/slurm && hostname {name} && "
                  f"ip link set lo up && echo ready && exec sleep infinity")
        holder = subprocess.Popen(["unshare", "--net", "--uts", "--mount", "--", "sh", "-c", script],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, text=True)
        line = holder.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"namespace {name}: {line}{holder.stdout.read()}")
        self.holders[name] = holder

    def _wire(self):
        """The bridge in ctl's namespace, and a veth pair from it into each node's namespace."""
        ctl = ["nsenter", "-t", str(self.holders["ctl"].pid), "-n", "--"]
        commands = [ctl + ["ip", "link", "add", "br0", "type", "bridge"],
                    ctl + ["ip", "addr", "add", f"{CTL_ADDR}/24", "dev", "br0"],
                    ctl + ["ip", "link", "set", "br0", "up"]]
        for node, addr in NODES.items():
            inside = ["nsenter", "-t", str(self.holders[node].pid), "-n", "--"]
            commands += [ctl + ["ip", "link", "add", f"v{node}", "type", "veth", "peer", "name", "eth0",
                                "netns", str(self.holders[node].pid)],
                         ctl + ["ip", "link", "set", f"v{node}", "master", "br0", "up"],
                         inside + ["ip", "addr", "add", f"{addr}/24", "dev", "eth0"],
                         inside + ["ip", "link", "set", "eth0", "up"]]
        for command in commands:
            subprocess.run(command, check=True, capture_output=True)

    def _daemon(self, where, argv):
        self.daemons.append(subprocess.Popen(self.enter(where) + argv, stdout=subprocess.DEVNULL,
                                             stderr=subprocess.DEVNULL, start_new_session=True))

    def _nodes_idle(self, deadline):
        while time.monotonic() < deadline:
            out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True)
            states = dict(line.split() for line in out.stdout.splitlines() if line.strip())
            if all(states.get(n) == "idle" for n in NODES):
                return True
            time.sleep(0.1)
        return False

    # -- use --------------------------------------------------------------------------------

    def enter(self, where="ctl"):
        """The argv prefix that runs a command inside a namespace of the bed (ctl: the clients')."""
        return ["nsenter", "-t", str(self.holders[where].pid), "-n", "-u", "-m", "--"]

    def run(self, argv, **kwargs):
        return subprocess.run(self.enter() + [str(a) for a in argv], **kwargs)

    def popen(self, argv, **kwargs):
        """nsenter execs the command: the Popen's pid is the command's own."""
        return subprocess.Popen(self.enter() + [str(a) for a in argv], **kwargs)

    def namespace_processes(self, where=None):
        """Pids of every process in the bed's network namespaces (or in one), its holders excepted."""
        holders = {h.pid for h in self.holders.values()}
        wanted = {os.readlink(f"/proc/{h.pid}/ns/net") for n, h in self.holders.items() if where in (None, n)}
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit() or int(proc.name) in holders:
                continue
            try:
                if os.readlink(proc / "ns" / "net") in wanted:
                    found.append(int(proc.name))
            except OSError:
                continue
        return found

    def step_processes(self):
        """The tasks and slurmstepds still alive on the nodes."""
        pids = []
        for pid in self.namespace_processes("node1") + self.namespace_processes("node2"):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() != "slurmd":
                    pids.append(pid)
            except OSError:
                pass
        return pids

    def wait_for_steps(self, tasks, timeout=20):
        """Until `tasks` tasks (processes under slurmstepd) run on the nodes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.tasks()) >= tasks:
                return True
            time.sleep(0.05)
        return False

    def tasks(self):
        """The task processes (children of a slurmstepd) alive on the nodes."""
        steps = {p for p in self.step_processes() if _comm(p) == "slurmstepd"}
        return [p for p in self.step_processes() if _ppid(p) in steps]

    def logs(self):
        text = ""
        for log in sorted(self.base.glob("*.log")):
            text += f"--- {log.name}\n" + log.read_text(errors="replace")[-4000:]
        return text

    # -- teardown ---------------------------------------------------------------------------

    def stop(self):
        for proc in reversed(self.daemons):
            _kill_group(proc, signal.SIGTERM)
        for proc in reversed(self.daemons):
            _reap(proc)
        for pid in self.namespace_processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for holder in self.holders.values():  # the last process of each namespace: the veths and bridge go with it
            _kill_group(holder, signal.SIGKILL)
            _reap(holder)
        if self.cgroup:
            _remove_cgroup(self.cgroup)
        shutil.rmtree(self.base, ignore_errors=True)


def _remove_cgroup(top):
    """The bed's memory cgroups, deepest first, after killing anything still in them."""
    for _ in range(50):
        dirs = sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: len(d.parts), reverse=True) + [top]
        for d in dirs:
            try:
                for pid in (d / "cgroup.procs").read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        for d in dirs:
            try:
                d.rmdir()
            except OSError:
                pass
        if not top.exists():
            return
        time.sleep(0.1)


def _kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def _reap(proc):
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _kill_group(proc, signal.SIGKILL)
        proc.wait(timeout=5)


def _comm(pid):
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _ppid(pid):
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0
