// Kernel definitions (kernels/*.yaml or inline in a recipe).
#include <algorithm>
#include <fstream>

#include "recipe/recipe_loader.hpp"
#include "recipe/spec_parsers.hpp"
#include "util/files.hpp"
#include "util/utf8.hpp"

namespace smtlab::recipe {

namespace fs = std::filesystem;
using namespace detail;

namespace {

const std::vector<std::string> kKeys = {"name",        "description", "source",  "package", "version",
                                        "tree",        "ref",         "base_config", "fragments",
                                        "patches",     "bzimage",     "modules", "cmdline"};

bool is_git_url(const std::string& s) {
  return s.find("://") != std::string::npos || s.rfind("git@", 0) == 0 ||
         (s.size() > 4 && s.compare(s.size() - 4, 4, ".git") == 0);
}

bool valid_package(const std::string& p, bool allow_glob) {
  if (p.size() < 2 || !(std::islower(static_cast<unsigned char>(p[0])) || std::isdigit(static_cast<unsigned char>(p[0]))))
    return false;
  int stars = 0;
  for (char c : p) {
    if (c == '*') ++stars;
    else if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '+' ||
               c == '-' || c == '.'))
      return false;
  }
  return stars <= (allow_glob ? 1 : 0);
}

// fragments/patches: a bare name is looked up in `subdir` beside the defining file; anything with
// a '/' is relative to the defining file.
fs::path locate(const YamlFile& file, const std::string& written, const char* subdir) {
  if (written.find('/') == std::string::npos) return (file.dir() / subdir / written).lexically_normal();
  return file.resolve(written);
}

std::string shown(const YamlFile& file, const std::string& written, const char* subdir) {
  if (written.find('/') == std::string::npos)
    return (file.display().parent_path() / subdir / written).lexically_normal().string();
  return file.display_of(written).string();
}

// A patch's name goes into its cell's definition (hence the cell's id) and the results as text, so
// a name that did not come from the (UTF-8) YAML text, a patch directory's entry or a series file's
// line, must be UTF-8. "" when `name` is, else the first byte that is not, "byte 0xe9", at `*at`.
std::string non_utf8_byte(const std::string& name, size_t* at = nullptr) {
  const size_t bad = utf8_invalid_at(name);
  if (bad == std::string::npos) return {};
  if (at) *at = bad;
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(name[bad]));
  return std::string("byte ") + byte;
}

const char* const kRenameHint =
    "rename the file to a UTF-8 name (e.g. convmv -f latin1 -t utf-8 --notest FILE): its name goes into the cell's "
    "definition and the results as text";

// A patch by its name: git format-patch writes *.patch, diff -u users *.diff; patch -p1 takes both.
bool is_patch_file(const fs::path& p) { return p.extension() == ".patch" || p.extension() == ".diff"; }

