#pragma once
// Internal to the recipe module: typed, located access to a YAML document. Every accessor throws
// RecipeError pointing at the offending node, saying what is allowed.
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "recipe/recipe.hpp"
#include "recipe/recipe_error.hpp"

namespace smtlab::recipe::detail {

// One YAML file: how it is shown in messages, where its relative paths start, its parsed root.
class YamlFile {
 public:
  // Reads and parses `file` (shown as `display`); YAML syntax errors become RecipeErrors.
  static YamlFile load(const std::filesystem::path& file, const std::filesystem::path& display);

  const YAML::Node& root() const { return root_; }
  const std::string& text() const { return text_; }
  const std::filesystem::path& display() const { return display_; }
  const std::filesystem::path& absolute() const { return absolute_; }
  std::filesystem::path dir() const { return absolute_.parent_path(); }

  SourceLocation at(const YAML::Node& node) const;
  [[noreturn]] void fail(const YAML::Node& at, std::string what, std::string hint = {}) const;

  // A path written in this file: absolute as given, else relative to this file's directory; normalised,
  // without a trailing separator. Read it with path_text(): "" would be the directory itself.
  std::filesystem::path resolve(const std::string& written) const;
  // How a file referenced from this one is shown in messages.
  std::filesystem::path display_of(const std::string& written) const;

 private:
  std::string text_;
  std::filesystem::path display_, absolute_;
  YAML::Node root_;
};

enum class PathKind { file, directory, any };
// What keeps `path` (written in a recipe) from being used as a `kind`, in words that follow its
// name: "not found", "is not a file", "is not a directory", "cannot be looked up: File name too
// long"; empty when nothing does. Never throws: the path is the user's text.
std::string path_problem(const std::filesystem::path& path, PathKind kind);

// A key and its value, for messages that point at either.
struct Entry {
  const YamlFile* file = nullptr;
  std::string key;
  YAML::Node key_node, value;
  // Null values carry the mark of what follows them: point at the key instead.
  const YAML::Node& anchor() const { return value.IsNull() ? key_node : value; }
  [[noreturn]] void fail(std::string what, std::string hint = {}) const { file->fail(anchor(), std::move(what), std::move(hint)); }
  SourceLocation where() const { return file->at(anchor()); }
};

// A YAML mapping whose keys have been checked against the allowed ones (with "did you mean"),
// for duplicates, and for being plain scalars.
class Map {
 public:
  // `what` names the mapping in messages ("recipe", "topology 'smt'"); `located` is the node to
  // point at when the mapping itself is wrong (e.g. the key whose value it is). An empty
  // `allowed` accepts any key (mappings whose keys are names). `shape_hint` is the hint when the
  // node is not a mapping (default: the allowed keys, or how to write names).
  Map(const YamlFile& file, const YAML::Node& node, std::string what, std::vector<std::string> allowed,
      const YAML::Node* located = nullptr, std::string shape_hint = {});

  std::optional<Entry> get(std::string_view key) const;
  Entry need(std::string_view key, std::string hint = {}) const;
  bool has(std::string_view key) const { return get(key).has_value(); }
  const std::vector<Entry>& entries() const { return entries_; }
  const YamlFile& file() const { return *file_; }
  const YAML::Node& node() const { return node_; }
  const std::string& what() const { return what_; }
  [[noreturn]] void fail(std::string message, std::string hint = {}) const;

 private:
  const YamlFile* file_;
  YAML::Node node_;
  YAML::Node located_;
  std::string what_;
  std::vector<Entry> entries_;
};

// Typed values. Messages name the key ("'iterations' must be ...").
std::string text(const Entry& e);                       // any scalar
std::string name(const Entry& e);                       // [A-Za-z0-9][A-Za-z0-9._+-]*, <= 64 chars
std::string path_text(const Entry& e);                  // a non-empty scalar, for resolve()
// The name of `what` ("the recipe") when it has none: its file's name without .yaml, checked as
// name() checks a written one (a failure points at `at`).
std::string default_name(const YamlFile& file, const YAML::Node& at, const std::string& what);
long integer(const Entry& e, long min, long max);
double number(const Entry& e, double min, double max);
bool boolean(const Entry& e);                           // true/false, yes/no, on/off
std::vector<std::string> words(const Entry& e);         // a list of strings, or one string split on spaces
std::vector<long> integers(const Entry& e, long min, long max);  // one integer or a list; no repeats
std::map<std::string, std::string> string_map(const Entry& e);  // flat mapping of scalars
int mebibytes(const Entry& e, long min_mib, long max_mib);  // 768, "768M", "1G", "1.5G"

std::string did_you_mean_hint(std::string_view word, const std::vector<std::string>& candidates);

// One of a fixed set of words, e.g. {"none", Pinning::none}.
template <typename T>
T choice(const Entry& e, const std::vector<std::pair<std::string, T>>& options) {
  std::vector<std::string> names;
  for (const auto& [n, v] : options) names.push_back(n);
  if (!e.value.IsScalar()) {
    std::string allowed;
    for (size_t i = 0; i < names.size(); ++i) allowed += (i ? ", " : "") + names[i];
    e.fail("'" + e.key + "' must be one of: " + allowed, "allowed: " + allowed);
  }
  std::string v = e.value.Scalar();
  for (const auto& [n, val] : options)
    if (n == v) return val;
  e.fail("'" + v + "' is not a valid " + e.key, did_you_mean_hint(v, names));
}

// A sequence node, non-empty, without empty items; `item_hint` names an item ("variant").
std::vector<YAML::Node> sequence(const Entry& e, std::string_view item_hint);
// Fails at the list's key when an item of a list is empty ('-' alone, or null): yaml-cpp marks such
// an item where whatever follows it starts. `item` says what to write ("a variant").
void no_empty_items(const Entry& e, std::string_view item);

}  // namespace smtlab::recipe::detail
