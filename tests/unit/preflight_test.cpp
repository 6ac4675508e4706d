#include <catch2/catch.hpp>

#include "preflight/checks.hpp"
#include "preflight/cluster.hpp"
#include "preflight/host.hpp"
#include "preflight/tenants.hpp"

using namespace sg;
using namespace sg::preflight;

namespace {

GpuInfo gpu(std::string name, std::string cap) {
    GpuInfo g;
    g.name = std::move(name);
    g.compute_cap = std::move(cap);
    g.driver_version = "580.95.05";
    return g;
}

Hardware spark() {
    Hardware hw;
    hw.gpus = {gpu("NVIDIA GB10", "12.1")};
    hw.cuda_version = "13.0";
    hw.cpu_arch = "aarch64";
    hw.platform = "dgx-spark";
    hw.platform_profile = "dgx-spark";
    return hw;
}

TorchReading torch_build(std::optional<std::string> cuda, std::vector<std::string> arch_list = {}) {
    TorchReading t;
    t.python = "python3";
    t.torch_version = "2.9.0";
    t.cuda = std::move(cuda);
    t.arch_list = std::move(arch_list);
    return t;
}

MemInfo pool(double total_gb, double available_gb, double cached_gb) {
    MemInfo m;
    m.total = total_gb * 1e9;
    m.available = available_gb * 1e9;
    m.free = (available_gb - cached_gb) * 1e9;
    m.cached = cached_gb * 1e9;
    return m;
}

}  // namespace

TEST_CASE("hardware identity: a DGX Spark, a discrete card, a GB10 that is not a Spark, none", "[preflight]") {
    Check ok = check_hardware(spark());
    CHECK(ok.value == "info: NVIDIA GB10 (compute 12.1, Blackwell), driver 580.95.05, CUDA 13.0, aarch64");
    CHECK(ok.details["gpus"][0]["architecture"] == "Blackwell");

    Hardware odd = spark();
    odd.cpu_arch = "x86_64";
    CHECK(check_hardware(odd).value == "warn: a GB10, but the CPU is x86_64, not aarch64: not a DGX Spark as known");

    Hardware card;
    card.gpus = {gpu("NVIDIA GeForce RTX 4090", "8.9"), gpu("NVIDIA GeForce RTX 4090", "8.9")};
    card.cpu_arch = "x86_64";
    CHECK_THAT(check_hardware(card).value, Catch::StartsWith("info: 2 x NVIDIA GeForce RTX 4090 (compute 8.9, Ada Lovelace)"));

    Hardware none;
    none.gpu_problem = "nvidia-smi: not found";
    CHECK(check_hardware(none).value == "skip: no NVIDIA GPU (nvidia-smi: not found)");
}

TEST_CASE("architectures and kernels for a compute capability", "[preflight]") {
    CHECK(gpu_architecture("12.1") == "Blackwell");
    CHECK(gpu_architecture("9.0") == "Hopper");
    CHECK(gpu_architecture("8.6") == "Ampere");
    CHECK(gpu_architecture("7.5") == "Turing");
    CHECK(gpu_architecture("x") == "");
    CHECK(has_kernels_for({"sm_80", "sm_90", "sm_120"}, "12.1"));  // same major, older minor runs
    CHECK_FALSE(has_kernels_for({"sm_80", "sm_90"}, "12.1"));
    CHECK(has_kernels_for({"sm_80", "compute_90"}, "12.1"));       // PTX JIT
    CHECK_FALSE(has_kernels_for({"sm_90a", "sm_100a"}, "12.1"));    // arch-specific only
    CHECK(has_kernels_for({"sm_90a"}, "9.0"));
    CHECK_FALSE(has_kernels_for({"sm_121"}, "12.0"));
}

