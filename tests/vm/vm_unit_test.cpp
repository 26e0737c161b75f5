// Pure parts of the vm module: domain XML, pinning, host capabilities, console scanning.
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>

#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/files.hpp"
#include "vm/console.hpp"
#include "vm/connection.hpp"
#include "vm/control_channel.hpp"
#include "vm/doctor.hpp"
#include "vm/interrupt.hpp"
#include "vm/file_follower.hpp"
#include "vm/topology_check.hpp"
#include "vm/vcpu_state.hpp"
#include "vm/domain_xml.hpp"
#include "vm/embed_root.hpp"
#include "vm/host_topology.hpp"
#include "vm/pinning.hpp"
#include "vm/reaper.hpp"
#include "scratch.hpp"

using namespace smtlab;
using namespace smtlab::vm;

namespace {

DomainSpec basic_spec() {
  DomainSpec s;
  s.name = "smtlab-cell-vm0-abcdef";
  s.topology = {1, 1, 2, 2};
  s.memory_mib = 2048;
  s.kernel = "/k/vmlinuz";
  s.initrd = "/k/initrd";
  s.cmdline = "console=ttyS0 panic=-1";
  s.console_log = "/r/console.log";
  s.results_channel = "/r/results";
  return s;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("xml_escape escapes markup and refuses control characters", "[xml]") {
  CHECK(xml_escape("a<b>&\"c'd") == "a&lt;b&gt;&amp;&quot;c&apos;d");
  CHECK(xml_escape("$(rm -rf /) `x` ; |") == "$(rm -rf /) `x` ; |");
  CHECK(xml_escape("tab\tok") == "tab\tok");
  CHECK_THROWS_AS(xml_escape(std::string("nul\0x", 5)), Error);
  CHECK_THROWS_AS(xml_escape("esc\x1b[0m"), Error);
}

TEST_CASE("domain names are validated", "[xml]") {
  CHECK_NOTHROW(validate_domain_name("smtlab-3f2a9c01d4e5-vm0-a1b2c3"));
  CHECK_THROWS_AS(validate_domain_name(""), Error);
  CHECK_THROWS_AS(validate_domain_name("a/b"), Error);
  CHECK_THROWS_AS(validate_domain_name("a\nb"), Error);
  CHECK_THROWS_AS(validate_domain_name(" lead"), Error);
  CHECK_THROWS_AS(validate_domain_name(std::string(101, 'a')), Error);
  auto a = unique_domain_name("3f2a9c01d4e5", 1);
  auto b = unique_domain_name("3f2a9c01d4e5", 1);
  CHECK(a.rfind("smtlab-3f2a9c01d4e5-vm1-", 0) == 0);
  CHECK(a.size() == std::string("smtlab-3f2a9c01d4e5-vm1-").size() + 6);
  CHECK(a != b);
  CHECK_THROWS_AS(unique_domain_name("bad/cell", 0), Error);
}

TEST_CASE("domain XML carries topology, boot, devices and lifecycle policy", "[xml]") {
  auto s = basic_spec();
  s.vcpu_pins = {"0", "1", "2", "3"};
  s.emulator_pin = "4-5";
  s.disk = "/r/overlay.qcow2";
  s.control_socket = "/r/control.sock";
  auto x = domain_xml(s);
  CHECK(has(x, "<domain type='qemu'>"));
  CHECK(has(x, "<name>smtlab-cell-vm0-abcdef</name>"));
  CHECK(has(x, "<memory unit='MiB'>2048</memory>"));
  CHECK(has(x, "<vcpu placement='static'>4</vcpu>"));
  CHECK(has(x, "<model fallback='forbid'>Nehalem</model>"));
  CHECK(has(x, "<topology sockets='1' dies='1' cores='2' threads='2'/>"));
  CHECK(has(x, "<vcpupin vcpu='3' cpuset='3'/>"));
  CHECK(has(x, "<emulatorpin cpuset='4-5'/>"));
  CHECK(has(x, "<kernel>/k/vmlinuz</kernel>"));
  CHECK(has(x, "<initrd>/k/initrd</initrd>"));
  CHECK(has(x, "<cmdline>console=ttyS0 panic=-1</cmdline>"));
  CHECK(has(x, "<driver name='qemu' type='qcow2'"));
  CHECK(has(x, "<source file='/r/overlay.qcow2'/>"));
  CHECK(has(x, "<target dev='vda' bus='virtio'/>"));
  CHECK(has(x, "<serial type='file'>"));
  CHECK(has(x, "<source path='/r/console.log'/>"));
  CHECK(has(x, "<target type='virtio' name='org.smtlab.results.0'/>"));
  CHECK(has(x, "<source mode='bind' path='/r/control.sock'/>"));
  CHECK(has(x, "<target type='virtio' name='org.smtlab.control.0'/>"));
  CHECK(has(x, "<memballoon model='none'/>"));
  CHECK(has(x, "<on_poweroff>destroy</on_poweroff>"));
  CHECK(has(x, "<on_reboot>destroy</on_reboot>"));
  CHECK(has(x, "<on_crash>destroy</on_crash>"));
  CHECK_FALSE(has(x, "<interface"));
  s.network = true;
  CHECK(has(domain_xml(s), "<interface type='user'>"));
}

TEST_CASE("domain XML puts every device on the root bus, so libvirt adds no PCIe root ports", "[xml]") {
  auto s = basic_spec();
  s.disk = "/r/overlay.qcow2";
  s.network = true;
  auto x = domain_xml(s);
  // One address per device (disk, the virtio-serial controller of the channels, the NIC), each on
  // bus 0 in its own slot; no device is left for libvirt to place behind a root port.
  auto count = [&](const std::string& needle) {
    size_t n = 0;
    for (size_t at = x.find(needle); at != std::string::npos; at = x.find(needle, at + 1)) ++n;
    return n;
  };
  CHECK(count("<address type='pci'") == 3);
  CHECK(count("bus='0x00'") == 3);
  CHECK(has(x, "<controller type='virtio-serial' index='0'><address type='pci' domain='0x0000' bus='0x00' slot='0x03'"));
  for (const char* slot : {"slot='0x02'", "slot='0x03'", "slot='0x04'"}) CHECK(count(slot) == 1);
  CHECK_FALSE(has(x, "pcie-root-port"));
  // Without channels there is no virtio-serial controller to place.
  s.results_channel.clear();
  s.control_socket.clear();
  CHECK_FALSE(has(domain_xml(s), "virtio-serial"));
}

TEST_CASE("domain XML asks for SCHED_BATCH on every vCPU and the emulator only when told", "[xml]") {
  auto s = basic_spec();
  CHECK_FALSE(has(domain_xml(s), "<cputune>"));
  CHECK_FALSE(has(domain_xml(s), "sched"));
  s.thread_sched = ThreadSched::batch;
  auto x = domain_xml(s);
  CHECK(has(x, "<cputune>\n    <vcpusched vcpus='0-3' scheduler='batch'/>\n    <emulatorsched scheduler='batch'/>\n  </cputune>"));
  // With pins, the same <cputune> carries both.
  s.vcpu_pins = {"0", "0", "1", "1"};
  x = domain_xml(s);
  CHECK(has(x, "<vcpupin vcpu='3' cpuset='1'/>"));
  CHECK(has(x, "<vcpusched vcpus='0-3' scheduler='batch'/>"));
  CHECK(to_string(ThreadSched::batch) == "batch");
  CHECK(to_string(ThreadSched::normal) == "normal");
}

TEST_CASE("domain XML under KVM uses host-passthrough", "[xml]") {
  auto s = basic_spec();
  s.accel = Accel::kvm;
  auto x = domain_xml(s);
  CHECK(has(x, "<domain type='kvm'>"));
  CHECK(has(x, "<cpu mode='host-passthrough'"));
  CHECK_FALSE(has(x, "Nehalem"));
}

TEST_CASE("hostile strings are escaped in the domain XML", "[xml]") {
  auto s = basic_spec();
  s.cmdline = "a=\"q\" b='s' c=<x>&y $(reboot) d e";
  s.kernel = "/dir with spaces/it's <k>&.bz";
  auto x = domain_xml(s);
  CHECK(has(x, "<cmdline>a=&quot;q&quot; b=&apos;s&apos; c=&lt;x&gt;&amp;y $(reboot) d e</cmdline>"));
  CHECK(has(x, "<kernel>/dir with spaces/it&apos;s &lt;k&gt;&amp;.bz</kernel>"));
  CHECK_FALSE(has(x, "<x>"));
}

TEST_CASE("invalid specs are refused with the field named", "[xml]") {
  auto s = basic_spec();
  s.kernel = "relative/vmlinuz";
  CHECK_THROWS_WITH(domain_xml(s), Catch::Contains("kernel must be an absolute path"));
  s = basic_spec();
  s.vcpu_pins = {"0", "1"};
  CHECK_THROWS_WITH(domain_xml(s), Catch::Contains("2 vCPU pins for 4 vCPUs"));
  s = basic_spec();
  s.vcpu_pins = {"0", "1", "2", "3'/><evil/>"};
  CHECK_THROWS_AS(domain_xml(s), Error);
  s = basic_spec();
  s.topology.threads = 0;
  CHECK_THROWS_AS(domain_xml(s), Error);
  s = basic_spec();
  s.control_socket = "/" + std::string(120, 'x');
  CHECK_THROWS_WITH(domain_xml(s), Catch::Contains("UNIX sockets"));
  s = basic_spec();
  s.uuid = "not-a-uuid";
  CHECK_THROWS_AS(domain_xml(s), Error);
  s.uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  CHECK(has(domain_xml(s), "<uuid>0f8fad5b-d9cb-469f-a165-70867728950e</uuid>"));
}

TEST_CASE("host capabilities XML gives CPUs, siblings and the CPU model", "[host]") {
  const char* caps = R"(<capabilities>
  <host>
    <uuid>x</uuid>
    <cpu>
      <arch>x86_64</arch>
      <model>Skylake-Client-IBRS</model>
      <vendor>Intel</vendor>
      <topology sockets='1' dies='1' cores='2' threads='2'/>
    </cpu>
    <topology>
      <cells num='1'>
        <cell id='0'>
          <cpus num='4'>
            <cpu id='0' socket_id='0' die_id='0' core_id='0' siblings='0,2'/>
            <cpu id='1' socket_id='0' die_id='0' core_id='1' siblings='1,3'/>
            <cpu id='2' socket_id='0' die_id='0' core_id='0' siblings='0,2'/>
            <cpu id='3' socket_id='0' die_id='0' core_id='1' siblings='1,3'/>
          </cpus>
        </cell>
      </cells>
    </topology>
  </host>
  <guest><arch name='x86_64'/></guest>
</capabilities>)";
  auto h = parse_host_capabilities(caps);
  REQUIRE(h.cpus.size() == 4);
  CHECK(h.cpu_model == "Skylake-Client-IBRS");
  CHECK(h.cpu_vendor == "Intel");
  CHECK(h.arch == "x86_64");
  CHECK(h.cpus[2].core_id == 0);
  CHECK(h.cpus[2].siblings == std::vector<int>{0, 2});
  CHECK(h.threads_per_core() == 2);
  CHECK(h.smt());
  CHECK(h.cores() == 2);
  CHECK(h.describe() == "4 CPUs: 1 socket x 2 cores x 2 threads (SMT)");
  CHECK_THROWS_AS(parse_host_capabilities("<capabilities><host></host></capabilities>"), Error);
}

TEST_CASE("pinning on a 2-CPU host without SMT (like this machine)", "[pinning]") {
  auto host = HostTopology::uniform(1, 2, 1);
  REQUIRE_FALSE(host.smt());
  PinRequest r;
  r.topology = {1, 1, 1, 2};

  SECTION("none pins nothing") {
    auto p = plan_pinning(r, host);
    REQUIRE(p.vms.size() == 1);
    CHECK(p.vms[0].vcpus.empty());
    CHECK(p.vms[0].emulator.empty());
  }
  SECTION("vcpu: one host CPU each; emulators share when nothing is spare") {
    r.policy = PinPolicy::vcpu;
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "1"});
    CHECK(p.vms[0].emulator == "0-1");
    r.topology = {1, 1, 2, 2};
    CHECK_THROWS_WITH(plan_pinning(r, host), Catch::Contains("needs one host CPU per vCPU") &&
                                                 Catch::Contains("= 4") &&
                                                 Catch::Contains("are 2"));
  }
  SECTION("core without SMT: the threads of a virtual core share one host CPU") {
    r.policy = PinPolicy::core;
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "0"});
    CHECK(p.vms[0].emulator == "1");  // the CPU no vCPU is pinned to
    REQUIRE(p.notes.size() == 2);
    CHECK((has(p.notes[0], "siblings share") && has(p.notes[0], "(core 0 on host CPU(s) 0)")));
    r.topology = {1, 1, 2, 2};  // the smoke guest: core 0 on CPU 0, core 1 on CPU 1
    p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "0", "1", "1"});
    CHECK(p.vms[0].emulator == "0-1");
    CHECK(has(p.notes[0], "(core 0 on host CPU(s) 0, core 1 on host CPU(s) 1)"));
    r.vms = 2;  // four virtual cores on two host cores
    CHECK_THROWS_WITH(plan_pinning(r, host), Catch::Contains("one host core per virtual core") &&
                                                 Catch::Contains("= 4") &&
                                                 Catch::Contains("hold 2 core(s)"));
  }
  SECTION("shared: two 4-vCPU VMs over both CPUs (overcommit)") {
    r.policy = PinPolicy::shared;
    r.vms = 2;
    r.topology = {1, 1, 2, 2};
    auto p = plan_pinning(r, host);
    REQUIRE(p.vms.size() == 2);
    for (auto& vm : p.vms) {
      CHECK(vm.vcpus == std::vector<std::string>(4, "0-1"));
      CHECK(vm.emulator == "0-1");
    }
    CHECK(has(p.notes[0], "overcommit: 8 vCPUs share 2 host CPU(s)"));
  }
  SECTION("unknown host CPUs are refused") {
    r.policy = PinPolicy::vcpu;
    r.host_cpus = {1, 7};
    CHECK_THROWS_WITH(plan_pinning(r, host), Catch::Contains("host CPU 7 is not an online CPU"));
  }
}

