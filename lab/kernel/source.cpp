// Kernels built from source.
#include "kernel/internal.hpp"
#include "util/error.hpp"

namespace smtlab::kernel::detail {
KernelArtifact prepare_source(const recipe::KernelSpec&, cache::Cache&, Steps&) {
  throw Error("source kernels: not implemented yet");
}
}  // namespace smtlab::kernel::detail
