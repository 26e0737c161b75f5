#include "vm/host_topology.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "util/error.hpp"
#include "util/cpulist.hpp"

namespace smtlab::vm {
namespace {

std::string decode_entities(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '&') {
      out += s[i];
      continue;
    }
    static const std::pair<std::string_view, char> table[] = {
        {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    bool done = false;
    for (auto& [ent, ch] : table) {
      if (s.substr(i, ent.size()) == ent) {
        out += ch;
        i += ent.size() - 1;
        done = true;
        break;
      }
    }
    if (!done) out += '&';
  }
  return out;
}

// Attributes of the start tag that begins at `tag` ("<cpu ...>").
std::map<std::string, std::string> attributes(std::string_view xml, size_t tag) {
  std::map<std::string, std::string> out;
  size_t end = xml.find('>', tag);
  if (end == std::string_view::npos) return out;
  std::string_view t = xml.substr(tag, end - tag);
  size_t i = t.find_first_of(" \t\r\n");
  while (i != std::string_view::npos && i < t.size()) {
    size_t eq = t.find('=', i);
    if (eq == std::string_view::npos) break;
    std::string_view name = t.substr(i, eq - i);
    while (!name.empty() && (name.front() == ' ' || name.front() == '\n' || name.front() == '\t' ||
                             name.front() == '\r'))
      name.remove_prefix(1);
    if (eq + 1 >= t.size()) break;
    char quote = t[eq + 1];
    if (quote != '\'' && quote != '"') break;
    size_t close = t.find(quote, eq + 2);
    if (close == std::string_view::npos) break;
    out[std::string(name)] = decode_entities(t.substr(eq + 2, close - eq - 2));
    i = close + 1;
  }
  return out;
}

std::string element_text(std::string_view xml, std::string_view name, size_t from, size_t to) {
  std::string open = "<" + std::string(name) + ">";
  std::string close = "</" + std::string(name) + ">";
  size_t a = xml.find(open, from);
  if (a == std::string_view::npos || a >= to) return {};
  a += open.size();
  size_t b = xml.find(close, a);
  if (b == std::string_view::npos || b > to) return {};
  return decode_entities(xml.substr(a, b - a));
}

int to_int(const std::map<std::string, std::string>& attrs, const std::string& key, int fallback) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  try {
    return std::stoi(it->second);
  } catch (...) {
    throw Error("libvirt capabilities: CPU attribute " + key + "='" + it->second +
                "' is not a number");
  }
}

}  // namespace

const HostCpu* HostTopology::find(int id) const {
  for (const auto& c : cpus)
    if (c.id == id) return &c;
  return nullptr;
}

std::vector<int> HostTopology::ids() const {
  std::vector<int> out;
  for (const auto& c : cpus) out.push_back(c.id);
  return out;
}

int HostTopology::threads_per_core() const {
  size_t most = cpus.empty() ? 0 : 1;
  for (const auto& c : cpus) most = std::max(most, c.siblings.size());
  return static_cast<int>(most);
}

int HostTopology::cores() const {
  std::set<std::tuple<int, int, int>> seen;
  for (const auto& c : cpus) seen.insert({c.socket_id, c.die_id, c.core_id});
  return static_cast<int>(seen.size());
}

int HostTopology::sockets() const {
  std::set<int> seen;
  for (const auto& c : cpus) seen.insert(c.socket_id);
  return static_cast<int>(seen.size());
}

std::string HostTopology::describe() const {
  int s = sockets(), c = cores(), t = threads_per_core();
  std::string out = std::to_string(cpus.size()) + " CPUs: " + std::to_string(s) + " socket" +
                    (s == 1 ? "" : "s") + " x " + std::to_string(s ? c / s : 0) + " cores x " +
                    std::to_string(t) + " thread" + (t == 1 ? "" : "s");
  out += t > 1 ? " (SMT)" : " (no SMT)";
  return out;
}

HostTopology HostTopology::uniform(int sockets, int cores_per_socket, int threads_per_core,
                                   bool siblings_apart) {
  HostTopology h;
  h.arch = "x86_64";
  h.cpu_model = "synthetic";
  int total_cores = sockets * cores_per_socket;
  for (int s = 0; s < sockets; ++s) {
    for (int c = 0; c < cores_per_socket; ++c) {
      int core_index = s * cores_per_socket + c;
      std::vector<int> sib;
      for (int t = 0; t < threads_per_core; ++t)
        sib.push_back(siblings_apart ? core_index + t * total_cores
                                     : core_index * threads_per_core + t);
      for (int id : sib) h.cpus.push_back(HostCpu{id, s, 0, c, sib});
    }
  }
  std::sort(h.cpus.begin(), h.cpus.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return h;
}

HostTopology parse_host_capabilities(std::string_view xml) {
  HostTopology h;
  size_t host = xml.find("<host>");
  size_t host_end = xml.find("</host>");
  if (host == std::string_view::npos || host_end == std::string_view::npos)
    throw Error("libvirt capabilities have no <host> element");
  size_t hcpu = xml.find("<cpu>", host);
  if (hcpu != std::string_view::npos && hcpu < host_end) {
    size_t hcpu_end = xml.find("</cpu>", hcpu);
    if (hcpu_end == std::string_view::npos) hcpu_end = host_end;
    h.arch = element_text(xml, "arch", hcpu, hcpu_end);
    h.cpu_model = element_text(xml, "model", hcpu, hcpu_end);
    h.cpu_vendor = element_text(xml, "vendor", hcpu, hcpu_end);
  }
  size_t pos = host;
  while ((pos = xml.find("<cpu ", pos)) != std::string_view::npos && pos < host_end) {
    auto attrs = attributes(xml, pos);
    pos += 5;
    if (!attrs.count("id")) continue;
    HostCpu c;
    c.id = to_int(attrs, "id", 0);
    c.socket_id = to_int(attrs, "socket_id", 0);
    c.die_id = to_int(attrs, "die_id", 0);
    c.core_id = to_int(attrs, "core_id", c.id);
    if (attrs.count("siblings")) c.siblings = parse_cpulist(attrs["siblings"]);
    if (c.siblings.empty()) c.siblings = {c.id};
    h.cpus.push_back(c);
  }
  if (h.cpus.empty())
    throw Error("libvirt capabilities list no host CPUs (no <cpu id=...> under <topology>)",
                "check `virsh capabilities` on that host");
  std::sort(h.cpus.begin(), h.cpus.end(), [](auto& a, auto& b) { return a.id < b.id; });
  return h;
}

}  // namespace smtlab::vm