TEST_CASE("G1: the trainer's PyTorch against the driver", "[preflight]") {
    const Hardware hw = spark();
    CHECK(check_cuda_abi(torch_build("12.8", {"sm_90", "sm_100", "sm_120"}), hw).value == "pass");
    CHECK(check_cuda_abi(torch_build("13.0", {"sm_121"}), hw).value == "pass");

    Check newer = check_cuda_abi(torch_build("14.0"), hw);
    CHECK(newer.value == "fail");
    CHECK_THAT(newer.details["why"].get<std::string>(), Catch::Contains("the driver is too old"));

    CHECK_THAT(check_cuda_abi(torch_build("13.2"), hw).value, Catch::StartsWith("warn: ") && Catch::Contains("minor-version"));

    Check no_kernels = check_cuda_abi(torch_build("12.6", {"sm_80", "sm_90"}), hw);
    CHECK(no_kernels.value == "fail");
    CHECK_THAT(no_kernels.details["why"].get<std::string>(), Catch::Contains("no kernels for compute capability 12.1"));

    Check cpu_build = check_cuda_abi(torch_build(std::nullopt), hw);
    CHECK(cpu_build.value == "fail");
    CHECK_THAT(cpu_build.details["why"].get<std::string>(), Catch::Contains("CPU-only build (torch.version.cuda is None)"));
    CHECK(check_cuda_abi(torch_build(std::nullopt), Hardware{}).value ==
          "info: PyTorch 2.9.0, a CPU-only build (torch.version.cuda is None), and no GPU here");

    TorchReading missing;
    missing.python = "python3";
    missing.problem = "no PyTorch in /usr/bin/python3 (ModuleNotFoundError: No module named 'torch')";
    CHECK(check_cuda_abi(missing, hw).value == "skip: " + *missing.problem);

    TorchReading unavailable = torch_build("12.8", {"sm_120"});
    unavailable.cuda_available = false;
    CHECK(check_cuda_abi(unavailable, hw).value == "fail");
}

TEST_CASE("the PyTorch probe's JSON line", "[preflight]") {
    auto cpu = parse_torch_probe("some warning\n{\"python\": \"/usr/bin/python3\", \"torch\": \"1.13.0a0\", \"cuda\": null, "
                                 "\"arch_list\": [], \"cuda_available\": false}\n",
                                 "/usr/bin/python3");
    CHECK_FALSE(cpu.problem);
    CHECK(cpu.torch_version == "1.13.0a0");
    CHECK_FALSE(cpu.cuda);
    CHECK(cpu.cuda_available == false);
    auto none = parse_torch_probe("{\"python\": \"/usr/bin/python3\", \"error\": \"ModuleNotFoundError: No module named 'torch'\"}", "python3");
    CHECK(none.problem == "no PyTorch in /usr/bin/python3 (ModuleNotFoundError: No module named 'torch')");
    CHECK(parse_torch_probe("Traceback", "python3").problem->find("printed no JSON") != std::string::npos);
}

TEST_CASE("the trainer's interpreter: python itself, a console script's #! line, else python3", "[preflight]") {
    CHECK(trainer_python({"/opt/venv/bin/python3.12", "train.py"}, "") == "/opt/venv/bin/python3.12");
    CHECK(trainer_python({"torchrun", "--nproc_per_node", "1", "train.py"}, "#!/opt/venv/bin/python") == "/opt/venv/bin/python");
    CHECK(trainer_python({"accelerate", "launch"}, "#!/usr/bin/env python3") == "python3");
    CHECK(trainer_python({"./train.sh"}, "#!/bin/bash") == "python3");
    CHECK(trainer_python({}, "") == "python3");
    CHECK(trainer_python({"python-config"}, "") == "python3");
}

TEST_CASE("G3: memory from /proc/meminfo: page cache on one pool, huge pages", "[preflight]") {
    CHECK(check_memory(pool(128, 110, 2), true).value == "pass");
    Check cached = check_memory(pool(128, 110, 14), true);
    CHECK_THAT(cached.value, Catch::StartsWith("warn: 14GB page cache"));
    CHECK(cached.details["page_cache_gb"] == Approx(14));
    CHECK(check_memory(pool(128, 110, 14), false).value == "pass");  // a discrete card's host RAM
    MemInfo huge = pool(128, 100, 1);
    huge.hugepages_total = 16e9;
    huge.hugepages_free = 16e9;
    CHECK(check_memory(huge, true).value == "warn: 16.0GB reserved as huge pages (16.0GB of them free)");
    CHECK_THAT(check_memory(std::nullopt, true).value, Catch::StartsWith("skip: "));
}

