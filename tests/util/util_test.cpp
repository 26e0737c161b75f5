#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "scratch.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "util/sha256.hpp"
#include "util/utf8.hpp"

using namespace smtlab;

TEST_CASE("sha256 matches the published test vectors") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("field hashing keeps field boundaries apart") {
  CHECK(Sha256().field("a", "bc").hex() != Sha256().field("ab", "c").hex());
}

TEST_CASE("run_process passes arguments verbatim, without a shell") {
  auto r = run_process({"printf", "%s|", "$(id)", "a b", "'q'"});
  REQUIRE(r.ok());
  CHECK(r.out == "$(id)|a b|'q'|");
}

TEST_CASE("run_checked names the command and its stderr on failure") {
  try {
    run_checked({"sh", "-c", "echo boom >&2; exit 3"});
    FAIL("no exception");
  } catch (const Error& e) {
    std::string msg = e.what();
    CHECK(msg.find("exited with status 3") != std::string::npos);
    CHECK(msg.find("boom") != std::string::npos);
  }
}

TEST_CASE("run_process kills a command that outlives its timeout") {
  ProcessOptions o;
  o.timeout = std::chrono::milliseconds(200);
  auto r = run_process({"sleep", "10"}, o);
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok());
}

TEST_CASE("shell_quote quotes what a shell would interpret") {
  CHECK(shell_quote({"qemu-img", "create", "a b", "it's"}) == "qemu-img create 'a b' 'it'\\''s'");
}

TEST_CASE("write_file_atomic replaces the whole content") {
  auto dir = smtlab::test::scratch_dir("write-atomic");
  write_file_atomic(dir / "f", "old");
  write_file_atomic(dir / "f", "new content");
  CHECK(read_file(dir / "f") == "new content");
  CHECK_THROWS_AS(read_file(dir / "f", 3), Error);
  CHECK(read_file(dir / "f", 11) == "new content");  // at the limit
  // A directory opens like a file but cannot be read: an error, not an empty content.
  try {
    read_file(dir);
    FAIL("read a directory");
  } catch (const Error& e) {
    CHECK(std::string(e.what()) == "cannot read " + dir.string() + ": Is a directory");
  }
  std::filesystem::remove_all(dir);
}

#include "util/cpulist.hpp"

TEST_CASE("ScopedDirectory starts empty and goes on every path unless released") {
  namespace fs = std::filesystem;
  const auto root = smtlab::test::scratch_dir("scoped");
  fs::create_directories(root / "a");
  write_file_atomic(root / "a" / "stale", "from an earlier process with the same name");
  {
    ScopedDirectory d(root / "a");
    CHECK(fs::is_directory(d.path()));
    CHECK(fs::is_empty(d.path()));
    fs::create_directories(d.path() / "sub");
    write_file_atomic(d.path() / "sub" / "f", "x");
  }
  CHECK_FALSE(fs::exists(root / "a"));
  try {
    ScopedDirectory d(root / "b");
    write_file_atomic(d.path() / "f", "x");
    throw Error("a failure mid-way");
  } catch (const Error&) {
  }
  CHECK_FALSE(fs::exists(root / "b"));
  {
    ScopedDirectory d(root / "c");
    d.release();
  }
  CHECK(fs::is_directory(root / "c"));
}

TEST_CASE("CPU lists parse and format like sysfs") {
  CHECK(parse_cpulist("0-3,8,10-11\n") == std::vector<int>{0, 1, 2, 3, 8, 10, 11});
  CHECK(parse_cpulist("").empty());
  CHECK(format_cpulist({5, 0, 1, 2, 2}) == "0-2,5");
  CHECK_THROWS_AS(parse_cpulist("3-1"), Error);
  CHECK_THROWS_AS(parse_cpulist("a"), Error);
  CHECK_THROWS_AS(parse_cpulist("0-99999"), Error);
  CHECK_THROWS_AS(parse_cpulist("0,,1"), Error);
  CHECK_THROWS_AS(parse_cpulist("1-2-3"), Error);
  CHECK(parse_cpulist("4,0-2,1-5,3,9-9,8") == std::vector<int>{0, 1, 2, 3, 4, 5, 8, 9});
}

