#include "recipe/yaml_reader.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "recipe/suggest.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/utf8.hpp"

namespace smtlab::recipe::detail {

namespace fs = std::filesystem;

namespace {

// Where each YAML document of a stream starts (its '---', or its first token).
struct DocumentStarts : YAML::EventHandler {
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

YamlFile YamlFile::load(const fs::path& file, const fs::path& display) {
  YamlFile f;
  f.display_ = display;
  f.absolute_ = fs::absolute(file).lexically_normal();
  // What is not a YAML definition at all, said as that (a directory read as an empty recipe).
  constexpr size_t kMaxBytes = 4 << 20;
  std::error_code ec;
  const auto status = fs::status(file, ec);
  if (fs::is_directory(status))
    throw RecipeError({display.string(), 0, 0}, "this is a directory, not a YAML file",
                      "give the file itself, e.g. recipes/smoke.yaml");
  if (fs::is_regular_file(status)) {
    const auto size = fs::file_size(file, ec);
    if (!ec && size > kMaxBytes)
      throw RecipeError({display.string(), 0, 0},
                        "the file is " + std::to_string(size) + " bytes, more than the 4 MiB a YAML definition may have",
                        "recipes, kernel and image definitions are small text files: check that this is the file you meant");
  }
  try {
    f.text_ = read_file(file, kMaxBytes);
  } catch (const Error& e) {
    throw RecipeError({display.string(), 0, 0}, e.what(), "check that the file exists and is readable");
  }
  // yaml-cpp passes bytes through; they would end up in JSON (the manifest keeps the recipe's text),
  // which refuses them much later. Columns count bytes, as yaml-cpp's do.
  if (size_t bad = utf8_invalid_at(f.text_); bad != std::string_view::npos) {
    const size_t line_start = f.text_.rfind('\n', bad) == std::string::npos ? 0 : f.text_.rfind('\n', bad) + 1;
    const int line = 1 + static_cast<int>(std::count(f.text_.begin(), f.text_.begin() + static_cast<long>(bad), '\n'));
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(f.text_[bad]));
    throw RecipeError({display.string(), line, static_cast<int>(bad - line_start) + 1},
                      std::string("the file is not valid UTF-8: byte ") + byte + " here",
                      "save it as UTF-8 (e.g. iconv -f latin1 -t utf-8), or write the character as plain ASCII");
  }
  try {
    f.root_ = YAML::Load(f.text_);  // the first document
    // Then where the documents start, so that a second one (after '---') is an error rather than
    // silently ignored. Not YAML::LoadAll: on text that starts no node, such as a stray ',', yaml-cpp
    // 0.7 returns an empty document without reading on, and LoadAll asks for the next one forever.
    // A document that starts where the one before it did is that: not YAML.
    std::istringstream in(f.text_);
    YAML::Parser parser(in);
    DocumentStarts docs;
    while (docs.starts.size() < 3 && parser.HandleNextDocument(docs)) {
      const auto& s = docs.starts;
      if (s.size() >= 2 && s.back().pos == s[s.size() - 2].pos) {
        const YAML::Mark m = s.back();
        const auto pos = static_cast<size_t>(m.pos);
        const unsigned char c = pos < f.text_.size() ? static_cast<unsigned char>(f.text_[pos]) : 0;
        throw RecipeError({display.string(), m.line + 1, m.column + 1},
                          c > 0x20 && c < 0x7f ? std::string("invalid YAML: no value can start with '") +
                                                     static_cast<char>(c) + "' here"
                                               : std::string("invalid YAML: no value can start here"),
                          "check the indentation, quotes and brackets at or just before this point");
      }
    }
    if (docs.starts.size() >= 2) {
      const YAML::Mark m = docs.starts[1];
      throw RecipeError({display.string(), m.line + 1, m.column + 1}, "a second YAML document starts here",
                        "the file is one YAML document: remove this '---' and what follows it, or move that to a file "
                        "of its own");
    }
  } catch (const YAML::ParserException& e) {
    throw RecipeError({display.string(), e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + e.msg,
                      "check the indentation, quotes and brackets at or just before this point");
  } catch (const YAML::Exception& e) {
    throw RecipeError({display.string(), e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + e.msg);
  }
  return f;
}

std::string path_problem(const fs::path& path, PathKind kind) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (status.type() == fs::file_type::not_found) return "not found";
  if (ec) return "cannot be looked up: " + ec.message();
  if (kind == PathKind::file && !fs::is_regular_file(status)) return "is not a file";
  if (kind == PathKind::directory && !fs::is_directory(status)) return "is not a directory";
  return {};
}

SourceLocation YamlFile::at(const YAML::Node& node) const {
  auto m = node.Mark();
  if (m.line < 0) return {display_.string(), 1, 1};
  return {display_.string(), m.line + 1, m.column + 1};
}

void YamlFile::fail(const YAML::Node& node, std::string what, std::string hint) const {
  throw RecipeError(at(node), std::move(what), std::move(hint));
}

// "trees/linux-a/" is "trees/linux-a": a path is known by its last component (cell definitions name
// a kernel tree by it), which a trailing separator would leave empty. "/" stays "/".
static fs::path normal(const fs::path& p) {
  fs::path n = p.lexically_normal();
  while (!n.has_filename() && n.has_relative_path()) n = n.parent_path();
  return n;
}

fs::path YamlFile::resolve(const std::string& written) const {
  fs::path p(written);
  if (p.is_absolute()) return normal(p);
  return normal(dir() / p);
}

fs::path YamlFile::display_of(const std::string& written) const {
  fs::path p(written);
  if (p.is_absolute()) return normal(p);
  return normal(display_.parent_path() / p);
}

std::string did_you_mean_hint(std::string_view word, const std::vector<std::string>& candidates) {
  return did_you_mean(word, candidates);
}

static std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out;
}

static std::string kind_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "nothing";
  }
}