std::vector<fs::path> patch_list(const Entry& e, const YamlFile& file) {
  std::vector<fs::path> out;
  auto need_file = [&](const YAML::Node& at, const fs::path& p, const std::string& show) {
    if (auto why = path_problem(p, PathKind::file); !why.empty())
      file.fail(at, "patch '" + show + "' " + why, "patches are files relative to the kernel definition");
    out.push_back(p);
  };
  if (e.value.IsSequence()) {
    no_empty_items(e, "a patch file");
    for (const auto& item : e.value) {
      if (!item.IsScalar() || item.Scalar().empty()) file.fail(item, "items of 'patches' must be file names");
      need_file(item, locate(file, item.Scalar(), "patches"), shown(file, item.Scalar(), "patches"));
    }
    if (out.empty()) e.fail("'patches' is empty", "name a directory of *.patch or *.diff files, a series file, or list the files");
    return out;
  }
  std::string written = path_text(e);
  fs::path p = locate(file, written, "patches");
  std::string show = shown(file, written, "patches");
  if (path_problem(p, PathKind::directory).empty()) {
    std::error_code ec;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && is_patch_file(it->path())) out.push_back(it->path().lexically_normal());
    if (ec) e.fail("cannot list the patch directory '" + show + "': " + ec.message());
    for (const auto& patch : out)
      if (auto byte = non_utf8_byte(patch.filename().string()); !byte.empty())
        e.fail("patch '" + utf8_clean(patch.filename().string()) + "' in the patch directory '" + show +
                   "' has a name that is not UTF-8 (" + byte + ")",
               kRenameHint);
    std::sort(out.begin(), out.end());  // an empty queue is allowed: the directory exists, no patch in it yet
    return out;
  }
  if (auto why = path_problem(p, PathKind::file); !why.empty())
    e.fail("patches '" + show + "' " + why,
           "name a directory of *.patch or *.diff files or a series file (bare names are looked up in patches/ beside the kernel "
           "definition)");
  if (is_patch_file(p)) return {p};
  // A quilt-style series file: one patch per line, '#' comments, relative to the series file.
  std::ifstream in(p);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    const size_t start = std::min(line.size(), line.find_first_not_of(" \t\r"));
    line.erase(0, start);
    auto sp = line.find_first_of(" \t\r");
    if (sp != std::string::npos) line.erase(sp);
    if (line.empty()) continue;
    size_t bad = 0;
    if (auto byte = non_utf8_byte(line, &bad); !byte.empty())
      throw RecipeError({show, number, static_cast<int>(start + bad) + 1},
                        "patch name '" + utf8_clean(line) + "' is not UTF-8 (" + byte + " here)",
                        std::string(kRenameHint) + ", and write that name here");
    fs::path patch = (p.parent_path() / line).lexically_normal();
    if (auto why = path_problem(patch, PathKind::file); !why.empty())
      e.fail("patch '" + line + "' listed in series file '" + show + "' " + why, "patch names in a series file are relative to it");
    out.push_back(patch);
  }
  if (out.empty()) e.fail("the series file '" + show + "' lists no patches");
  return out;
}

void only_for(const Map& m, KernelSource source, const std::vector<std::pair<std::string, KernelSource>>& owners) {
  for (const auto& [key, owner] : owners)
    if (auto e = m.get(key); e && owner != source)
      m.file().fail(e->key_node, "'" + key + "' does not apply to source: " + to_string(source),
                    "'" + key + "' belongs to source: " + to_string(owner));
}

}  // namespace