TEST_CASE("pinning on an 8-CPU host with 4 cores x 2 threads", "[pinning]") {
  // Linux numbering with siblings apart: core k = CPUs k and k+4.
  auto host = HostTopology::uniform(1, 4, 2, /*siblings_apart=*/true);
  REQUIRE(host.cpus.size() == 8);
  REQUIRE(host.find(1)->siblings == std::vector<int>{1, 5});
  PinRequest r;

  SECTION("core: the two threads of each virtual core on the two threads of one host core") {
    r.policy = PinPolicy::core;
    r.topology = {1, 1, 2, 2};
    auto p = plan_pinning(r, host);
    CHECK(p.notes.size() == 1);  // where the emulators went; no sharing
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "4", "1", "5"});
    CHECK(p.vms[0].emulator == "2-3,6-7");  // the untouched cores
  }
  SECTION("core: two VMs get disjoint host cores; too many cores is an error") {
    r.policy = PinPolicy::core;
    r.vms = 2;
    r.topology = {1, 1, 2, 2};
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "4", "1", "5"});
    CHECK(p.vms[1].vcpus == std::vector<std::string>{"2", "6", "3", "7"});
    CHECK(p.vms[0].emulator == "0-1,4-5");  // nothing spare: alongside its own vCPUs
    CHECK(p.vms[1].emulator == "2-3,6-7");
    r.vms = 3;
    CHECK_THROWS_WITH(plan_pinning(r, host), Catch::Contains("one host core per virtual core") &&
                                                 Catch::Contains("= 6"));
  }
  SECTION("core with one thread per virtual core: one host core each, siblings left idle") {
    r.policy = PinPolicy::core;
    r.topology = {1, 1, 2, 1};
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "1"});
  }
  SECTION("a restricted host CPU set keeps emulators outside it") {
    r.policy = PinPolicy::core;
    r.topology = {1, 1, 1, 2};
    r.host_cpus = {0, 4};
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "4"});
    CHECK(p.vms[0].emulator == "1-3,5-7");
    r.host_cpus = {0, 1};  // two CPUs of different cores: no core has two threads in the set
    p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "0"});  // siblings share CPU 0
    CHECK(p.vms[0].emulator == "2-7");
    CHECK(has(p.notes[0], "(core 0 on host CPU(s) 0)"));
  }
  SECTION("vcpu: in CPU order, emulators on what is left") {
    r.policy = PinPolicy::vcpu;
    r.topology = {1, 1, 3, 1};
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"0", "1", "2"});
    CHECK(p.vms[0].emulator == "3-7");
  }
  SECTION("none with a host set: vCPUs float over it") {
    r.topology = {1, 1, 2, 1};
    r.host_cpus = {2, 3};
    auto p = plan_pinning(r, host);
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"2-3", "2-3"});
    CHECK(p.vms[0].emulator.empty());
  }
  SECTION("confined (recipe parallel): every thread of the guest stays inside its host CPUs") {
    r.confine_emulators = true;
    r.topology = {1, 1, 2, 1};
    r.host_cpus = {2, 3};
    auto p = plan_pinning(r, host);  // none: emulators float over the set as the vCPUs do
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"2-3", "2-3"});
    CHECK(p.vms[0].emulator == "2-3");
    r.policy = PinPolicy::vcpu;
    r.topology = {1, 1, 1, 1};
    p = plan_pinning(r, host);  // a spare CPU of the set takes them
    CHECK(p.vms[0].vcpus == std::vector<std::string>{"2"});
    CHECK(p.vms[0].emulator == "3");
    r.topology = {1, 1, 2, 1};
    p = plan_pinning(r, host);  // nothing spare: alongside the vCPUs, not on CPUs 0-1,4-7
    CHECK(p.vms[0].emulator == "2-3");
    r.policy = PinPolicy::shared;
    r.vms = 2;
    p = plan_pinning(r, host);
    CHECK(p.vms[1].emulator == "2-3");
  }
}