namespace {
// Runs `work` in a child process whose address space may grow by at most `headroom` bytes
// beyond what the test process has mapped now; true when it returned normally.
template <class Work>
bool within_memory(size_t headroom, Work work) {
  long pages = 0;
  {
    std::ifstream statm("/proc/self/statm");
    statm >> pages;
  }
  const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(::sysconf(_SC_PAGESIZE));
  pid_t pid = ::fork();
  if (pid == 0) {
    rlimit limit{now + headroom, now + headroom};
    ::setrlimit(RLIMIT_AS, &limit);
    try {
      work();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
}  // namespace

TEST_CASE("a hostile CPU list of repeated full ranges costs one range, not thousands") {
  // What a guest can put in a 64 KiB topology record: "0-4095" nine thousand times. Expanded
  // before de-duplication that is 37 million entries (hundreds of MiB); merged first, 4096.
  std::string hostile;
  for (int i = 0; i < 9000; ++i) hostile += "0-4095,";
  hostile += "17";
  std::vector<int> all(kMaxCpus);
  for (int i = 0; i < kMaxCpus; ++i) all[static_cast<size_t>(i)] = i;
  CHECK(parse_cpulist(hostile) == all);
  CHECK(within_memory(32 << 20, [&] {
    if (parse_cpulist(hostile).size() != all.size()) throw 1;
  }));
  CHECK_THROWS_AS(parse_cpulist(hostile + ",4096"), Error);
}

TEST_CASE("utf8_clean replaces what is not UTF-8 and cuts only between characters") {
  CHECK(utf8_clean("plain ascii") == "plain ascii");
  const std::string valid = "gr\xc3\xb6\xc3\x9f" "e \xe2\x82\xac \xf0\x9f\x98\x80";  // "größe €" and an emoji
  CHECK(utf8_clean(valid) == valid);
  // Stray continuation bytes, a lead byte without its continuation, overlong forms, a surrogate,
  // above U+10FFFF and bytes that never occur: one '?' per byte.
  CHECK(utf8_clean("a\x80" "b") == "a?b");
  CHECK(utf8_clean("[\xc3]") == "[?]");
  CHECK(utf8_clean("\xc0\xaf") == "??");
  CHECK(utf8_clean("\xe0\x80\xaf") == "???");
  CHECK(utf8_clean("\xed\xa0\x80") == "???");
  CHECK(utf8_clean("\xf4\x90\x80\x80") == "????");
  CHECK(utf8_clean("\xfe\xff") == "??");
  CHECK(utf8_clean("end \xe2\x82") == "end ??");
  // A cut never splits a character: 'a' + the 2-byte \xc3\xa4 cut at 2 bytes keeps 'a' only.
  CHECK(utf8_clean("a\xc3\xa4", 2) == "a");
  CHECK(utf8_clean("a\xc3\xa4", 3) == "a\xc3\xa4");
  CHECK(utf8_clean("\xf0\x9f\x98\x80x", 3).empty());
  CHECK(utf8_clean("abc", 0).empty());
  // Every output is valid: cleaning it again changes nothing, and it never exceeds the bound.
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (size_t max : {size_t(0), size_t(1), size_t(2), size_t(3), size_t(100), std::string::npos}) {
    auto once = utf8_clean(all + all, max);
    CHECK(once.size() <= max);
    CHECK(utf8_clean(once) == once);
  }
  CHECK(utf8_sequence_length("") == 0);
  CHECK(utf8_sequence_length("\xe2\x82\xac") == 3);
}

TEST_CASE("printable_line replaces control characters and escape sequences, drops carriage returns") {
  CHECK(printable_line("elsp-2\tok") == "elsp-2\tok");
  CHECK(printable_line("a\x1b[2Jb") == "a?[2Jb");  // ESC: a terminal escape sequence goes nowhere
  CHECK(printable_line("a\xc2\x9b" "2Jb") == "a?2Jb");  // C1 CSI, as UTF-8
  CHECK(printable_line("bell\x07 del\x7f") == "bell? del?");
  CHECK(printable_line("line\r") == "line");
  CHECK(printable_line("gr\xc3\xb6\xc3\x9f" "e") == "gr\xc3\xb6\xc3\x9f" "e");  // UTF-8 kept
  CHECK(printable_line("bad \xff") == "bad ?");
  CHECK(printable_line(std::string(600, 'x')).size() == 512);
  CHECK(printable_line("abcdef", 3) == "abc");
}

TEST_CASE("printable_text keeps an error's lines and cleans each, within its bound") {
  CHECK(printable_text("cannot run x\n  hint: install it") == "cannot run x\n  hint: install it");
  CHECK(printable_text("a\x1b]0;title\x07\nb\r\n") == "a?]0;title?\nb\n");
  CHECK(printable_text("") == "");
  CHECK(printable_text("\n\n") == "\n\n");
  CHECK(printable_text("abc\ndef", 5) == "abc\nd");
  CHECK(printable_text(std::string(10000, '\n')).size() == 4096);
}
