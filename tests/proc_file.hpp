#pragma once
// Reading another process's /proc files in tests: the process may exit between listing /proc and
// the read (the read then fails with ESRCH, which std::ifstream turns into an exception).
#include <cstddef>
#include <filesystem>
#include <string>

namespace smtlab::test {

// The file's first `max_bytes`, or "" when it cannot be opened or read (the process is gone).
std::string read_proc_file(const std::filesystem::path& file, size_t max_bytes = 1 << 20);

}  // namespace smtlab::test