TEST_CASE("console scanning finds panics, oopses, BUGs and init errors with their lines", "[console]") {
  std::string text =
      "[    0.000000] Linux version 6.12\r\n"
      "smtlab-init: error: no device /dev/vda after 10 s\n"
      "[    1.0] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"
      "[    1.1] Oops: 0000 [#1] PREEMPT SMP NOPTI\n"
      "[    1.2] WARNING: CPU: 1 PID: 1 at kernel/foo.c:12 bar+0x1\n"
      "[    2.0] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009\n"
      "[    2.1] ---[ end Kernel panic - not syncing: Attempted to kill init! ]---\n";
  auto f = scan_console(text);
  REQUIRE(f.size() == 6);
  CHECK(f[0].kind == ConsoleProblem::init_error);
  CHECK(f[0].line_number == 2);
  CHECK(f[0].line == "smtlab-init: error: no device /dev/vda after 10 s");
  CHECK(f[1].kind == ConsoleProblem::bug);
  CHECK(f[2].kind == ConsoleProblem::oops);
  CHECK(f[3].kind == ConsoleProblem::warning);
  CHECK(f[4].kind == ConsoleProblem::panic);
  CHECK(f[5].kind == ConsoleProblem::panic);
  CHECK(is_fatal(f));
  CHECK(first_problem(f) ==
        "kernel panic: [    2.0] Kernel panic - not syncing: Attempted to kill init! exitcode=0x00000009");

  auto clean = scan_console("[ 0.1] booting\nsmtlab-guest: hello\n[ 1.0] WARNING: CPU: 0 PID: 1 at x\n");
  CHECK_FALSE(is_fatal(clean));
  CHECK(first_problem(clean).empty());
  CHECK(scan_console("").empty());
}

TEST_CASE("soft lockups and RCU stalls of a starved guest are noted, not fatal, other BUGs are", "[console]") {
  auto f = scan_console(
      "[   40.1] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [make:812]\n"
      "[   41.0] rcu: INFO: rcu_preempt self-detected stall on CPU\n"
      "[   42.0] BUG: workqueue lockup - pool cpus=0 node=0 flags=0x0 nice=0 stuck for 31s!\n"
      "[   43.0] WARNING: CPU: 0 PID: 1 at kernel/foo.c:12 bar+0x1\n");
  REQUIRE(f.size() == 4);
  CHECK(f[0].kind == ConsoleProblem::stall);
  CHECK(f[1].kind == ConsoleProblem::stall);
  CHECK(f[2].kind == ConsoleProblem::stall);
  CHECK_FALSE(is_fatal(f));
  auto notes = disturbances(f);
  REQUIRE(notes.size() == 4);
  CHECK(notes[0] == "kernel stall: [   40.1] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [make:812]");
  CHECK(notes[3].rfind("kernel warning: ", 0) == 0);
  CHECK(disturbances(f, 2).size() == 2);
  CHECK(is_fatal(scan_console("[ 1.0] BUG: unable to handle page fault for address: 0\n")));
}

