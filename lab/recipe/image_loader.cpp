// Guest image definitions (images/*.yaml or inline in a recipe).
#include "recipe/recipe_loader.hpp"
#include "recipe/spec_parsers.hpp"

namespace smtlab::recipe {

namespace fs = std::filesystem;
using namespace detail;

namespace {

const std::vector<std::string> kKeys = {"name", "description", "suite", "variant", "mirror", "packages", "files", "size"};
const std::vector<std::string> kVariants = {"extract", "custom",  "essential", "apt",         "required",
                                            "minbase", "buildd",  "important", "debootstrap", "standard"};

bool valid_package(const std::string& p) {
  if (p.size() < 2 || !(std::islower(static_cast<unsigned char>(p[0])) || std::isdigit(static_cast<unsigned char>(p[0]))))
    return false;
  for (char c : p)
    if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '+' ||
          c == '-' || c == '.'))
      return false;
  return true;
}

}  // namespace

namespace detail {

ImageSpec parse_image(const YamlFile& file, const YAML::Node& node, const std::string& what, const YAML::Node* located) {
  Map m(file, node, what, kKeys, located);
  ImageSpec img;
  img.where = file.at(located ? *located : node);
  img.name = m.has("name") ? name(*m.get("name")) : default_name(file, located ? *located : node, "the image");
  if (auto e = m.get("suite")) img.suite = name(*e);
  if (auto e = m.get("variant")) {
    img.variant = text(*e);
    if (std::find(kVariants.begin(), kVariants.end(), img.variant) == kVariants.end())
      e->fail("'" + img.variant + "' is not an mmdebstrap variant", did_you_mean_hint(img.variant, kVariants));
  }
  if (auto e = m.get("mirror")) {
    img.mirror = text(*e);
    if (img.mirror.rfind("http://", 0) != 0 && img.mirror.rfind("https://", 0) != 0 && img.mirror.rfind("file:/", 0) != 0)
      e->fail("'" + img.mirror + "' is not a mirror URL", "write e.g. http://deb.debian.org/debian, or remove 'mirror' to use the host's");
  }
  if (auto e = m.get("packages")) {
    if (!e->value.IsSequence()) e->fail("'packages' must be a list of Debian package names", "write e.g. [gcc, make]");
    no_empty_items(*e, "a package name");
    for (const auto& item : e->value) {
      if (!item.IsScalar() || !valid_package(item.Scalar()))
        file.fail(item, "'" + (item.IsScalar() ? item.Scalar() : std::string("?")) + "' is not a Debian package name",
                  "lower-case letters, digits, '+', '-' and '.'");
      if (std::find(img.packages.begin(), img.packages.end(), item.Scalar()) != img.packages.end())
        file.fail(item, "package '" + item.Scalar() + "' is listed twice", "give each package once");
      img.packages.push_back(item.Scalar());
    }
  }
  if (auto e = m.get("files")) {
    for (const auto& item : sequence(*e, "{source, destination} mapping")) {
      Map fm(file, item, "image file entry", {"source", "destination"});
      auto src = fm.need("source", "the file on the host, relative to this definition");
      auto dst = fm.need("destination", "the absolute path in the guest");
      ImageFile f;
      f.source = file.resolve(path_text(src));
      // The image build copies one regular file to one destination (lab/image/image.cpp).
      if (auto why = path_problem(f.source, PathKind::file); !why.empty())
        src.fail("file '" + file.display_of(src.value.Scalar()).string() + "' " + why,
                 why == "is not a file" ? "give a regular file: a directory's files each need an entry of their own"
                                        : "paths are relative to the file that names them");
      f.destination = text(dst);
      if (f.destination.empty() || f.destination[0] != '/' || f.destination.find("..") != std::string::npos)
        dst.fail("'" + f.destination + "' is not an absolute guest path", "write e.g. /usr/local/bin/tool (no '..')");
      img.files.push_back(f);
    }
  }
  if (auto e = m.get("size")) img.size_mib = mebibytes(*e, 256, 1024 * 1024);
  return img;
}

}  // namespace detail

ImageSpec load_image_spec(const fs::path& file) {
  auto f = YamlFile::load(file, file);
  ImageSpec img = parse_image(f, f.root(), "image definition", nullptr);
  img.definition_file = f.absolute();
  return img;
}

}  // namespace smtlab::recipe
