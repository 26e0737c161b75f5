#pragma once
// Where smtlab keeps things on the host.
#include <filesystem>

namespace smtlab {

// $SMTLAB_CACHE, else $XDG_CACHE_HOME/smtlab, else ~/.cache/smtlab. Created if missing.
std::filesystem::path cache_dir();

// The repository (or installed share directory) holding kernels/, images/, recipes/:
// $SMTLAB_HOME, else the nearest parent of the executable that has a kernels/ folder.
std::filesystem::path project_dir();

}  // namespace smtlab