TEST_CASE("a guest whose every CPU reported a soft lockup since its agent last wrote may have frozen", "[console]") {
  // As seen under TCG (Debian 6.1, 4 vCPUs, a static branch flipped while they ran through it).
  const std::string frozen =
      "[   63.9] RIP: 0010:asm_exc_int3+0x0/0x40\n"
      "[   64.5] watchdog: BUG: soft lockup - CPU#0 stuck for 23s! [true:2524]\n"
      "[   64.5] Modules linked in: virtio_blk\n"
      "[   64.5] CPU: 0 PID: 2524 Comm: true Not tainted 6.1.0-57-cloud-amd64 #1  Debian 6.1.192-3\n"
      "[   64.5] RIP: 0010:__schedule+0x91/0xa00\n"
      "[   64.6] watchdog: BUG: soft lockup - CPU#3 stuck for 23s! [true:2528]\n"
      "[   64.6] RIP: 0010:__schedule+0x91/0xa00\n"
      "[   88.6] watchdog: BUG: soft lockup - CPU#1 stuck for 45s! [true:2529]\n"
      "[   88.6] RIP: 0010:__schedule+0x91/0xa00\n"
      "[   88.6] watchdog: BUG: soft lockup - CPU#2 stuck for 45s! [sh:104]\n"
      "[   88.6] CPU: 2 PID: 104 Comm: sh\n"
      "[   88.6] RIP: 0010:__schedule+0x91/0xa00\n"
      "[   88.7] watchdog: BUG: soft lockup - CPU#0 stuck for 48s! [true:2524]\n";
  auto all = every_cpu_stuck(frozen, 4, 20);
  REQUIRE(all);
  CHECK(*all ==
        "CPU#0 stuck for 48 s at __schedule+0x91/0xa00, CPU#1 stuck for 45 s at __schedule+0x91/0xa00, CPU#2 stuck for 45 s at "
        "__schedule+0x91/0xa00, CPU#3 stuck for 23 s at __schedule+0x91/0xa00");
  CHECK_FALSE(every_cpu_stuck(frozen, 5, 20));   // one CPU never reported: it still schedules
  CHECK_FALSE(every_cpu_stuck(frozen, 4, 30));   // CPU#3 only 23 s
  CHECK_FALSE(every_cpu_stuck(frozen, 0, 20));
  CHECK_FALSE(every_cpu_stuck("", 1, 20));
  // The same CPU reported four times is one CPU.
  CHECK_FALSE(every_cpu_stuck(
      "BUG: soft lockup - CPU#1 stuck for 22s! [a:1]\nBUG: soft lockup - CPU#1 stuck for 44s! [a:1]\n", 2, 20));

  auto one = parse_soft_lockup("[ 40.1] watchdog: BUG: soft lockup - CPU#12 stuck for 23s! [make:812]");
  REQUIRE(one);
  CHECK(one->cpu == 12);
  CHECK(one->seconds == 23);
  // Guest text: malformed or absurd numbers are not reports.
  CHECK_FALSE(parse_soft_lockup("BUG: soft lockup - CPU# stuck for 23s!"));
  CHECK_FALSE(parse_soft_lockup("BUG: soft lockup - CPU#1 stuck for 23 s!"));
  CHECK_FALSE(parse_soft_lockup("BUG: soft lockup - CPU#99999999999 stuck for 23s!"));
  CHECK_FALSE(parse_soft_lockup("BUG: soft lockup - CPU#1 stuck for -3s!"));
  CHECK_FALSE(parse_soft_lockup("BUG: workqueue lockup - pool cpus=0 stuck for 31s!"));
}

TEST_CASE("an int3 oops is found among a guest's console findings, with the panic that follows it", "[console]") {
  // Debian 6.12 under TCG after a static branch flip (the panic comes from the oops in an interrupt).
  auto f = scan_console(
      "[    8.516580] Oops: int3: 0000 [#1] PREEMPT SMP PTI\n"
      "[    8.527170] RIP: 0010:update_curr_se+0x32/0x90\n"
      "[    8.531746] Kernel panic - not syncing: Fatal exception in interrupt\n");
  REQUIRE(int3_oops(f));
  CHECK(*int3_oops(f) == "[    8.516580] Oops: int3: 0000 [#1] PREEMPT SMP PTI");
  CHECK(first_problem(f) == "kernel panic: [    8.531746] Kernel panic - not syncing: Fatal exception in interrupt");
  CHECK_FALSE(int3_oops(scan_console("[ 1.0] Oops: general protection fault, probably for non-canonical address\n")));
  CHECK_FALSE(int3_oops(scan_console("[ 1.0] int3 mentioned in passing\n")));

  // Debian 6.1 says it without "Oops:" (seen under TCG, 2026-12-07: a flip loop's guest died of it).
  auto old_form = scan_console(
      "[   45.389371] int3: 0000 [#1] PREEMPT SMP PTI\n"
      "[   45.389906] RIP: 0010:update_curr+0x4c/0x1e0\n"
      "[   45.449759] Kernel panic - not syncing: Fatal exception in interrupt\n");
  REQUIRE(old_form.size() == 2);
  CHECK(old_form[0].kind == ConsoleProblem::oops);
  REQUIRE(int3_oops(old_form));
  CHECK(*int3_oops(old_form) == "[   45.389371] int3: 0000 [#1] PREEMPT SMP PTI");
  // Other die() headers of that form are oopses, not int3 ones; near misses are nothing.
  auto other = scan_console("[ 1.0] invalid opcode: 0000 [#1] PREEMPT SMP NOPTI\n");
  REQUIRE(other.size() == 1);
  CHECK(other[0].kind == ConsoleProblem::oops);
  CHECK_FALSE(int3_oops(other));
  CHECK_FALSE(int3_oops(scan_console("[ 1.0] notint3: 0000 [#1] SMP\n")));
  CHECK(scan_console("[ 1.0] int3: 000 [#1]\n[ 1.1] int3: 0000 [#]\n[ 1.2] int3: 0000 [#1\n[ 1.3] int3: ZZZZ [#1]\n").empty());
}

TEST_CASE("console lines from the guest are sanitized and bounded", "[console]") {
  std::string evil = "Kernel panic - not syncing: \x1b[31mred\x07" + std::string(2000, 'x') + "\n";
  auto f = scan_console(evil);
  REQUIRE(f.size() == 1);
  CHECK(f[0].line.size() <= 512);
  CHECK(f[0].line.find('\x1b') == std::string::npos);
  CHECK(f[0].line.find('\x07') == std::string::npos);
}

TEST_CASE("console lines are valid UTF-8 however the guest cut them", "[console]") {
  // The kernel cuts a task name at 15 bytes, here inside its 8th two-byte character: the soft
  // lockup line ends in a lone lead byte. A note made of it goes into the results manifest,
  // whose JSON writer throws on invalid UTF-8.
  const std::string comm = "\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3";
  const std::string lockup = "[   48.1] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [" + comm + ":812]\n";
  auto f = scan_console(lockup);
  REQUIRE(f.size() == 1);
  auto notes = disturbances(f);
  REQUIRE(notes.size() == 1);
  CHECK_NOTHROW(nlohmann::json(notes).dump());
  CHECK(has(notes[0], "\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4\xc3\xa4?:812]"));
  // A line cut at 512 bytes in the middle of a character, raw high bytes, and a C1 control
  // (U+009B, CSI for some terminals).
  const std::string panic = "Kernel panic - not syncing: " + std::string(483, 'x') + "\xc3\xa4" + "tail\n";
  const std::string raw = "BUG: unable to handle \xff\x9b[31m page fault \xc2\x9b[2J\n";
  auto g = scan_console(panic + raw);
  REQUIRE(g.size() == 2);
  CHECK(g[0].line.size() == 511);
  CHECK(g[0].line.back() == 'x');
  CHECK(g[1].line == "BUG: unable to handle ??[31m page fault ?[2J");
  CHECK_NOTHROW(nlohmann::json(first_problem(g)).dump());
  const std::string tail = console_tail(lockup + panic + raw, 3);
  CHECK_NOTHROW(nlohmann::json(tail).dump());
  CHECK(has(tail, "?:812]"));
}

