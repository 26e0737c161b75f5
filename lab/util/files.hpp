#pragma once
// Small file helpers: bounded reads and atomic publication.
#include <filesystem>
#include <string>

namespace smtlab {

// Reads a whole file; throws smtlab::Error (naming the file) when it cannot, or when it is larger
// than max_bytes.
std::string read_file(const std::filesystem::path& file, size_t max_bytes = 64 << 20);

// Writes through a temporary file in the same directory, fsyncs, then renames over `file`:
// readers see the old or the new content, never a torn one.
void write_file_atomic(const std::filesystem::path& file, const std::string& content);

// Appends a line and flushes it to disk (results are never lost to a crash after this returns).
void append_line_durable(const std::filesystem::path& file, const std::string& line);

}  // namespace smtlab
