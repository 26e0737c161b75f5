// The canonical definition of a cell and its id.
#include "plan/cell_definition.hpp"

#include "util/cpulist.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace smtlab::plan {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace recipe;

namespace detail {

namespace {

// A file is identified by its name and content, never by where it sits on this host.
json file_digest(const fs::path& p, DigestCache& digests) {
  auto it = digests.find(p);
  if (it == digests.end()) it = digests.emplace(p, sha256_file(p)).first;
  return json{{"file", p.filename().string()}, {"sha256", it->second}};
}

json kernel_json(const KernelSpec& k, DigestCache& digests) {
  json j{{"name", k.name}, {"source", to_string(k.source)}, {"cmdline", k.cmdline}};
  switch (k.source) {
    case KernelSource::debian:
      j["package"] = k.package;
      j["version"] = k.version;
      break;
    case KernelSource::source: {
      // debian:<package> and git URLs as written; a local tarball or directory by its name.
      bool named = k.tree.rfind("debian:", 0) == 0 || !k.git_ref.empty();
      j["tree"] = named ? k.tree : fs::path(k.tree).filename().string();
      j["ref"] = k.git_ref;
      j["base_config"] = k.base_config;
      j["fragments"] = json::array();
      for (const auto& f : k.fragments) j["fragments"].push_back(file_digest(f, digests));
      j["patches"] = json::array();
      for (const auto& p : k.patches) j["patches"].push_back(file_digest(p, digests));
      break;
    }
    case KernelSource::path:
      j["bzimage"] = file_digest(k.bzimage, digests);
      j["modules"] = k.modules_dir.empty() ? std::string() : k.modules_dir.filename().string();
      break;
  }
  return j;
}

json params_json(const Benchmark& b) {
  if (auto* k = std::get_if<KernbenchParams>(&b.params))
    return json{{"jobs", k->jobs},   {"warmup", k->warmup}, {"tree", k->tree},
                {"files", k->files}, {"config", k->config}, {"target", k->target}};
  if (auto* c = std::get_if<ChatParams>(&b.params))
    return json{{"rooms", c->rooms},
                {"users", c->users},
                {"count", c->count},
                {"yield", to_string(c->yield)},
                {"port", c->port},
                {"discard", c->discard}};
  if (auto* c = std::get_if<CommandParams>(&b.params)) return json{{"run", c->argv}};
  const auto& h = std::get<HackbenchParams>(b.params);
  return json{{"groups", h.groups}, {"loops", h.loops}, {"fds", h.fds}, {"threads", h.threads}, {"pipes", h.pipes}};
}

}  // namespace

json cell_definition(const Cell& cell, DigestCache& digests) {
  const Variant& v = cell.variant;
  const Topology& t = cell.topology;
  json roles = json::array();
  for (VmRole r : t.roles) roles.push_back(to_string(r));
  json def;
  def["schema"] = 1;
  def["iterations"] = cell.iterations;
  def["variant"] = json{{"name", v.name},
                        {"kernel", v.kernel},
                        {"cmdline", v.cmdline},
                        {"sysctls", v.sysctls},
                        {"sched", v.sched_tunables},
                        {"coresched", to_string(v.coresched)}};
  def["kernel"] = kernel_json(cell.kernel, digests);
  def["topology"] = json{{"name", t.name},
                         {"vms", t.vms},
                         {"sockets", t.sockets},
                         {"dies", t.dies},
                         {"cores", t.cores},
                         {"threads", t.threads},
                         {"smt", t.smt},
                         {"memory_mib", t.memory_mib},
                         {"cmdline", t.cmdline},
                         {"host_cpus", t.host_cpus.empty() ? std::string("all") : format_cpulist(t.host_cpus)},
                         {"pinning", to_string(t.pinning)},
                         {"roles", roles},
                         {"noise", json{{"workers", t.noise.workers}, {"load", t.noise.load}}}};
  // Added after the first cells were measured: left out at its default, so that their ids stay.
  if (t.host_sched != HostSched::normal) def["topology"]["host_sched"] = to_string(t.host_sched);
  def["benchmark"] = json{{"name", cell.benchmark.name}, {"kind", cell.benchmark.kind}, {"params", params_json(cell.benchmark)}};
  return def;
}

}  // namespace detail

json cell_definition(const Cell& cell) {
  detail::DigestCache digests;
  return detail::cell_definition(cell, digests);
}

std::string cell_id(const Cell& cell) { return sha256_hex(cell_definition(cell).dump()).substr(0, 12); }

}  // namespace smtlab::plan