TEST_CASE("console_tail returns the last lines", "[console]") {
  CHECK(console_tail("a\nb\nc\n", 2) == "b\nc");
  CHECK(console_tail("a\nb\nc", 2) == "b\nc");
  CHECK(console_tail("a\nb\nc\n", 10) == "a\nb\nc");
  CHECK(console_tail("a\nb\n", 1) == "b");
  CHECK(console_tail("only", 3) == "only");
  CHECK(console_tail("a\r\nb\r\n", 5) == "a\nb");
  CHECK(console_tail("", 3).empty());
  CHECK(console_tail("a\nb\n", 0).empty());
}

TEST_CASE("read_console reads a bounded tail starting at a line", "[console]") {
  auto file = smtlab::test::scratch_path("console.log");
  {
    std::ofstream out(file);
    for (int i = 0; i < 1000; ++i) out << "line " << i << "\n";
  }
  auto all = read_console(file);
  CHECK(all.rfind("line 0\n", 0) == 0);
  auto tail = read_console(file, 100);
  CHECK(tail.size() <= 100);
  CHECK(tail.rfind("line ", 0) == 0);
  CHECK(tail.substr(tail.size() - 9) == "line 999\n");
  CHECK(read_console(file.string() + ".missing").empty());
  // What was written since a mark: from the mark itself while it is within the bound; else the
  // bound's tail from a line boundary; nothing from a mark at or past the end.
  const std::string whole = read_console(file);
  const auto mark = whole.find("line 990\n");
  CHECK(read_console_since(file, mark) == whole.substr(mark));
  auto bounded = read_console_since(file, 0, 100);
  CHECK(bounded == tail);
  CHECK(read_console_since(file, whole.size()).empty());
  CHECK(read_console_since(file, whole.size() + 50).empty());
}

TEST_CASE("guest topology check: SMT pairs, nosmt, and mismatches", "[topology]") {
  GuestTopology smt{"0-3", 1,
                    {{0, 0, 0, 0, "0-1"}, {1, 0, 0, 0, "0-1"}, {2, 1, 0, 0, "2-3"}, {3, 1, 0, 0, "2-3"}}};
  CHECK(check_guest_topology({1, 1, 2, 2}, false, smt).empty());

  SECTION("every vCPU its own core (what qemu64 gave on 6.1) is a mismatch for 1x1x2x2") {
    GuestTopology flat{"0-3", 0,
                       {{0, 0, 0, 0, "0"}, {1, 1, 0, 0, "1"}, {2, 2, 0, 0, "2"}, {3, 3, 0, 0, "3"}}};
    auto d = check_guest_topology({1, 1, 2, 2}, false, flat);
    REQUIRE_FALSE(d.empty());
    CHECK(has(d[0], "SMT inactive, expected active"));
    CHECK(check_guest_topology({1, 1, 4, 1}, false, flat).empty());
  }
  SECTION("nosmt: one online thread per core, SMT inactive") {
    GuestTopology nosmt{"0,2", 0, {{0, 0, 0, 0, "0"}, {2, 1, 0, 0, "2"}}};
    CHECK(check_guest_topology({1, 1, 2, 2}, true, nosmt).empty());
    auto d = check_guest_topology({1, 1, 2, 2}, false, nosmt);
    CHECK(d.size() >= 2);
    CHECK(has(d[0], "2 online CPUs"));
  }
  SECTION("sibling lists that name offline CPUs count only online ones") {
    GuestTopology nosmt{"0,2", 0, {{0, 0, 0, 0, "0-1"}, {2, 1, 0, 0, "2-3"}}};
    CHECK(check_guest_topology({1, 1, 2, 2}, true, nosmt).empty());
  }
  SECTION("wrong package count, missing CPU reports and garbage are reported, not thrown") {
    GuestTopology two_pkg = smt;
    two_pkg.cpus[2].package_id = 1;
    two_pkg.cpus[3].package_id = 1;
    auto d = check_guest_topology({1, 1, 2, 2}, false, two_pkg);
    REQUIRE(d.size() == 1);
    CHECK(has(d[0], "2 package(s), expected 1"));
    GuestTopology missing = smt;
    missing.cpus.pop_back();
    CHECK_FALSE(check_guest_topology({1, 1, 2, 2}, false, missing).empty());
    GuestTopology garbage{"zero-three", std::nullopt, {}};
    CHECK_NOTHROW(check_guest_topology({1, 1, 2, 2}, false, garbage));
    CHECK(has(check_guest_topology({1, 1, 2, 2}, false, garbage)[0], "malformed"));
    GuestTopology bad_sib = smt;
    bad_sib.cpus[0].siblings = "0-x";
    CHECK(has(check_guest_topology({1, 1, 2, 2}, false, bad_sib).back(), "malformed siblings"));
  }
  SECTION("guest strings quoted in a difference are cut between characters, never inside one") {
    // 63 bytes, then a two-byte character: a cut at 64 bytes would split it.
    const std::string online = std::string(63, '0') + "\xc3\xa4";
    GuestTopology odd{online, 1, smt.cpus};
    odd.cpus[1].siblings = "\x1b" + std::string(62, '1') + "\xc3\xa4";
    for (const auto& seen : {odd, GuestTopology{"0-3", 1, odd.cpus}}) {
      auto d = check_guest_topology({1, 1, 2, 2}, false, seen);
      REQUIRE_FALSE(d.empty());
      for (const auto& line : d) {
        INFO(line);
        CHECK_NOTHROW(nlohmann::json(line).dump());
        CHECK(line.find('\x1b') == std::string::npos);
      }
    }
    CHECK(has(check_guest_topology({1, 1, 2, 2}, false, odd)[0], "'" + std::string(63, '0') + "' is malformed"));
  }
}

TEST_CASE("a hostile topology report costs bounded work and yields a bounded list of differences", "[topology]") {
  // What fits in one 64 KiB topology record: 2000 CPUs, each claiming all 4096 as siblings. The
  // check used to scan the online list for every sibling of every CPU (2000 x 4096 x 4096) and to
  // spell out every difference.
  GuestTopology hostile{"0-4095", 1, {}};
  for (int cpu = 0; cpu < 2000; ++cpu) hostile.cpus.push_back({cpu, cpu, 0, 0, "0-4095"});
  auto d = check_guest_topology({1, 1, 2, 2}, false, hostile);
  REQUIRE(d.size() == 11);
  CHECK(has(d[0], "the guest has 4096 online CPUs"));
  CHECK(has(d[1], "CPU 0 has siblings 0-4095, expected 2 thread(s) per core"));
  CHECK(has(d[8], "CPU 7 has siblings"));
  // 2000 sibling differences and 2096 online CPUs without a report: 8 shown.
  CHECK(d[9] == "... and 4088 more CPU difference(s)");
  CHECK(d[10] == "the guest sees 2000 core(s), expected 2");
  // The same bound for malformed sibling lists.
  for (auto& c : hostile.cpus) c.siblings = "0-4095,x";
  d = check_guest_topology({1, 1, 2, 2}, false, hostile);
  REQUIRE(d.size() == 11);
  CHECK(has(d[1], "CPU 0: malformed siblings list '0-4095,x'"));
  CHECK(d[9] == "... and 4088 more CPU difference(s)");
}

