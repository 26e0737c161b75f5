// What a guest writes to the host is bounded (vm/guest_output.hpp): the checks the guest session
// makes on a console log or results channel file, and the capped read of a channel.
#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "scratch.hpp"
#include "util/files.hpp"
#include "util/limits.hpp"
#include "vm/guest_output.hpp"

using namespace smtlab;
using namespace smtlab::vm;

namespace {

void write(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
}

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

}  // namespace

TEST_CASE("a console or channel file over its cap is seen, and the error says what, how much and where", "[output]") {
  const auto file = test::scratch_dir("output") / "console-vm0.log";
  const OutputCap cap{"console", 1000};
  CHECK(bytes_over(file, cap) == 0);  // not there yet
  write(file, pattern(1000));
  CHECK(bytes_over(file, cap) == 0);  // at the cap is allowed
  write(file, pattern(1001));
  CHECK(bytes_over(file, cap) == 1);

  CHECK(over_cap_error(0, console_cap(), file) ==
        "VM 0 wrote more than 64 MiB to its console (a console flood; the first 64 MiB are kept in console-vm0.log)");
  CHECK(over_cap_error(1, channel_cap(), "/x/stream-vm1.jsonl") ==
        "VM 1 wrote more than 256 MiB to its results channel (a results channel flood; the first 256 MiB are kept in "
        "stream-vm1.jsonl)");
  CHECK(console_cap().cap == limits::kMaxConsoleBytesPerVm);
  CHECK(channel_cap().cap == limits::kMaxChannelBytesPerVm);
}

TEST_CASE("a file over its cap is cut back to its first cap bytes and a note, one within it is left alone", "[output]") {
  const auto dir = test::scratch_dir("output-cut");
  const OutputCap cap{"console", 4096};
  const auto within = dir / "within.log";
  write(within, pattern(4096));
  CHECK_FALSE(cut_to_cap(within, cap));
  CHECK(read_file(within) == pattern(4096));

  const auto over = dir / "over.log";
  write(over, pattern(3 * 4096 + 17));
  CHECK(cut_to_cap(over, cap));
  CHECK(read_file(over) == pattern(4096) + cut_note(cap));
  CHECK(cut_note(cap) == "\n[smtlab: console cut at 4096 bytes; the rest of the guest's output was dropped]\n");
  // A file a StreamPump already cut (the same note after the cap) stays as it is.
  CHECK(cut_to_cap(over, cap));
  CHECK(read_file(over) == pattern(4096) + cut_note(cap));
}

TEST_CASE("a capped tail reads a channel as it grows, up to its cap and no further, and says what it left", "[output]") {
  const auto file = test::scratch_dir("output-tail") / "stream-vm0.jsonl";
  CappedTail tail(file, 100);
  CHECK(tail.read(1 << 20).empty());  // not there yet
  std::ofstream out(file, std::ios::binary);
  out << pattern(30) << std::flush;
  CHECK(tail.read(10) == pattern(10));  // at most max_bytes a call
  CHECK(tail.read(1 << 20) == pattern(30).substr(10));
  CHECK(tail.read(1 << 20).empty());
  CHECK(tail.bytes_beyond() == 0);
  const std::string more = pattern(130);
  out << more.substr(30) << std::flush;  // 130 bytes in all: 30 over the cap
  CHECK(tail.read(1 << 20) == more.substr(30, 70));
  CHECK(tail.bytes_read() == 100);
  CHECK(tail.read(1 << 20).empty());
  CHECK(tail.bytes_beyond() == 30);
}

TEST_CASE("the last read of a channel gets everything up to the cap, past the size of one pump", "[output]") {
  // The session's last pump reads in pieces of 8 MiB until nothing is left (it once stopped at
  // the first 8 MiB, and the records after them were reported missing).
  const auto file = test::scratch_dir("output-last") / "stream-vm0.jsonl";
  const size_t piece = 8 << 20;
  const std::string text = pattern(2 * piece + 5);
  write(file, text);
  CappedTail tail(file, limits::kMaxChannelBytesPerVm);
  std::string all;
  size_t pieces = 0, largest = 0;
  tail.read_all(piece, [&](std::string bytes) {
    ++pieces;
    largest = std::max(largest, bytes.size());
    all += bytes;
  });
  CHECK(pieces == 3);
  CHECK(largest == piece);
  CHECK(all.size() == text.size());
  const bool same = all == text;  // not CHECK(all == text): Catch would print 16 MiB
  CHECK(same);
  CHECK(tail.bytes_beyond() == 0);
}

TEST_CASE("the caps are the defaults, or lower ones in whole MiB from the environment, anything else refused", "[output]") {
  ::unsetenv("SMTLAB_CONSOLE_CAP_MIB");
  ::unsetenv("SMTLAB_CHANNEL_CAP_MIB");
  CHECK(console_cap().cap == limits::kMaxConsoleBytesPerVm);
  CHECK(channel_cap().cap == limits::kMaxChannelBytesPerVm);
  ::setenv("SMTLAB_CONSOLE_CAP_MIB", "1", 1);
  ::setenv("SMTLAB_CHANNEL_CAP_MIB", "256", 1);  // the default itself is taken
  CHECK(console_cap().cap == 1u << 20);
  CHECK(channel_cap().cap == limits::kMaxChannelBytesPerVm);
  for (const char* bad : {"0", "65", "1.5", "2M", "-1", " 1", "99999999999999999999999"}) {
    INFO(bad);
    ::setenv("SMTLAB_CONSOLE_CAP_MIB", bad, 1);
    CHECK_THROWS_WITH(console_cap(), Catch::StartsWith("SMTLAB_CONSOLE_CAP_MIB=" + std::string(bad).substr(0, 40) +
                                                       " is not a cap smtlab takes"));
  }
  ::setenv("SMTLAB_CONSOLE_CAP_MIB", "", 1);  // empty: the default
  CHECK(console_cap().cap == limits::kMaxConsoleBytesPerVm);
  ::unsetenv("SMTLAB_CONSOLE_CAP_MIB");
  ::unsetenv("SMTLAB_CHANNEL_CAP_MIB");
}