TEST_CASE("G3 with a GPU in the pool: a large /dev/shm and swap are warned about", "[preflight]") {
    CHECK(check_memory(pool(128, 110, 2), true, 16e9, true).value == "pass");
    CHECK(check_memory(pool(128, 110, 2), true, 64e9, true).value ==
          "warn: /dev/shm may grow to 64GB (50% of the pool), carved from the same unified memory the GPU uses");
    CHECK(check_memory(pool(128, 110, 2), false, 64e9, false).value == "pass");  // a discrete card's host RAM
    CHECK(check_memory(pool(128, 110, 2), true, 64e9, false).value == "pass");   // no GPU: plain RAM
    MemInfo swapping = pool(128, 110, 2);
    swapping.swap_total = 16e9;
    CHECK_THAT(check_memory(swapping, true, std::nullopt, true).value, Catch::StartsWith("warn: 16.0GB of swap on unified memory"));
    CHECK(check_memory(swapping, false).value == "pass");
}

TEST_CASE("G4: the GPU now", "[preflight]") {
    telemetry::GpuSample idle{0, 41.0, 11.62, std::nullopt, 208.0, 0.0, 0x1};
    CHECK(check_gpu_now({idle}, "", 100.0).value == "info: 41 C, 11.6 W of a 100 W cap, 0% busy");
    telemetry::GpuSample busy{0, 88.0, 98.0, std::nullopt, 2400.0, 97.0, 0x4 | 0x20};
    CHECK(check_gpu_now({busy}, "", 100.0).value ==
          "warn: already 88 C before training; already 97% busy; already drawing 98 W of a 100 W cap; "
          "clocks held down now: sw_power_cap|sw_thermal_slowdown");
    CHECK(check_gpu_now({}, "nvidia-smi: not found", std::nullopt).value == "skip: no GPU telemetry (nvidia-smi: not found)");
}

TEST_CASE("G6: other tenants", "[preflight]") {
    auto apps = parse_compute_apps("3858903, VLLM::EngineCore, 6265\n27220, /usr/bin/python3, [N/A]\n");
    REQUIRE(apps);
    REQUIRE(apps->size() == 2);
    CHECK(apps->at(0).name == "VLLM::EngineCore");
    CHECK(apps->at(0).used_mib == 6265);
    CHECK_FALSE(apps->at(1).used_mib);
    CHECK(parse_compute_apps("")->empty());
    CHECK_FALSE(parse_compute_apps("x, y, 1\n"));

    CHECK(tenant_kind("VLLM::EngineCor", {"VLLM::EngineCore"}) == "vllm");
    CHECK(tenant_kind("python3", {"python3", "-m", "vllm.entrypoints.openai.api_server"}) == "vllm");
    CHECK(tenant_kind("ollama", {"/usr/local/bin/ollama", "serve"}) == "ollama");
    CHECK(tenant_kind("python3", {"python3", "-m", "sglang.launch_server", "--model-path", "x"}) == "sglang");
    CHECK(tenant_kind("llama-server", {"./llama-server", "-m", "m.gguf"}) == "llama.cpp");
    CHECK(tenant_kind("torchrun", {"/venv/bin/torchrun", "--nproc_per_node", "1", "sft.py"}) == "trainer");
    CHECK(tenant_kind("python", {"python", "-u", "scripts/finetune_llama.py"}) == "trainer");
    CHECK(tenant_kind("python3", {"python3", "-m", "trl", "sft"}) == "trainer");
    CHECK_FALSE(tenant_kind("python3", {"python3", "-m", "pytest", "test_training.py"}));
    CHECK_FALSE(tenant_kind("python3", {"python3", "serve.py"}));
    CHECK_FALSE(tenant_kind("bash", {"bash"}));
    CHECK(memory_fraction({"vllm", "serve", "m", "--gpu-memory-utilization", "0.9"}) == 0.9);
    CHECK(memory_fraction({"python", "-m", "sglang.launch_server", "--mem-fraction-static=0.8"}) == 0.8);
    CHECK_FALSE(memory_fraction({"ollama", "serve"}));

    CHECK(check_tenants({}, "").value == "pass");
    Tenant vllm;
    vllm.pid = 4242;
    vllm.kind = "vllm";
    vllm.rss_gb = 3.5;
    vllm.gpu_memory_gb = 20.48;
    vllm.memory_fraction = 0.9;
    vllm.on_gpu = true;
    Tenant ollama;
    ollama.pid = 77;
    ollama.kind = "ollama";
    CHECK(check_tenants({vllm, ollama}, "").value ==
          "warn: 2 other tenants: vllm (pid 4242, 20.5 GB on the GPU, 3.5 GB resident, capped at 90% of GPU memory), ollama (pid 77)");
}