TEST_CASE("FileFollower returns complete lines as the file grows, bounded", "[follow]") {
  auto file = smtlab::test::scratch_path("follow");
  FileFollower f(file, 8);
  CHECK(f.poll().empty());  // not there yet
  std::ofstream out(file, std::ios::binary);
  out << "one\ntw" << std::flush;
  auto a = f.poll();
  REQUIRE(a.size() == 1);
  CHECK(a[0].text == "one");
  out << "o\n" << std::string(20, 'z') << "\nthree" << std::flush;
  auto b = f.poll();
  REQUIRE(b.size() == 2);
  CHECK(b[0].text == "two");
  CHECK_FALSE(b[0].truncated);
  CHECK(b[1].text == std::string(8, 'z'));
  CHECK(b[1].truncated);
  auto c = f.finish();
  REQUIRE(c.size() == 1);
  CHECK(c[0].text == "three");
  CHECK(f.bytes_read() == 4 + 4 + 21 + 5);
}

TEST_CASE("ControlChannel writes go lines to the socket QEMU would listen on", "[control]") {
  auto path = smtlab::test::scratch_path("ctl.sock");
  CHECK_THROWS_WITH(ControlChannel::connect(path, std::chrono::milliseconds(100)),
                    Catch::Contains("cannot connect"));
  int server = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, path.c_str());
  REQUIRE(bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(listen(server, 1) == 0);
  auto ch = ControlChannel::connect(path);
  int peer = accept(server, nullptr, nullptr);
  REQUIRE(peer >= 0);
  ch.go("iteration-1");
  CHECK_THROWS_AS(ch.send_line("two\nlines"), Error);
  CHECK_THROWS_AS(ch.go("two words"), Error);
  char buf[64] = {};
  auto n = read(peer, buf, sizeof buf - 1);
  CHECK(std::string(buf, n > 0 ? n : 0) == "go iteration-1\n");
  close(peer);
  close(server);
}

TEST_CASE("host checks find QEMU and say which accelerator guests get", "[doctor]") {
  auto checks = host_checks();
  REQUIRE(checks.size() >= 3);
  CHECK(checks[0].name == "qemu-system-x86_64");
  CHECK(checks[0].ok == std::filesystem::exists("/usr/bin/qemu-system-x86_64"));
  // Guests get KVM when /dev/kvm is usable and is not PVM (unless SMTLAB_ACCEL says otherwise).
  const char* env = getenv("SMTLAB_ACCEL");
  const bool usable = access("/dev/kvm", R_OK | W_OK) == 0;
  bool kvm = usable && !host_kvm_is_pvm() && (env == nullptr || std::string(env) != "tcg");
  CHECK(checks[2].name == "kvm");
  CHECK(checks[2].warning == !kvm);
  // A usable PVM /dev/kvm is refused by name (without any /dev/kvm, there is nothing to refuse).
  if (usable && host_kvm_is_pvm() && env == nullptr) CHECK(checks[2].detail.find("PVM") != std::string::npos);
  if (!std::filesystem::exists("/dev/kvm")) CHECK(checks[2].detail.find("no /dev/kvm") != std::string::npos);
}

// Last: it leaves this process marked as interrupted.
TEST_CASE("request_interrupt sets the flag and makes the interrupt fd readable", "[interrupt]") {
  CHECK_FALSE(interrupted());
  int fd = interrupt_fd();
  REQUIRE(fd >= 0);
  pollfd p{fd, POLLIN, 0};
  CHECK(poll(&p, 1, 0) == 0);
  CHECK_NOTHROW(throw_if_interrupted());
  request_interrupt();
  CHECK(interrupted());
  CHECK(poll(&p, 1, 0) == 1);
  CHECK_THROWS_AS(throw_if_interrupted(), Interrupted);
}

TEST_CASE("stale-QEMU reaping finds only processes that see our file system under that root", "[embed]") {
  // A stand-in for QEMU: a shell, under a name starting with qemu-system, naming a path below the root.
  auto dir = std::filesystem::current_path() / ("embed-reap-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir / "root");
  auto fake = dir / "qemu-system-fake";
  std::filesystem::copy_file("/bin/sh", fake);
  auto start = [&](bool own_mount_namespace) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string arg = "while :; do sleep 1; done";
      std::string root_arg = (dir / "root" / "x").string();
      if (own_mount_namespace) {
        execl("/usr/bin/unshare", "unshare", "--mount", "--", fake.c_str(), "-c", arg.c_str(), root_arg.c_str(), nullptr);
      } else {
        execl(fake.c_str(), fake.c_str(), "-c", arg.c_str(), root_arg.c_str(), nullptr);
      }
      _exit(127);
    }
    return pid;
  };
  auto stop = [](pid_t pid) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  };
  pid_t ours = start(false);
  usleep(300 * 1000);
  auto found = qemu_processes_under(dir / "root");
  CHECK(found == std::vector<int>{ours});
  CHECK(qemu_processes_under(dir / "other").empty());
  stop(ours);
  if (geteuid() == 0) {  // unshare --mount needs root
    pid_t theirs = start(true);
    usleep(300 * 1000);
    CHECK(qemu_processes_under(dir / "root").empty());
    stop(theirs);
  } else {
    WARN("not root: the other-mount-namespace case is not checked");
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the accelerator: KVM when offered and not PVM, TCG on request, bad requests named") {
  using smtlab::vm::Accel;
  using smtlab::vm::choose_accel;
  CHECK(choose_accel("", true, false).accel == Accel::kvm);
  CHECK(choose_accel("auto", true, false).accel == Accel::kvm);
  CHECK(choose_accel("", false, false).accel == Accel::tcg);
  CHECK(choose_accel("", false, false).reason.empty());
  // PVM's /dev/kvm: a Debian kernel hangs there silently (seen on this CI machine).
  auto pvm = choose_accel("", true, true);
  CHECK(pvm.accel == Accel::tcg);
  CHECK(pvm.reason.find("PVM") != std::string::npos);
  CHECK(pvm.reason.find("SMTLAB_ACCEL=kvm") != std::string::npos);
  CHECK(choose_accel("kvm", true, true).accel == Accel::kvm);
  auto forced = choose_accel("tcg", true, false);
  CHECK(forced.accel == Accel::tcg);
  CHECK(forced.reason == "SMTLAB_ACCEL=tcg asks for TCG");
  CHECK_THROWS_WITH(choose_accel("kvm", false, false),
                    Catch::Contains("SMTLAB_ACCEL=kvm, but libvirt offers no usable KVM"));
  CHECK_THROWS_WITH(choose_accel("KVM", true, false),
                    Catch::Contains("SMTLAB_ACCEL='KVM' is not one of auto, kvm, tcg"));
}

