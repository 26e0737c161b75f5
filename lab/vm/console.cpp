#include "vm/console.hpp"

#include <fstream>
#include <optional>

#include "util/error.hpp"

namespace smtlab::vm {
namespace {

std::string clean_line(std::string_view line, size_t max = 512) {
  std::string out;
  for (unsigned char c : line.substr(0, max)) {
    if (c == '\r') continue;
    out += (c < 0x20 && c != '\t') || c == 0x7f ? '?' : static_cast<char>(c);
  }
  return out;
}

bool contains(std::string_view line, std::string_view what) {
  return line.find(what) != std::string_view::npos;
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
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++number;
    std::optional<ConsoleProblem> kind;
    if (contains(line, "Kernel panic - not syncing") || contains(line, "end Kernel panic"))
      kind = ConsoleProblem::panic;
    else if (contains(line, "Oops:") || contains(line, "general protection fault"))
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
    if (kind) out.push_back({*kind, number, clean_line(line)});
  }
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
    out += clean_line(tail.substr(pos, nl == std::string_view::npos ? tail.npos : nl - pos), 4096);
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

std::string read_console(const std::filesystem::path& file, size_t max_bytes) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(std::max<std::streamoff>(0, in.tellg()));
  size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string data(size - start, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  if (start > 0) {
    auto nl = data.find('\n');
    if (nl != std::string::npos) data.erase(0, nl + 1);
  }
  return data;
}

}  // namespace smtlab::vm
