#include "util/utf8.hpp"

#include <algorithm>

namespace smtlab {

size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto b = [&s](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // no overlong forms
    if (c == 0xed) hi = 0x9f;  // no surrogates (U+D800-U+DFFF)
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // no overlong forms
    if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;  // a continuation byte, 0xc0/0xc1 (overlong) or 0xf5-0xff
  }
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xbf) return 0;
  return n;
}

size_t utf8_invalid_at(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_sequence_length(s.substr(i, 4));
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string utf8_clean(std::string_view bytes, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(bytes.size(), max_bytes));
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t n = utf8_sequence_length(bytes.substr(pos, 4));
    if (out.size() + (n ? n : 1) > max_bytes) break;
    if (n) out.append(bytes.substr(pos, n));
    else out += '?';
    pos += n ? n : 1;
  }
  return out;
}

std::string printable_line(std::string_view line, size_t max_bytes) {
  const std::string valid = utf8_clean(line, max_bytes);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    if (c == '\r') continue;
    if (c == 0xc2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) < 0xa0) {
      out += '?';  // U+0080-U+009F: C1 controls (CSI among them), two bytes in UTF-8
      ++i;
      continue;
    }
    out += (c < 0x20 && c != '\t') || c == 0x7f ? '?' : static_cast<char>(c);
  }
  return out;
}

std::string printable_text(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t pos = 0;
  while (pos <= text.size() && out.size() < max_bytes) {
    const size_t nl = text.find('\n', pos);
    const std::string_view line = text.substr(pos, nl == std::string_view::npos ? text.npos : nl - pos);
    out += printable_line(line, max_bytes - out.size());
    if (nl == std::string_view::npos || out.size() >= max_bytes) break;
    out += '\n';
    pos = nl + 1;
  }
  return out;
}

}  // namespace smtlab