TEST_CASE("G9: container or bare metal, and a container's memory limit", "[preflight]") {
    ContainerEvidence docker;
    docker.dockerenv = true;
    docker.cgroup_v1_limit = "9223372036854771712\n";
    ContainerInfo info = judge_container(docker);
    CHECK(info.container);
    CHECK(info.kind == "docker");
    CHECK_FALSE(info.memory_limit_gb);
    CHECK(check_container(info, pool(128, 100, 1)).value == "info: container (docker: /.dockerenv exists)");

    ContainerEvidence k8s;
    k8s.pid1_cgroup = "0::/kubepods/burstable/pod1234/abcd\n";
    k8s.cgroup_v2_max = "34359738368\n";
    ContainerInfo limited = judge_container(k8s);
    CHECK(limited.kind == "kubernetes");
    CHECK(limited.memory_limit_gb == Approx(34.36).epsilon(0.001));
    CHECK_THAT(check_container(limited, pool(128, 100, 1)).value,
               Catch::StartsWith("warn: a kubernetes container limited to 34.4 GB of the 128.0 GB pool"));

    ContainerEvidence lxc;
    lxc.pid1_environ = std::string("HOME=/\0container=lxc\0", 22);
    CHECK(judge_container(lxc).kind == "lxc");

    ContainerEvidence bare;
    bare.pid1_cgroup = "0::/init.scope\n";
    bare.cgroup_v2_max = "max\n";
    ContainerInfo metal = judge_container(bare);
    CHECK_FALSE(metal.container);
    CHECK(check_container(metal, pool(128, 100, 1)).value == "info: bare metal");
}

