#pragma once
// Where the tests find the project's own files: the source checkout (recipes, kernel definitions,
// test corpora) and the build directory (the smtlab and smtlab-guest binaries).
//
// Only checkout.cpp is compiled with these paths. A test that used them as macros would differ
// from one clone to the next after preprocessing, and ccache would compile it again in every
// fresh clone (13 test files, each a few seconds on a 2-core runner).
#include <filesystem>

namespace smtlab::test {

// The checkout this build was configured from (CMake's PROJECT_SOURCE_DIR).
std::filesystem::path source_dir();

// Its build directory (CMake's PROJECT_BINARY_DIR): binaries are in bin/.
std::filesystem::path binary_dir();

}  // namespace smtlab::test
