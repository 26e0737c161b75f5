#pragma once
// Scratch directories for tests. Every one lives under one root per test process,
// <tmp>/smtlab-test-<pid>/, which the shared test main removes when the process passes; a process
// that fails (or runs with SMTLAB_KEEP_TEST_DIRS set) keeps it and says where, for a post-mortem.
#include <filesystem>
#include <string>

namespace smtlab::test {

// The calling process's root: <tmp>/smtlab-test-<pid>. Not created.
std::filesystem::path scratch_root();

// A new path <root>/<n>-<name> (n counts the calls, so every call gets its own) that does not
// exist, for what the code under test creates itself, such as a results directory. The root exists.
std::filesystem::path scratch_path(const std::string& name);

// The same, created as an empty directory.
std::filesystem::path scratch_dir(const std::string& name);

// What the test main does after the run: removes the root when `passed` and
// SMTLAB_KEEP_TEST_DIRS is unset; otherwise returns the kept root's path ("" when none exists).
std::string finish_scratch(bool passed);

}  // namespace smtlab::test