TEST_CASE("G10: machines and tensor parallelism", "[preflight]") {
    auto settings = [](std::vector<std::string> argv, std::map<std::string, std::string> env,
                       std::vector<ConfigText> configs = {}) { return read_cluster_settings(argv, env, configs); };

    ClusterSettings single = settings({"python", "train.py"}, {});
    CHECK(machines(single, 1) == 1);
    CHECK(check_cluster(single, 1).value == "pass");

    ClusterSettings tp_across = settings({"python", "train.py", "--tensor_parallel_size", "2"}, {{"WORLD_SIZE", "2"}});
    CHECK(tp_across.tensor_parallel == 2);
    CHECK(machines(tp_across, 1) == 2);
    Check across = check_cluster(tp_across, 1);
    CHECK(across.value == "fail");
    CHECK_THAT(across.details["why"].get<std::string>(), Catch::StartsWith("tensor parallelism across machines"));
    CHECK(across.details["evidence"] == nlohmann::json({"WORLD_SIZE=2", "--tensor_parallel_size 2"}));

    ClusterSettings ddp = settings({"torchrun", "--nnodes=2", "--nproc_per_node=1", "train.py"}, {});
    CHECK(ddp.nnodes == 2);
    CHECK(check_cluster(ddp, 1).value == "info: 2 machines, data parallel (--nnodes 2, --nproc_per_node 1)");

    CHECK(settings({"torchrun", "--nnodes", "1:4", "t.py"}, {}).nnodes == 4);
    CHECK(settings({"python", "t.py", "--tp=2"}, {{"NNODES", "2"}}).tensor_parallel == 2);
    CHECK(settings({"python", "megatron.py", "model.tensor_model_parallel_size=4", "trainer.num_nodes=2"}, {}).tensor_parallel == 4);
    CHECK(settings({"accelerate", "launch", "--config_file", "acc.yaml", "t.py"}, {},
                   {{"acc.yaml", "compute_environment: LOCAL_MACHINE\nnum_machines: 2\n"}})
              .nnodes == 2);
    CHECK(settings({"deepspeed", "t.py"}, {}, {{"ds.json", "{\n  \"tensor_parallel\": {\n    \"tp_size\": 2\n  }\n}"}}).tensor_parallel == 2);

    // sharded states: FSDP full sharding, DeepSpeed ZeRO-3; plain DDP and ZeRO-2 keep full replicas of the weights
    CHECK(settings({"torchrun", "t.py", "--fsdp", "full_shard auto_wrap"}, {}).sharded_by == "--fsdp full_shard auto_wrap");
    CHECK(settings({"accelerate", "launch", "--use_fsdp", "t.py"}, {}).sharded_by == "--use_fsdp");
    CHECK(settings({"accelerate", "launch", "--config_file", "a.yaml", "t.py"}, {},
                   {{"a.yaml", "compute_environment: LOCAL_MACHINE\ndistributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"}})
              .sharded_by == "a.yaml: distributed_type: FSDP");
    CHECK(settings({"axolotl", "train", "c.yml"}, {}, {{"c.yml", "base_model: x\nfsdp:\n  - full_shard\n  - auto_wrap\n"}}).sharded_by ==
          "c.yml: - full_shard");
    CHECK(settings({"deepspeed", "t.py"}, {}, {{"ds.json", "{\n  \"zero_optimization\": {\n    \"stage\": 3,\n"}}).sharded_by ==
          "ds.json: \"stage\": 3,");
    CHECK(settings({"deepspeed", "t.py"}, {}, {{"ds.json", "{\n  \"zero_optimization\": {\n    \"stage\": 2,\n"}}).sharded_by.empty());
    CHECK(settings({"torchrun", "t.py", "--fsdp", ""}, {}).sharded_by.empty());
    CHECK(settings({"torchrun", "--nnodes=2", "t.py"}, {}).sharded_by.empty());

    ClusterSettings tp_one_machine = settings({"python", "t.py", "--tp", "2"}, {});
    CHECK(check_cluster(tp_one_machine, 2).value == "pass");
    Check too_wide = check_cluster(tp_one_machine, 1);
    CHECK(too_wide.value == "fail");
    CHECK(too_wide.details["why"] == "tensor parallel size 2 needs 2 GPUs; this machine has 1");

    ClusterSettings local = settings({"t.py"}, {{"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "8"}});
    CHECK(machines(local, 8) == 1);
    CHECK(config_file_arguments({"accelerate", "launch", "--config_file", "a.yaml", "--deepspeed=ds.json", "t.py", "c.toml"}) ==
          std::vector<std::string>{"a.yaml", "ds.json", "c.toml"});
}

TEST_CASE("disk where checkpoints go; dropping caches", "[preflight]") {
    DiskReading disk{"/ckpt", "the current directory", "/ckpt", 50.0, ""};
    CHECK(check_disk(disk, std::nullopt).value == "pass");
    CHECK(check_disk(disk, 5.0).value == "pass");
    CHECK_THAT(check_disk(disk, 20.0).value, Catch::StartsWith("warn: 50.0 GB free at /ckpt: room for fewer than 3"));
    Check full = check_disk(disk, 60.0);
    CHECK(full.value == "fail");
    CHECK(full.details["why"] == "50.0 GB free at /ckpt: less than one checkpoint (60.0 GB)");
    DiskReading small{"/ckpt", "the current directory", "/ckpt", 4.0, ""};
    CHECK(check_disk(small, std::nullopt).value == "warn: 4.0 GB free at /ckpt");
    DiskReading unknown{"/ckpt", "x", "/", std::nullopt, "/: Permission denied"};
    CHECK_THAT(check_disk(unknown, std::nullopt).value, Catch::StartsWith("skip: "));

    CHECK(check_drop_caches("", true).value == "pass");
    CHECK(check_drop_caches("not root: cannot write /proc/sys/vm/drop_caches", true).value ==
          "warn: not root: cannot write /proc/sys/vm/drop_caches: the OOM ladder's drop-caches rung will be skipped");
    CHECK_THAT(check_drop_caches("not root: cannot write /proc/sys/vm/drop_caches", false).value, Catch::StartsWith("info: "));
}

TEST_CASE("the verdict", "[preflight]") {
    std::map<std::string, Check> checks = {{"G3", {"pass", {}}}, {"G9", {"info: bare metal", {}}}};
    CHECK(verdict(checks, true) == "ready");
    CHECK(verdict(checks, false) == "blocked");
    checks["G1"] = {"skip: no PyTorch", {}};
    CHECK(verdict(checks, true) == "ready-with-warnings");
    checks["G10"] = {"fail", {}};
    CHECK(verdict(checks, true) == "blocked");
}