namespace detail {

KernelSpec parse_kernel(const YamlFile& file, const YAML::Node& node, const std::string& what, const YAML::Node* located) {
  Map m(file, node, what, kKeys, located);
  KernelSpec k;
  k.where = file.at(located ? *located : node);
  k.name = m.has("name") ? name(*m.get("name")) : file.display().stem().string();
  k.source = choice<KernelSource>(m.need("source", "allowed: debian, source, path"),
                                  {{"debian", KernelSource::debian}, {"source", KernelSource::source}, {"path", KernelSource::path}});
  only_for(m, k.source,
           {{"package", KernelSource::debian}, {"version", KernelSource::debian}, {"tree", KernelSource::source},
            {"ref", KernelSource::source}, {"base_config", KernelSource::source}, {"fragments", KernelSource::source},
            {"patches", KernelSource::source}, {"bzimage", KernelSource::path}, {"modules", KernelSource::path}});
  switch (k.source) {
    case KernelSource::debian: {
      auto e = m.need("package", "name a Debian kernel image package, e.g. linux-image-6.12.*+deb12-cloud-amd64-unsigned");
      k.package = text(e);
      if (!valid_package(k.package, true))
        e.fail("'" + k.package + "' is not a Debian package name",
               "lower-case letters, digits, '+', '-', '.', and at most one '*' for the newest matching version");
      if (auto v = m.get("version")) k.version = text(*v);
      break;
    }
    case KernelSource::source: {
      auto e = m.need("tree", "allowed: debian:<linux-source package>, a tarball, a directory, or a git URL with ref");
      std::string tree = path_text(e);
      if (tree.rfind("debian:", 0) == 0) {
        if (!valid_package(tree.substr(7), false))
          e.fail("'" + tree.substr(7) + "' is not a Debian package name", "write e.g. debian:linux-source-6.12");
        k.tree = tree;
      } else if (is_git_url(tree)) {
        k.tree = tree;
        auto ref = m.need("ref", "a git tree needs 'ref': a branch, tag or commit");
        k.git_ref = text(ref);
        if (k.git_ref.empty()) ref.fail("'ref' is empty", "give a branch, tag or commit");
      } else {
        fs::path p = file.resolve(tree);
        if (auto why = path_problem(p, PathKind::any); !why.empty())
          e.fail("kernel tree '" + file.display_of(tree).string() + "' " + why,
                 "allowed: debian:<linux-source package>, a tarball, a directory, or a git URL with ref");
        k.tree = p.string();
      }
      if (auto r = m.get("ref"); r && !is_git_url(tree))
        file.fail(r->key_node, "'ref' applies only to a git tree", "remove it, or make 'tree' a git URL");
      if (auto b = m.get("base_config")) {
        std::string base = text(*b);
        if (base != "defconfig" && base != "tinyconfig" &&
            !(base.rfind("debian:", 0) == 0 && valid_package(base.substr(7), true)))
          b->fail("'" + base + "' is not a valid base_config", "allowed: defconfig, tinyconfig, debian:<kernel image package>");
        k.base_config = base;
      }
      if (auto f = m.get("fragments")) {
        if (!f->value.IsSequence() && !f->value.IsScalar())
          f->fail("'fragments' must be a list of config fragment files", "write e.g. [coresched.config]");
        no_empty_items(*f, "a fragment file");
        std::vector<YAML::Node> items;
        if (f->value.IsScalar()) items.push_back(f->value);
        else for (const auto& i : f->value) items.push_back(i);
        for (const auto& item : items) {
          if (!item.IsScalar() || item.Scalar().empty()) file.fail(item, "items of 'fragments' must be file names");
          fs::path p = locate(file, item.Scalar(), "fragments");
          if (auto why = path_problem(p, PathKind::file); !why.empty())
            file.fail(item, "config fragment '" + shown(file, item.Scalar(), "fragments") + "' " + why,
                      "bare names are looked up in fragments/ beside the kernel definition; other paths are relative to it");
          k.fragments.push_back(p);
        }
      }
      if (auto p = m.get("patches")) k.patches = patch_list(*p, file);
      break;
    }
    case KernelSource::path: {
      auto e = m.need("bzimage", "give the path of a built kernel image (bzImage / vmlinuz)");
      fs::path p = file.resolve(path_text(e));
      if (auto why = path_problem(p, PathKind::file); !why.empty())
        e.fail("kernel image '" + file.display_of(e.value.Scalar()).string() + "' " + why);
      k.bzimage = p;
      if (auto mod = m.get("modules")) {
        fs::path d = file.resolve(path_text(*mod));
        if (auto why = path_problem(d, PathKind::directory); !why.empty())
          mod->fail("modules directory '" + file.display_of(mod->value.Scalar()).string() + "' " + why,
                    "give the lib/modules/<version> directory that matches the image, or remove 'modules'");
        k.modules_dir = d;
      }
      break;
    }
  }
  if (auto c = m.get("cmdline")) k.cmdline = words(*c);
  return k;
}

}  // namespace detail

KernelSpec load_kernel_spec(const fs::path& file) {
  auto f = YamlFile::load(file, file);
  KernelSpec k = parse_kernel(f, f.root(), "kernel definition", nullptr);
  // In a recipe the kernel is named by its key; on its own, by its name or its file.
  if (!Map(f, f.root(), "kernel definition", {}).has("name")) k.name = default_name(f, f.root(), "the kernel");
  k.definition_file = f.absolute();
  return k;
}

}  // namespace smtlab::recipe