// yaml-cpp reads '<<: *defaults' as a key named '<<', not as a merge.
static const char* const kMergeKey = "merge keys ('<<') are not supported";
static const char* const kMergeKeyHint =
    "anchors and aliases are: alias a whole value (key: *name), or write the keys out";

Map::Map(const YamlFile& file, const YAML::Node& node, std::string what, std::vector<std::string> allowed,
         const YAML::Node* located, std::string shape_hint)
    : file_(&file), node_(node), located_(located ? *located : node), what_(std::move(what)) {
  // A mapping whose keys are names has no list of keys to show: say what to write instead.
  if (shape_hint.empty())
    shape_hint = allowed.empty() ? "write one NAME: VALUE per line, indented under '" + what_ + "'"
                                 : "write a mapping of keys: " + join(allowed);
  if (!node.IsMap()) {
    if (node.IsNull())
      file.fail(located_, what_ + " is empty", shape_hint);
    file.fail(node, what_ + " must be a mapping (key: value), got " + kind_of(node), shape_hint);
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    const YAML::Node& k = kv.first;
    if (!k.IsScalar())
      file.fail(k, "keys in " + what_ + " must be plain words", allowed.empty() ? shape_hint : "allowed: " + join(allowed));
    std::string key = k.Scalar();
    if (key == "<<") file.fail(k, kMergeKey, kMergeKeyHint);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      file.fail(k, "unknown key '" + key + "' in " + what_, did_you_mean(key, allowed));
    if (!seen.insert(key).second) file.fail(k, "duplicate key '" + key + "' in " + what_, "give each key once");
    entries_.push_back(Entry{&file, key, k, kv.second});
  }
}

std::optional<Entry> Map::get(std::string_view key) const {
  for (const auto& e : entries_)
    if (e.key == key) return e;
  return std::nullopt;
}

Entry Map::need(std::string_view key, std::string hint) const {
  if (auto e = get(key)) return *e;
  fail("missing key '" + std::string(key) + "' in " + what_, std::move(hint));
}

void Map::fail(std::string message, std::string hint) const { file_->fail(located_, std::move(message), std::move(hint)); }

std::string text(const Entry& e) {
  if (!e.value.IsScalar())
    e.fail("'" + e.key + "' must be a single value (text), got " + kind_of(e.value),
           e.value.IsNull() ? "write a value after the colon" : "write it on one line, not as a list or mapping");
  return e.value.Scalar();
}

static const char* const kNameRule = "names are up to 64 letters, digits, '.', '_', '-' or '+', starting with a letter or digit";

static bool valid_name(std::string_view s) {
  auto ascii_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (s.empty() || s.size() > 64 || !ascii_alnum(s[0])) return false;
  for (char c : s)
    if (!(ascii_alnum(c) || c == '.' || c == '_' || c == '-' || c == '+')) return false;
  return true;
}

