#pragma once
// SHA-256 digests (OpenSSL), as lower-case hex.
#include <filesystem>
#include <string>
#include <string_view>

namespace smtlab {

std::string sha256_hex(std::string_view data);
// Streams the file; throws smtlab::Error when it cannot be read.
std::string sha256_file(const std::filesystem::path& file);

// Incremental hashing for cache keys built from many inputs.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& update(std::string_view data);
  // Adds "name=<len>:value\n" so that field boundaries cannot be confused.
  Sha256& field(std::string_view name, std::string_view value);
  std::string hex();

 private:
  void* ctx_;
};

}  // namespace smtlab
