#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>

#include "util/error.hpp"

namespace smtlab {

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha256(), nullptr);
}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

Sha256& Sha256::update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
  return *this;
}

Sha256& Sha256::field(std::string_view name, std::string_view value) {
  update(name);
  update("=");
  update(std::to_string(value.size()));
  update(":");
  update(value);
  return update("\n");
}

std::string Sha256::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md.data(), &len);
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(digits[md[i] >> 4]);
    out.push_back(digits[md[i] & 15]);
  }
  return out;
}

std::string sha256_hex(std::string_view data) { return Sha256().update(data).hex(); }

std::string sha256_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("cannot read " + file.string() + " to compute its sha256");
  Sha256 h;
  std::array<char, 1 << 16> buf{};
  while (in) {
    in.read(buf.data(), buf.size());
    h.update(std::string_view(buf.data(), static_cast<size_t>(in.gcount())));
  }
  return h.hex();
}

}  // namespace smtlab