std::string path_text(const Entry& e) {
  std::string s = text(e);
  if (s.empty())
    e.fail("'" + e.key + "' is empty", "write a path; relative ones start in the directory of " + e.file->display().string());
  return s;
}

std::string name(const Entry& e) {
  std::string s = text(e);
  if (!valid_name(s)) e.fail("'" + s + "' is not a valid " + e.key, kNameRule);
  return s;
}

std::string default_name(const YamlFile& file, const YAML::Node& at, const std::string& what) {
  std::string s = file.display().stem().string();
  if (!valid_name(s))
    file.fail(at, what + " has no 'name', and its file name '" + s + "' is not a valid name",
              std::string("add name: NAME (") + kNameRule + "), or rename the file");
  return s;
}

static std::string range_text(long min, long max) {
  return "between " + std::to_string(min) + " and " + std::to_string(max);
}

long integer(const Entry& e, long min, long max) {
  if (!e.value.IsScalar())
    e.fail("'" + e.key + "' must be a whole number, got " + kind_of(e.value), "write a whole number " + range_text(min, max));
  const std::string& s = e.value.Scalar();
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && p == s.data() + s.size() && (v < min || v > max)))
    e.fail("'" + e.key + "' must be " + range_text(min, max) + ", got " + s,
           "allowed: whole numbers from " + std::to_string(min) + " to " + std::to_string(max));
  if (ec != std::errc() || p != s.data() + s.size() || s.empty())
    e.fail("'" + e.key + "' must be a whole number, got '" + s + "'", "write a whole number " + range_text(min, max));
  return v;
}

double number(const Entry& e, double min, double max) {
  if (!e.value.IsScalar()) e.fail("'" + e.key + "' must be a number, got " + kind_of(e.value));
  const std::string& s = e.value.Scalar();
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  auto show = [](double d) {
    std::string t = std::to_string(d);
    while (t.size() > 1 && t.back() == '0') t.pop_back();
    if (!t.empty() && t.back() == '.') t.pop_back();
    return t;
  };
  if (ec != std::errc() || p != s.data() + s.size() || s.empty() || !std::isfinite(v))
    e.fail("'" + e.key + "' must be a number, got '" + s + "'", "write a number such as 1 or 0.5");
  if (v < min || v > max)
    e.fail("'" + e.key + "' must be between " + show(min) + " and " + show(max) + ", got " + s,
           "allowed: numbers from " + show(min) + " to " + show(max));
  return v;
}

