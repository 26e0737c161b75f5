#include "vm/console.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>

#include "util/error.hpp"
#include "util/utf8.hpp"

namespace smtlab::vm {
namespace {

bool contains(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
}

// Calls `each` with every line of `text` (without its newline), the last one even if unterminated.
template <typename Each>
void for_each_line(std::string_view text, Each&& each) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    each(text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos));
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
}

// Where x86's die() header "<what>: <4 hex digits> [#<n>]" starts its error code in `line`
// ("int3: 0000 [#1] PREEMPT SMP PTI" up to 6.1; "Oops: int3: 0000 [#1] ..." in later kernels),
// or npos. Bounded: guest text.
size_t die_header_code(std::string_view line) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  for (size_t at = line.find(": "); at != std::string_view::npos; at = line.find(": ", at + 1)) {
    std::string_view rest = line.substr(at + 2);
    if (rest.size() < 8 || !std::all_of(rest.begin(), rest.begin() + 4, hex) || rest.substr(4, 3) != " [#") continue;
    size_t n = 7;
    while (n < rest.size() && n < 14 && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n > 7 && n < rest.size() && rest[n] == ']') return at;
  }
  return std::string_view::npos;
}

}  // namespace

std::string to_string(ConsoleProblem kind) {
  switch (kind) {
    case ConsoleProblem::panic: return "kernel panic";
    case ConsoleProblem::oops: return "kernel oops";
    case ConsoleProblem::bug: return "kernel BUG";
    case ConsoleProblem::warning: return "kernel warning";
    case ConsoleProblem::stall: return "kernel stall";
    case ConsoleProblem::init_error: return "smtlab-init error";
  }
  return "?";
}

std::vector<ConsoleFinding> scan_console(std::string_view text) {
  std::vector<ConsoleFinding> out;
  size_t number = 0;
  for_each_line(text, [&](std::string_view line) {
    ++number;
    std::optional<ConsoleProblem> kind;
    if (contains(line, "Kernel panic - not syncing") || contains(line, "end Kernel panic"))
      kind = ConsoleProblem::panic;
    else if (contains(line, "Oops:") || contains(line, "general protection fault") ||
             die_header_code(line) != std::string_view::npos)
      kind = ConsoleProblem::oops;
    else if (contains(line, "BUG: soft lockup") || contains(line, "BUG: workqueue lockup") ||
             (contains(line, "rcu: INFO:") && contains(line, "detected stall")))
      kind = ConsoleProblem::stall;
    else if (contains(line, "BUG:") || contains(line, "kernel BUG at"))
      kind = ConsoleProblem::bug;
    else if (contains(line, "WARNING: CPU:"))
      kind = ConsoleProblem::warning;
    else if (contains(line, "smtlab-init: error:"))
      kind = ConsoleProblem::init_error;
    if (kind) out.push_back({*kind, number, printable_line(line)});
  });
  return out;
}

namespace {
bool fatal(ConsoleProblem kind) { return kind != ConsoleProblem::warning && kind != ConsoleProblem::stall; }
}  // namespace

bool is_fatal(const std::vector<ConsoleFinding>& findings) {
  for (const auto& f : findings)
    if (fatal(f.kind)) return true;
  return false;
}

std::vector<std::string> disturbances(const std::vector<ConsoleFinding>& findings, size_t max) {
  std::vector<std::string> out;
  for (const auto& f : findings)
    if (!fatal(f.kind) && out.size() < max) out.push_back(to_string(f.kind) + ": " + f.line);
  return out;
}

std::optional<std::string> int3_oops(const std::vector<ConsoleFinding>& findings) {
  for (const auto& f : findings)
    if (f.kind == ConsoleProblem::oops) {
      // What died: the words before the error code, "int3" in both header forms.
      const size_t code = die_header_code(f.line);
      if (code == std::string_view::npos) continue;
      const std::string_view what = std::string_view(f.line).substr(0, code);
      if (what.ends_with("int3") && (what.size() == 4 || what[what.size() - 5] == ' ')) return f.line;
    }
  return std::nullopt;
}

std::string first_problem(const std::vector<ConsoleFinding>& findings) {
  // A panic line is the most telling; else the first fatal finding.
  for (const auto& f : findings)
    if (f.kind == ConsoleProblem::panic) return to_string(f.kind) + ": " + f.line;
  for (const auto& f : findings)
    if (fatal(f.kind)) return to_string(f.kind) + ": " + f.line;
  return {};
}