namespace {
int parent_of(pid_t pid) {  // from /proc/<pid>/stat; -1 when gone
  const std::string text = smtlab::read_file_head("/proc/" + std::to_string(pid) + "/stat", 1 << 20);
  auto close = text.rfind(')');
  if (close == std::string::npos) return -1;
  char state = 0;
  int ppid = -1;
  if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

// A process started the way libvirt starts QEMU (daemonized: the intermediate process exits at
// once, so the grandchild is adopted by the nearest subreaper) running `body`; returns its pid.
pid_t daemonize(const std::function<void()>& body) {
  int pid_pipe[2];
  REQUIRE(pipe(pid_pipe) == 0);
  pid_t mid = fork();
  REQUIRE(mid >= 0);
  if (mid == 0) {
    pid_t daemon = fork();
    if (daemon == 0) {
      body();
      _exit(0);
    }
    (void)!write(pid_pipe[1], &daemon, sizeof daemon);
    _exit(0);
  }
  pid_t daemon = -1;
  REQUIRE(read(pid_pipe[0], &daemon, sizeof daemon) == sizeof daemon);
  REQUIRE(waitpid(mid, nullptr, 0) == mid);
  close(pid_pipe[0]);
  close(pid_pipe[1]);
  return daemon;
}
}  // namespace

TEST_CASE("the QEMU reaper adopts a daemonized process, reaps it when it exits and keeps its CPU time, and nothing else") {
  become_qemu_reaper();
  int go_pipe[2];
  REQUIRE(pipe(go_pipe) == 0);
  const pid_t daemon = daemonize([&] {
    char c;
    (void)!read(go_pipe[0], &c, 1);  // until the test lets it exit
    timespec t0{}, t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    do clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);  // 100 ms of CPU, as a guest's QEMU uses some
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1'000'000 < 100);
  });
  CHECK(parent_of(daemon) == getpid());  // re-parented to us, not to PID 1

  pid_t direct = fork();  // a child of ours the reaper is not told about
  if (direct == 0) _exit(7);

  reap_when_exited(daemon);
  REQUIRE(write(go_pipe[1], "x", 1) == 1);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // 5 s at most; a zombie nobody reaps stays forever
    gone = !std::filesystem::exists("/proc/" + std::to_string(daemon));
    if (!gone) usleep(10'000);
  }
  CHECK(gone);
  // Its CPU time is still known (the guests' share of a cell whose QEMU exited before its last
  // record was read): 100 ms, and clock ticks are 1-10 ms.
  auto ticks = exited_cpu_ticks(daemon);
  REQUIRE(ticks);
  CHECK(*ticks * 1000 / static_cast<uint64_t>(sysconf(_SC_CLK_TCK)) >= 90);
  CHECK_FALSE(exited_cpu_ticks(direct));
  // Its exit status was left for its own parent.
  int status = 0;
  REQUIRE(waitpid(direct, &status, 0) == direct);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  for (int fd : {go_pipe[0], go_pipe[1]}) close(fd);
}

