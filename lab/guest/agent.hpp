#pragma once
// The guest agent (`smtlab-guest agent --job FILE`): reads the job, reports hello, topology and
// settings, runs the job with monitors alongside and streams records to the results port,
// "end" last. As PID 1 it also mounts what it needs, reaps orphans and powers the guest off.
// Protocol: /tmp/briefs/protocol.md.
#include <string>
#include <vector>

#include "protocol/job.hpp"
#include "protocol/record.hpp"

namespace smtlab::guest {

struct AgentOptions {
  std::string job_file;
  // A virtio-serial port name (default org.smtlab.results.0), "-" for stdout, or an absolute
  // file path. When the named port does not exist and this is not PID 1, records go to stdout.
  std::string results_port = protocol::kResultsPortName;
  std::string control_port = protocol::kControlPortName;
  // Where virtio ports are looked up (tests point these at fakes).
  std::string ports_sys = "/sys/class/virtio-ports";
  std::string ports_dev = "/dev";
  // Faults to inject (guest/cmdline.hpp); as PID 1 the agent adds those of /proc/cmdline.
  std::vector<std::string> faults;
};

// Lockstep (job.lockstep): before each measured iteration the agent writes
//   {"type":"event","name":"barrier","detail":{"barrier":"<name>","state":"waiting"}}
// and blocks until the line "go <name>" arrives on the control port, then writes the same event
// with "state":"go". Barrier names: kernbench-j<N>-<iteration>, chat-<iteration>,
// hackbench-g<G>-<iteration>, exec-1.
//
// Runs the agent. Returns the exit code when not PID 1; as PID 1 it powers off instead.
int run_agent(const AgentOptions& options);

// Runs one job, writing everything after "hello" (topology, settings, samples, monitors,
// errors) and the final "end" record. Returns 0 when the job succeeded. Never throws.
int run_job(const protocol::Job& job, protocol::RecordWriter& out, const AgentOptions& options);

}  // namespace smtlab::guest
