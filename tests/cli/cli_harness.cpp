#include "cli_harness.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "util/files.hpp"
#include "util/process.hpp"
#include "checkout.hpp"
#include "scratch.hpp"

namespace smtlab::test {

std::string smtlab_binary() { return (binary_dir() / "bin/smtlab").string(); }
std::string test_recipe(const std::string& name) { return (source_dir() / "tests/cli/recipes" / name).string(); }

Finished run_smtlab(const std::vector<std::string>& args, std::chrono::seconds timeout,
                    const std::map<std::string, std::string>& env) {
  std::vector<std::string> argv = {smtlab_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions o;
  o.timeout = timeout;
  o.env = env;
  auto r = run_process(argv, o);
  Finished f;
  f.status = r.signal ? 128 + r.signal : r.exit_code;
  f.out = r.out;
  f.err = r.err;
  return f;
}

Background::Background(const std::vector<std::string>& args) {
  err_file_ = scratch_path("background.err");
  std::vector<std::string> argv = {smtlab_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ == 0) {
    int fd = ::open(err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    int null = ::open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
}

Background::~Background() {
  if (pid_ > 0 && status_ == -2) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::filesystem::remove(err_file_);
}

std::string Background::err() const {
  std::ifstream in(err_file_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool Background::wait_for_err(const std::string& text, std::chrono::seconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (err().find(text) != std::string::npos) return true;
    int st = 0;
    if (waitpid(pid_, &st, WNOHANG) == pid_) return err().find(text) != std::string::npos;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

int Background::wait(std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int st = 0;
    pid_t r = waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return status_;
    }
    if (r < 0) return status_ = -3;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

std::vector<int> qemu_processes(const std::string& needle) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // The process may exit while it is read: its files then read as "".
    const std::string cmd = read_file_head(entry.path() / "cmdline", 1 << 20);
    const std::string stat = read_file_head(entry.path() / "stat", 1 << 20);
    auto close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z') continue;  // zombie
    if (cmd.rfind("qemu-system", 0) == std::string::npos && cmd.find("/qemu-system") == std::string::npos) continue;
    if (cmd.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

nlohmann::json read_json(const std::filesystem::path& file) { return nlohmann::json::parse(read_file(file)); }

std::string run_failure_summary(const std::filesystem::path& results_dir, const std::string& err) {
  std::ostringstream o;
  try {
    auto manifest = read_json(results_dir / "manifest.json");
    for (const auto& c : manifest.value("cells", nlohmann::json::array())) {
      auto status = c.value("status", std::string("?"));
      if (status == "ok") continue;
      auto id = c.value("id", std::string("?"));
      o << "cell " << id << ": " << status << ": " << c.value("error", std::string()) << "\n";
      std::istringstream console(c.value("console_tail", std::string()));
      std::vector<std::string> lines;
      for (std::string line; std::getline(console, line);) {
        lines.push_back(line);
        if (lines.size() > 12) lines.erase(lines.begin());
      }
      for (const auto& l : lines) o << "  | " << l << "\n";
    }
  } catch (const std::exception& e) {
    o << "(no readable manifest: " << e.what() << ")\n";
  }
  constexpr std::size_t tail = 3000;
  o << "stderr tail:\n" << (err.size() > tail ? "..." + err.substr(err.size() - tail) : err);
  return o.str();
}

}  // namespace smtlab::test
