// Child process for the never-leak tests: starts a guest through the embedded driver, prints
// "started <embed root> <qemu pid>", then waits. Mode "wait": sleeps until killed (kill -9
// test). Mode "sigint": installs the interrupt handlers, waits for the guest; on SIGINT tears
// down, prints "teardown done" and exits 130.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "util/error.hpp"
#include "vm/connection.hpp"
#include "vm/domain.hpp"
#include "vm/interrupt.hpp"

using namespace smtlab::vm;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: vm_kill_helper wait|sigint KERNEL INITRD DIR\n";
    return 2;
  }
  std::string mode = argv[1];
  try {
    if (mode == "sigint") install_interrupt_handlers();
    auto conn = Connection::open();
    DomainSpec spec;
    spec.name = unique_domain_name("killtest", 0);
    spec.topology = {1, 1, 1, 2};
    spec.memory_mib = 256;
    spec.accel = conn->info().accel;
    spec.cpu_model = conn->info().guest_cpu_model;
    spec.kernel = argv[2];
    spec.initrd = argv[3];
    spec.cmdline = "console=ttyS0 panic=-1 quiet";
    spec.console_log = std::string(argv[4]) + "/console.log";
    auto dom = Domain::start(*conn, spec);
    std::cout << "started " << conn->info().embed_root.string() << " " << dom.qemu_pid()
              << std::endl;
    if (mode == "wait") {
      for (;;) pause();
    }
    auto r = dom.wait_stopped(std::chrono::seconds(120));
    dom.destroy();
    std::cout << "teardown done " << to_string(r) << std::endl;
    return r == WaitResult::interrupted ? 130 : 0;
  } catch (const std::exception& e) {
    std::cerr << "vm_kill_helper: " << smtlab::describe(e) << "\n";
    return 1;
  }
}
