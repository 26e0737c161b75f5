#pragma once
// UTF-8 for text that came from outside (a guest's console, the strings of its records) before it
// goes into the results manifest (nlohmann's dump() throws on invalid UTF-8) or onto a terminal.
#include <cstddef>
#include <string>
#include <string_view>

namespace smtlab {

// The length of the well-formed UTF-8 sequence that `s` starts with (1-4), or 0 when it starts
// with none: a stray continuation byte, a sequence cut short, an overlong form, a surrogate or a
// code point above U+10FFFF (RFC 3629, Unicode table 3-7). 0 for an empty `s`.
size_t utf8_sequence_length(std::string_view s);

// The offset of the first byte of `s` that is not part of a well-formed sequence, or npos when
// all of `s` is UTF-8.
size_t utf8_invalid_at(std::string_view s);

// `bytes` as valid UTF-8 of at most `max_bytes` bytes: every byte that is not part of a
// well-formed sequence becomes '?', and a cut falls between two characters, never inside one.
// Bounded: reads no more than max_bytes + 3 bytes of the input.
std::string utf8_clean(std::string_view bytes, size_t max_bytes = std::string_view::npos);

// A line of outside text as findings, tails and the terminal show it: utf8_clean's valid UTF-8
// of at most `max_bytes` bytes, with control characters (C0 but tab, DEL and C1: terminal escape
// sequences among them) replaced by '?' and carriage returns dropped.
std::string printable_line(std::string_view line, size_t max_bytes = 512);

// Several lines of outside text (an error message with its hint): each line as printable_line
// makes it, newlines kept, at most `max_bytes` bytes in all.
std::string printable_text(std::string_view text, size_t max_bytes = 4096);

}  // namespace smtlab
