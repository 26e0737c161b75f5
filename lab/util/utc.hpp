#pragma once
// The current UTC time as text.
#include <string>

namespace smtlab {

// strftime of the current UTC time: ISO 8601 ("2026-12-07T06:30:00Z") by default; directory
// names use "%Y%m%d-%H%M%S".
std::string utc_now(const char* format = "%Y-%m-%dT%H:%M:%SZ");

}  // namespace smtlab