TEST_CASE("the QEMU reaper also reaps an unregistered QEMU orphan (libvirt's capability probe), no other orphan") {
  become_qemu_reaper();
  // Two daemonized processes the reaper is not told about, named as a process would be: a QEMU
  // (libvirt's probe of a fresh embedded root) and something else; both exit with 3 after 0.1 s.
  auto named = [](const char* name) {
    return [name] {
      prctl(PR_SET_NAME, name, 0, 0, 0);
      usleep(100'000);
      _exit(3);
    };
  };
  const pid_t other = daemonize(named("not-a-vm"));
  const pid_t probe = daemonize(named("qemu-system-x86"));
  REQUIRE(parent_of(probe) == getpid());
  bool gone = false, other_waited = false;
  for (int i = 0; i < 300 && !(gone && other_waited); ++i) {  // 3 s at most; both exit after 0.1 s
    // The other orphan stays a zombie of ours until we wait for it: its exit status is left to us.
    int status = 0;
    if (!other_waited && waitpid(other, &status, WNOHANG) == other) {
      other_waited = true;
      CHECK(WEXITSTATUS(status) == 3);
    }
    gone = !std::filesystem::exists("/proc/" + std::to_string(probe));
    usleep(10'000);
  }
  CHECK(gone);
  CHECK(other_waited);
}

TEST_CASE("a new owner of an embedded root slot removes per-guest files dead owners left, keeps the capability cache, rotates libvirt.log", "[embed]") {
  namespace fs = std::filesystem;
  const auto root = smtlab::test::scratch_dir("slot");
  auto put = [](const fs::path& p, size_t bytes) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << std::string(bytes, 'x');
  };
  put(root / "log" / "qemu" / "smtlab-abc-vm0-123456.log", 100);
  put(root / "lib" / "qemu" / "domain-3-smtlab-abc-vm0-12" / "master-key.aes", 32);
  put(root / "lib" / "qemu" / "nvram" / "keep", 1);
  put(root / "cache" / "qemu" / "capabilities" / "x.xml", 10);
  put(root / "libvirt.log", (1 << 20) + 1);
  smtlab::vm::tidy_slot(root);
  CHECK_FALSE(fs::exists(root / "log" / "qemu"));
  CHECK_FALSE(fs::exists(root / "lib" / "qemu" / "domain-3-smtlab-abc-vm0-12"));
  CHECK(fs::exists(root / "lib" / "qemu" / "nvram" / "keep"));
  CHECK(fs::exists(root / "cache" / "qemu" / "capabilities" / "x.xml"));
  CHECK_FALSE(fs::exists(root / "libvirt.log"));
  CHECK(fs::file_size(root / "libvirt.log.old") == (1u << 20) + 1);
  // A small libvirt.log stays where it is; a missing lib/qemu is no error.
  put(root / "libvirt.log", 10);
  fs::remove_all(root / "lib");
  smtlab::vm::tidy_slot(root);
  CHECK(fs::file_size(root / "libvirt.log") == 10);
}

TEST_CASE("QEMU's info registers gives each vCPU's RIP, privilege and halt state") {
  const std::string text =
      "CPU#0\n"
      "RAX=0000000000000000 RBX=ffffffff82613940 RCX=0000000000000001 RDX=0000000000000000\n"
      "RIP=ffffffff81c8e1ab RFL=00000246 [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=1\n"
      "ES =0000 0000000000000000 00000000 00000000\n"
      "CPU#1\n"
      "RIP=ffffffff8110f2a0 RFL=00000082 [--S----] CPL=0 II=0 A20=1 SMM=0 HLT=0\n"
      "CPU#2\n"
      "RIP=00007f3a1c2b4e10 RFL=00000202 [-------] CPL=3 II=0 A20=1 SMM=0 HLT=0\n"
      "CPU#3\n"
      "EAX=00000000 EBX=00000000\n"
      "EIP=000fd09a EFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=1\n"
      "CPU#4\n"
      "RAX=0000000000000000 but no instruction pointer\n";
  auto v = smtlab::vm::parse_vcpu_registers(text);
  REQUIRE(v.size() == 4);
  CHECK(v[3].rip == 0xfd09a);  // a secondary vCPU the kernel has not started yet
  CHECK(v[0].cpu == 0);
  CHECK(v[0].rip == 0xffffffff81c8e1abull);
  CHECK(v[0].halted);
  CHECK(v[1].cpu == 1);
  CHECK_FALSE(v[1].halted);
  CHECK(v[2].cpl == 3);
  CHECK(smtlab::vm::describe(v) ==
        "vCPU 0 idle (HLT) at ffffffff81c8e1ab, vCPU 1 in the kernel at ffffffff8110f2a0, "
        "vCPU 2 in user space at 00007f3a1c2b4e10, vCPU 3 idle (HLT) at 00000000000fd09a");
  CHECK(smtlab::vm::parse_vcpu_registers("error: no such command\n").empty());
  CHECK(smtlab::vm::parse_vcpu_registers("CPU#x\nRIP=ffff\n").empty());
}

TEST_CASE("a lock-up is every vCPU on one instruction with interrupts off in two samples after the console went silent") {
  using smtlab::vm::LockupWatch;
  using namespace std::chrono_literals;
  auto regs = [](const char* rip0, const char* rip1, const char* rfl1 = "00000002", int hlt1 = 0) {
    return std::string("CPU#0\nRIP=") + rip0 + " RFL=00000002 [-------] CPL=0 II=0 A20=1 SMM=0 HLT=0\nCPU#1\nRIP=" + rip1 +
           " RFL=" + rfl1 + " [-------] CPL=0 II=0 A20=1 SMM=0 HLT=" + std::to_string(hlt1) + "\n";
  };
  const auto t0 = LockupWatch::Clock::now();
  int asked = 0;
  std::string now_regs = regs("ffffffff81146755", "ffffffff81146755");
  auto sample = [&] {
    ++asked;
    return now_regs;
  };

  LockupWatch booting(10s, 5s, 10s);
  // A console that keeps growing is never sampled.
  for (int s = 0; s <= 60; ++s) CHECK_FALSE(booting.check(t0 + std::chrono::seconds(s), 1000u + s, sample));
  CHECK(asked == 0);

  LockupWatch w(10s, 5s, 10s);
  CHECK_FALSE(w.check(t0, 500, sample));
  CHECK_FALSE(w.check(t0 + 9s, 500, sample));
  CHECK(asked == 0);
  CHECK_FALSE(w.check(t0 + 10s, 500, sample));  // the first sample: nothing to compare with
  CHECK(asked == 1);
  CHECK_FALSE(w.check(t0 + 12s, 500, sample));  // not 5 s apart yet
  CHECK(asked == 1);
  auto stuck = w.check(t0 + 15s, 500, sample);
  REQUIRE(stuck);
  CHECK(*stuck ==
        "every vCPU stayed on one instruction with interrupts off for 5 s: "
        "vCPU 0 in the kernel at ffffffff81146755, vCPU 1 in the kernel at ffffffff81146755");
  CHECK(w.last_registers() == now_regs);
  CHECK_FALSE(w.check(t0 + 30s, 500, sample));  // said once

  // Not a lock-up: a vCPU moved, a vCPU idles in HLT, a vCPU has interrupts on, or the console moved.
  auto second_sample_of = [&](const std::string& later, bool console_moves) {
    LockupWatch x(10s, 5s, 10s);
    now_regs = regs("ffffffff81146755", "ffffffff81146755");
    x.check(t0, 500, sample);
    x.check(t0 + 10s, 500, sample);
    now_regs = later;
    return x.check(t0 + 15s, console_moves ? 600 : 500, sample).has_value();
  };
  CHECK_FALSE(second_sample_of(regs("ffffffff81146755", "ffffffff81146800"), false));
  CHECK_FALSE(second_sample_of(regs("ffffffff81146755", "ffffffff81146755", "00000002", 1), false));
  CHECK_FALSE(second_sample_of(regs("ffffffff81146755", "ffffffff81146755", "00000202"), false));
  CHECK_FALSE(second_sample_of(regs("ffffffff81146755", "ffffffff81146755"), true));
  CHECK(second_sample_of(regs("ffffffff81146755", "ffffffff81146755"), false));
  CHECK_FALSE(second_sample_of("", false));  // no registers to be had: no verdict
}

TEST_CASE("a lock-up is also every vCPU running with interrupts off in every sample over 10 s, once the kernel printed") {
  // Seen under TCG (Debian 6.1, after "sched_clock: Marking stable"): vCPUs 1-3 on one
  // instruction, vCPU 0 looping elsewhere, all with interrupts off, until the boot timeout.
  using smtlab::vm::LockupWatch;
  using namespace std::chrono_literals;
  auto regs = [](const char* rip0, const char* rfl0 = "00000046", int hlt0 = 0) {
    return std::string("CPU#0\nRIP=") + rip0 + " RFL=" + rfl0 + " [---Z-P-] CPL=0 II=0 A20=1 SMM=0 HLT=" +
           std::to_string(hlt0) + "\nCPU#1\nRIP=ffffffff810fa830 RFL=00000086 [--S--P-] CPL=0 II=0 A20=1 SMM=0 HLT=0\n";
  };
  CHECK(smtlab::vm::spinning_with_interrupts_off(smtlab::vm::parse_vcpu_registers(regs("ffffffff81a04ffe"))));
  CHECK_FALSE(smtlab::vm::spinning_with_interrupts_off(smtlab::vm::parse_vcpu_registers(regs("ffffffff81a04ffe", "00000246"))));
  CHECK_FALSE(smtlab::vm::spinning_with_interrupts_off(smtlab::vm::parse_vcpu_registers(regs("ffffffff81a04ffe", "00000046", 1))));
  CHECK_FALSE(smtlab::vm::spinning_with_interrupts_off({}));

  const auto t0 = LockupWatch::Clock::now();
  // Samples at 10, 15, 20 s of silence, vCPU 0 somewhere else each time: the third one decides.
  const std::vector<std::string> moving = {regs("ffffffff81a04ffe"), regs("ffffffff81a05010"), regs("ffffffff81a04ff0")};
  auto run = [&](const std::vector<std::string>& samples, uint64_t console_bytes) {
    LockupWatch w(10s, 5s, 10s);
    size_t i = 0;
    auto sample = [&] { return samples.at(std::min(i++, samples.size() - 1)); };
    std::optional<std::string> verdict;
    for (int s = 0; s <= 20 && !verdict; ++s) verdict = w.check(t0 + std::chrono::seconds(s), console_bytes, sample);
    return verdict;
  };
  auto verdict = run(moving, 20000);
  REQUIRE(verdict);
  CHECK(*verdict ==
        "every vCPU kept running with interrupts off for 10 s: "
        "vCPU 0 in the kernel at ffffffff81a04ff0, vCPU 1 in the kernel at ffffffff810fa830");
  // Not yet: only two samples (5 s apart) so far.
  {
    LockupWatch w(10s, 5s, 10s);
    size_t i = 0;
    auto sample = [&] { return moving.at(std::min(i++, moving.size() - 1)); };
    w.check(t0, 20000, sample);
    CHECK_FALSE(w.check(t0 + 10s, 20000, sample));
    CHECK_FALSE(w.check(t0 + 15s, 20000, sample));
    CHECK(w.check(t0 + 20s, 20000, sample));
  }
  // Not a lock-up: interrupts on in one sample (the count starts again), a vCPU idle, or a
  // kernel that has printed nothing yet (early boot runs with interrupts off).
  CHECK_FALSE(run({regs("ffffffff81a04ffe"), regs("ffffffff81a05010", "00000246"), regs("ffffffff81a04ff0")}, 20000));
  CHECK_FALSE(run({regs("ffffffff81a04ffe"), regs("ffffffff81a05010", "00000046", 1), regs("ffffffff81a04ff0")}, 20000));
  CHECK_FALSE(run(moving, 0));
}