std::string console_tail(std::string_view text, size_t lines) {
  if (lines == 0) return {};
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  size_t start = text.size();
  size_t seen = 0;
  while (start > 0) {
    size_t nl = text.rfind('\n', start - 1);
    if (nl == std::string_view::npos) {
      start = 0;
      break;
    }
    start = nl;
    if (++seen == lines) {
      start = nl + 1;
      break;
    }
  }
  std::string_view tail = text.substr(start);
  if (!tail.empty() && tail.front() == '\n') tail.remove_prefix(1);
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t nl = tail.find('\n', pos);
    if (pos > 0) out += '\n';
    out += printable_line(tail.substr(pos, nl == std::string_view::npos ? tail.npos : nl - pos), 4096);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::optional<SoftLockup> parse_soft_lockup(std::string_view line) {
  static constexpr std::string_view marker = "BUG: soft lockup - CPU#";
  auto at = line.find(marker);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + marker.size());
  // A bounded decimal (guest text: at most 7 digits), then what must follow it.
  auto number = [&rest](std::string_view after) -> std::optional<int> {
    size_t n = 0;
    while (n < rest.size() && n < 7 && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 0 || rest.substr(n, after.size()) != after) return std::nullopt;
    int value = 0;
    for (size_t i = 0; i < n; ++i) value = value * 10 + (rest[i] - '0');
    rest.remove_prefix(n + after.size());
    return value;
  };
  auto cpu = number(" stuck for ");
  if (!cpu) return std::nullopt;
  auto seconds = number("s!");
  if (!seconds) return std::nullopt;
  return SoftLockup{*cpu, *seconds};
}

std::optional<std::string> every_cpu_stuck(std::string_view text, int cpus, int min_seconds) {
  if (cpus <= 0) return std::nullopt;
  struct Stuck {
    int seconds = 0;
    std::string where;
  };
  std::map<int, Stuck> stuck;  // by CPU: its longest report, and the RIP line after it
  std::optional<int> pending;  // a report whose "RIP:" line has not come yet
  int lines_since = 0;
  for_each_line(text, [&](std::string_view line) {
    if (auto s = parse_soft_lockup(line)) {
      pending.reset();
      if (s->seconds < min_seconds) return;
      if (stuck.size() >= 4096 && !stuck.count(s->cpu)) return;  // bounded: guest text
      auto& e = stuck[s->cpu];
      if (s->seconds >= e.seconds) {
        e.seconds = s->seconds;  // its place stays that of an earlier report until a new RIP line
        pending = s->cpu;
        lines_since = 0;
      }
    } else if (pending && ++lines_since <= 12) {
      static constexpr std::string_view rip = "RIP: 0010:";
      if (auto at = line.find(rip); at != std::string_view::npos) {
        stuck[*pending].where = printable_line(line.substr(at + rip.size()), 80);
        pending.reset();
      }
    } else {
      pending.reset();
    }
  });
  if (static_cast<int>(stuck.size()) < cpus) return std::nullopt;
  std::string out;
  for (const auto& [cpu, e] : stuck) {
    if (!out.empty()) out += ", ";
    out += "CPU#" + std::to_string(cpu) + " stuck for " + std::to_string(e.seconds) + " s";
    if (!e.where.empty()) out += " at " + e.where;
  }
  return out;
}

namespace {
std::string read_range(const std::filesystem::path& file, uint64_t from, size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  size_t start = size > max_bytes ? size - max_bytes : 0;
  bool cut = start > 0 && start > from;
  start = std::max<size_t>(start, std::min<uint64_t>(from, size));
  in.seekg(static_cast<std::streamoff>(start));
  std::string data(size - start, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (cut) {
    auto nl = data.find('\n');
    if (nl != std::string::npos) data.erase(0, nl + 1);
  }
  return data;
}
}  // namespace

std::string read_console(const std::filesystem::path& file, size_t max_bytes) { return read_range(file, 0, max_bytes); }

std::string read_console_since(const std::filesystem::path& file, uint64_t from, size_t max_bytes) {
  return read_range(file, from, max_bytes);
}

}  // namespace smtlab::vm