bool boolean(const Entry& e) {
  if (e.value.IsScalar()) {
    const std::string& s = e.value.Scalar();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  e.fail("'" + e.key + "' must be true or false, got " + kind_of(e.value), "allowed: true, false (or yes/no, on/off)");
}

static bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

static std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

std::vector<std::string> words(const Entry& e) {
  // Words are compared as words (a topology's nosmt) and are part of cell definitions, so one
  // word is one item: "quiet nosmt" in a list would be another cell than [quiet, nosmt].
  const std::string control = "'" + e.key + "' holds a line break or another control character";
  if (e.value.IsScalar()) {
    const std::string& s = e.value.Scalar();
    if (std::any_of(s.begin(), s.end(), is_control))
      e.fail(control, "write the words on one line, e.g. " + e.key + ": quiet nosmt, or as a list: [quiet, nosmt]");
    return split_words(s);
  }
  if (!e.value.IsSequence())
    e.fail("'" + e.key + "' must be a list of words, got " + kind_of(e.value), "write e.g. [nosmt, quiet]");
  no_empty_items(e, "a word");
  std::vector<std::string> out;
  for (const auto& item : e.value) {
    if (!item.IsScalar() || item.Scalar().empty())
      e.file->fail(item.IsNull() ? e.value : item, "items of '" + e.key + "' must be plain words, got " + kind_of(item));
    const std::string& s = item.Scalar();
    if (std::any_of(s.begin(), s.end(), is_control))
      e.file->fail(item, "an item of '" + e.key + "' holds a line break or another control character",
                   "one word per item, e.g. [quiet, nosmt]");
    if (s.find_first_of(" \t") != std::string::npos) {
      std::string list;
      for (const auto& w : split_words(s)) list += (list.empty() ? "" : ", ") + w;
      e.file->fail(item, "item '" + s + "' of '" + e.key + "' holds whitespace",
                   list.empty() ? "one word per item, e.g. [quiet, nosmt]" : "one word per item: write [" + list + "]");
    }
    out.push_back(s);
  }
  return out;
}

std::vector<long> integers(const Entry& e, long min, long max) {
  std::vector<long> out;
  if (e.value.IsScalar()) return {integer(e, min, max)};
  if (!e.value.IsSequence() || e.value.size() == 0)
    e.fail("'" + e.key + "' must be a whole number or a non-empty list of them, got " + kind_of(e.value),
           "write e.g. [2, 4, 8]");
  no_empty_items(e, "a number");
  for (const auto& item : e.value) {
    Entry sub{e.file, e.key, item, item};
    long v = integer(sub, min, max);
    if (std::find(out.begin(), out.end(), v) != out.end())
      e.file->fail(item, std::to_string(v) + " is listed twice in '" + e.key + "'", "give each value once");
    out.push_back(v);
  }
  return out;
}

std::map<std::string, std::string> string_map(const Entry& e) {
  if (e.value.IsNull()) return {};
  if (!e.value.IsMap())
    e.fail("'" + e.key + "' must be a mapping (name: value), got " + kind_of(e.value), "write e.g. {name: value}");
  std::map<std::string, std::string> out;
  for (const auto& kv : e.value) {
    if (!kv.first.IsScalar()) e.file->fail(kv.first, "keys of '" + e.key + "' must be plain words");
    if (kv.first.Scalar() == "<<") e.file->fail(kv.first, kMergeKey, kMergeKeyHint);
    if (!kv.second.IsScalar())
      e.file->fail(kv.second.IsNull() ? kv.first : kv.second,
                   "'" + kv.first.Scalar() + "' in '" + e.key + "' must have a single value, got " + kind_of(kv.second),
                   "write one value per name, e.g. {" + kv.first.Scalar() + ": 1}");
    if (!out.emplace(kv.first.Scalar(), kv.second.Scalar()).second)
      e.file->fail(kv.first, "duplicate key '" + kv.first.Scalar() + "' in '" + e.key + "'", "give each key once");
  }
  return out;
}

int mebibytes(const Entry& e, long min_mib, long max_mib) {
  const std::string hint = "write a size such as 768M, 1G or 1.5G, or a whole number of MiB (" +
                           range_text(min_mib, max_mib) + " MiB)";
  if (!e.value.IsScalar()) e.fail("'" + e.key + "' must be a size, got " + kind_of(e.value), hint);
  std::string s = e.value.Scalar();
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  std::string unit(p, static_cast<size_t>(s.data() + s.size() - p));
  double mult = 0;
  if (unit.empty() || unit == "M" || unit == "MiB" || unit == "m") mult = 1;
  else if (unit == "G" || unit == "GiB" || unit == "g") mult = 1024;
  else if (unit == "T" || unit == "TiB") mult = 1024 * 1024;
  if (ec != std::errc() || s.empty() || mult == 0 || !std::isfinite(v) || v < 0)
    e.fail("'" + s + "' is not a size", hint);
  double mib = v * mult;
  if (mib != std::floor(mib)) e.fail("'" + s + "' is not a whole number of MiB", hint);
  if (mib < static_cast<double>(min_mib) || mib > static_cast<double>(max_mib))
    e.fail("'" + e.key + "' must be " + range_text(min_mib, max_mib) + " MiB, got " + s, hint);
  return static_cast<int>(mib);
}

void no_empty_items(const Entry& e, std::string_view item) {
  if (!e.value.IsSequence()) return;
  int i = 0;
  for (const auto& n : e.value) {
    ++i;
    if (n.IsNull())
      e.file->fail(e.key_node, "item " + std::to_string(i) + " of '" + e.key + "' is empty",
                   "remove the lone '-', or write " + std::string(item) + " after it");
  }
}

std::vector<YAML::Node> sequence(const Entry& e, std::string_view item_hint) {
  if (e.value.IsNull() || (e.value.IsSequence() && e.value.size() == 0))
    e.fail("'" + e.key + "' is empty", "list at least one " + std::string(item_hint));
  if (!e.value.IsSequence())
    e.fail("'" + e.key + "' must be a list, got " + kind_of(e.value), "write each " + std::string(item_hint) + " as a '- ' item");
  no_empty_items(e, "a " + std::string(item_hint));
  std::vector<YAML::Node> out;
  for (const auto& n : e.value) out.push_back(n);
  return out;
}

}  // namespace smtlab::recipe::detail
