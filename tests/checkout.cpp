#include "checkout.hpp"

#if !defined(SMTLAB_SOURCE_DIR) || !defined(SMTLAB_BINARY_DIR)
#error "tests/CMakeLists.txt defines SMTLAB_SOURCE_DIR and SMTLAB_BINARY_DIR for this file"
#endif

namespace smtlab::test {

std::filesystem::path source_dir() { return SMTLAB_SOURCE_DIR; }

std::filesystem::path binary_dir() { return SMTLAB_BINARY_DIR; }

}  // namespace smtlab::test
