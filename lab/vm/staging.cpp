#include "vm/staging.hpp"

#include <fcntl.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

#include "util/error.hpp"
#include "util/log.hpp"
#include "util/sha256.hpp"
#include "vm/connection.hpp"
#include "vm/domain_xml.hpp"
#include "vm/interrupt.hpp"

namespace smtlab::vm {
namespace fs = std::filesystem;

namespace {

bool all_of_set(std::string_view s, std::string_view allowed) {
  return s.find_first_not_of(allowed) == std::string_view::npos;
}

constexpr std::string_view kHex = "0123456789abcdef";
constexpr std::string_view kAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

void require_volume_name(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.find('/') != std::string_view::npos || name == "." || name == "..")
    throw Error("staging: '" + std::string(name) + "' is not usable as a volume name");
  xml_escape(name);  // refuses control characters
}

std::string path_of(virStorageVolPtr vol) {
  char* p = virStorageVolGetPath(vol);
  if (!p) return {};
  std::string s = p;
  free(p);
  return s;
}

}  // namespace

std::string staging_pool_name(const fs::path& dir) {
  return "smtlab-staging-" + sha256_hex(dir.lexically_normal().string()).substr(0, 12);
}

std::string staging_pool_xml(const std::string& name, const fs::path& dir) {
  if (!dir.is_absolute())
    throw Error("staging directory '" + dir.string() + "' must be an absolute path on the libvirt host");
  return "<pool type='dir'>\n  <name>" + xml_escape(name) + "</name>\n  <target>\n    <path>" +
         xml_escape(dir.lexically_normal().string()) + "</path>\n  </target>\n</pool>\n";
}

std::string kernel_volume_name(std::string_view sha256) {
  if (sha256.size() != 64 || !all_of_set(sha256, kHex))
    throw Error("staging: kernel sha256 '" + std::string(sha256) + "' is not 64 lower-case hex digits");
  return "kernel-" + std::string(sha256);
}

std::string image_volume_name(std::string_view digest) {
  if (digest.size() < 8 || digest.size() > 128 || !all_of_set(digest, kAlnum))
    throw Error("staging: image digest '" + std::string(digest) + "' is not 8..128 letters or digits");
  return "image-" + std::string(digest) + ".qcow2";
}

std::string complete_marker_name(std::string_view volume, std::uint64_t bytes) {
  require_volume_name(volume);
  return fmt::format("{}.complete-{}", volume, bytes);
}

std::string vm_volume_name(std::string_view domain, std::string_view suffix) {
  validate_domain_name(domain);
  if (suffix.empty() || !all_of_set(suffix, kAlnum))
    throw Error("staging: volume suffix '" + std::string(suffix) + "' is not letters or digits");
  std::string name = std::string(domain) + "." + std::string(suffix);
  require_volume_name(name);
  if (name.find(' ') != std::string::npos)
    throw Error("staging: volume name '" + name + "' contains a space");
  return name;
}

std::string domain_of_vm_volume(std::string_view volume) {
  std::string_view stem;
  for (std::string_view suffix : {".initrd", ".qcow2"}) {
    if (volume.size() > suffix.size() && volume.substr(volume.size() - suffix.size()) == suffix)
      stem = volume.substr(0, volume.size() - suffix.size());
  }
  // smtlab-<cell>-vm<N>-<6 hex> (unique_domain_name)
  if (stem.rfind("smtlab-", 0) != 0 || stem.size() < 7 + 1 + 4 + 7) return {};
  auto hex = stem.substr(stem.size() - 6);
  if (!all_of_set(hex, kHex) || stem[stem.size() - 7] != '-') return {};
  auto rest = stem.substr(0, stem.size() - 7);  // smtlab-<cell>-vm<N>
  auto vm = rest.rfind("-vm");
  if (vm == std::string_view::npos || vm + 3 >= rest.size() || !all_of_set(rest.substr(vm + 3), "0123456789") ||
      vm <= 7)
    return {};
  return std::string(stem);
}

double volume_mtime(std::string_view xml) {
  auto open = xml.find("<mtime>");
  if (open == std::string_view::npos) return -1;
  open += 7;
  auto close = xml.find("</mtime>", open);
  if (close == std::string_view::npos) return -1;
  std::string text(xml.substr(open, close - open));
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && !text.empty() ? v : -1;
}

std::string upload_volume_xml(const std::string& name, std::uint64_t bytes) {
  require_volume_name(name);
  return fmt::format(
      "<volume>\n  <name>{}</name>\n  <capacity unit='bytes'>{}</capacity>\n  <allocation unit='bytes'>0</allocation>\n"
      "  <target>\n    <format type='raw'/>\n    <permissions><mode>0600</mode></permissions>\n  </target>\n</volume>\n",
      xml_escape(name), bytes);
}

std::string overlay_volume_xml(const std::string& name, const fs::path& backing) {
  require_volume_name(name);
  if (!backing.is_absolute())
    throw Error("staging: backing file '" + backing.string() + "' must be an absolute path on the libvirt host");
  return "<volume>\n  <name>" + xml_escape(name) +
         "</name>\n  <target>\n    <format type='qcow2'/>\n    <permissions><mode>0600</mode></permissions>\n"
         "  </target>\n  <backingStore>\n    <path>" +
         xml_escape(backing.string()) + "</path>\n    <format type='qcow2'/>\n  </backingStore>\n</volume>\n";
}

// --- StagedVolume -------------------------------------------------------------------------

StagedVolume::StagedVolume(Connection& connection, virStoragePoolPtr pool, std::string name, fs::path path)
    : connection_(&connection), pool_(pool), name_(std::move(name)), path_(std::move(path)) {}

StagedVolume::StagedVolume(StagedVolume&& other) noexcept
    : connection_(other.connection_), pool_(other.pool_), name_(std::move(other.name_)), path_(std::move(other.path_)) {
  other.pool_ = nullptr;
  other.name_.clear();
}

StagedVolume& StagedVolume::operator=(StagedVolume&& other) noexcept {
  if (this != &other) {
    remove();
    connection_ = other.connection_;
    pool_ = other.pool_;
    name_ = std::move(other.name_);
    path_ = std::move(other.path_);
    other.pool_ = nullptr;
    other.name_.clear();
  }
  return *this;
}

StagedVolume::~StagedVolume() { remove(); }

void StagedVolume::remove() {
  if (!pool_ || name_.empty()) return;
  if (virStorageVolPtr vol = virStorageVolLookupByName(pool_, name_.c_str())) {
    virStorageVolDelete(vol, 0);
    virStorageVolFree(vol);
  }
  name_.clear();
  pool_ = nullptr;
}

// --- Staging ------------------------------------------------------------------------------

std::unique_ptr<Staging> Staging::open(Connection& connection, const fs::path& dir_in) {
  if (!dir_in.is_absolute())
    throw Error("--remote-dir '" + dir_in.string() + "' must be an absolute path on the libvirt host");
  std::unique_ptr<Staging> s(new Staging());
  s->connection_ = &connection;
  s->dir_ = dir_in.lexically_normal();
  if (s->dir_.string().size() > 1 && s->dir_.string().back() == '/') s->dir_ = s->dir_.parent_path();
  const std::string& uri = connection.info().uri;
  // An existing pool (ours from an earlier run, or one the administrator defined) with that target.
  s->pool_ = virStoragePoolLookupByTargetPath(connection.raw(), s->dir_.c_str());
  if (!s->pool_) {
    std::string name = staging_pool_name(s->dir_);
    std::string xml = staging_pool_xml(name, s->dir_);
    s->pool_ = virStoragePoolCreateXML(connection.raw(), xml.c_str(), VIR_STORAGE_POOL_CREATE_WITH_BUILD);
    if (!s->pool_) {
      std::string why = libvirt_error();
      // Another smtlab may have created it a moment ago.
      s->pool_ = virStoragePoolLookupByName(connection.raw(), name.c_str());
      if (!s->pool_)
        throw Error("cannot create the staging pool " + name + " at " + s->dir_.string() + " on " + uri + ": " + why,
                    "give a directory libvirtd may create and write with --remote-dir DIR, or define a dir pool "
                    "there (virsh pool-define-as NAME dir --target DIR)");
    }
  }
  int active = virStoragePoolIsActive(s->pool_);
  if (active == 0 && virStoragePoolCreate(s->pool_, VIR_STORAGE_POOL_CREATE_WITH_BUILD) < 0) {
    std::string why = libvirt_error();
    virStoragePoolFree(s->pool_);
    s->pool_ = nullptr;
    throw Error("cannot start the storage pool at " + s->dir_.string() + " on " + uri + ": " + why);
  }
  if (const char* n = virStoragePoolGetName(s->pool_)) s->pool_name_ = n;
  // libvirtd keeps a pool's volume list from its last refresh (across its own restarts): files
  // deleted or cut behind its back must not be taken as staged. Refused while another smtlab
  // uploads into the pool; its list is current then anyway.
  virStoragePoolRefresh(s->pool_, 0);
  s->sweep_stale();
  return s;
}

void Staging::sweep_stale() {
  virStorageVolPtr* vols = nullptr;
  int n = virStoragePoolListAllVolumes(pool_, &vols, 0);
  const double now = static_cast<double>(std::time(nullptr));
  for (int i = 0; i < n; ++i) {
    const char* name = virStorageVolGetName(vols[i]);
    std::string domain = name ? domain_of_vm_volume(name) : "";
    if (!domain.empty()) {
      virDomainPtr d = virDomainLookupByName(connection_->raw(), domain.c_str());
      if (d) {
        virDomainFree(d);  // its guest still runs (another smtlab's cell)
      } else if (char* xml = virStorageVolGetXMLDesc(vols[i], 0)) {
        double mtime = volume_mtime(xml);
        free(xml);
        // Old enough that no smtlab is between uploading it and starting its domain.
        if (mtime > 0 && now - mtime > 600) virStorageVolDelete(vols[i], 0);
      }
    }
    virStorageVolFree(vols[i]);
  }
  free(vols);
}

Staging::~Staging() {
  if (pool_) virStoragePoolFree(pool_);
}

void Staging::remove_volume(const std::string& volume) {
  if (virStorageVolPtr vol = virStorageVolLookupByName(pool_, volume.c_str())) {
    virStorageVolDelete(vol, 0);
    virStorageVolFree(vol);
  }
}

bool Staging::upload(const std::string& volume, const fs::path& local, std::uint64_t bytes) {
  const std::string where = volume + " in " + dir_.string() + " on " + connection_->info().uri;
  int fd = ::open(local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("staging: cannot read " + local.string());
  std::string xml = upload_volume_xml(volume, bytes);
  virStorageVolPtr vol = virStorageVolCreateXML(pool_, xml.c_str(), 0);
  if (!vol) {
    std::string why = libvirt_error();
    ::close(fd);
    if (virStorageVolPtr other = virStorageVolLookupByName(pool_, volume.c_str())) {
      virStorageVolFree(other);
      return false;
    }
    throw Error("staging: cannot create volume " + where + ": " + why,
                "another smtlab may be staging the same file right now (try again), or delete the leftover "
                "with virsh vol-delete --pool " + pool_name_ + " " + volume);
  }
  virStreamPtr st = virStreamNew(connection_->raw(), 0);
  std::string failure;
  if (!st) {
    failure = "cannot create a stream: " + libvirt_error();
  } else if (virStorageVolUpload(vol, st, 0, bytes, 0) < 0) {
    failure = "cannot start the upload: " + libvirt_error();
  } else {
    std::vector<char> buf(1 << 20);
    std::uint64_t sent = 0;
    while (failure.empty() && sent < bytes) {
      if (interrupted()) {
        failure = "interrupted";
        break;
      }
      ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0) {
        failure = "cannot read " + local.string();
        break;
      }
      if (n == 0) {
        failure = local.string() + " shrank while it was uploaded";
        break;
      }
      size_t off = 0;
      while (off < static_cast<size_t>(n)) {
        int w = virStreamSend(st, buf.data() + off, static_cast<size_t>(n) - off);
        if (w < 0) {
          failure = "upload failed after " + std::to_string(sent + off) + " bytes: " + libvirt_error();
          break;
        }
        off += static_cast<size_t>(w);
      }
      sent += off;
    }
    if (failure.empty() && virStreamFinish(st) < 0) failure = "the upload did not complete: " + libvirt_error();
    if (!failure.empty()) virStreamAbort(st);
  }
  if (st) virStreamFree(st);
  ::close(fd);
  if (!failure.empty()) {
    virStorageVolDelete(vol, 0);
    virStorageVolFree(vol);
    if (failure == "interrupted") throw Interrupted(interrupt_signal());
    throw Error("staging: " + local.string() + " -> " + where + ": " + failure);
  }
  virStorageVolFree(vol);
  return true;
}

bool Staging::wait_for_marker(const std::string& volume, const std::string& marker) {
  note("staging: " + volume + " has no completion marker yet: waiting while it changes (another smtlab "
       "uploading it?); uploaded again if it stays unchanged for 15 s");
  std::string last;
  auto last_change = std::chrono::steady_clock::now();
  while (true) {
    if (virStorageVolPtr m = virStorageVolLookupByName(pool_, marker.c_str())) {
      virStorageVolFree(m);
      return true;
    }
    virStorageVolPtr v = virStorageVolLookupByName(pool_, volume.c_str());
    if (!v) return false;
    char* xml = virStorageVolGetXMLDesc(v, 0);  // allocation and mtime move while bytes arrive
    std::string now = xml ? xml : "";
    free(xml);
    virStorageVolFree(v);
    if (now != last) {
      last = now;
      last_change = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - last_change > std::chrono::seconds(15)) {
      return false;
    }
    if (interrupted()) throw Interrupted(interrupt_signal());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

fs::path Staging::ensure_uploaded(const std::string& volume, const fs::path& local) {
  std::error_code ec;
  auto bytes = fs::file_size(local, ec);
  if (ec) throw Error("staging: cannot read " + local.string() + ": " + ec.message());
  const std::string marker = complete_marker_name(volume, bytes);
  auto staged_path = [&]() -> std::string {
    virStorageVolPtr v = virStorageVolLookupByName(pool_, volume.c_str());
    std::string p = v ? path_of(v) : "";
    if (v) virStorageVolFree(v);
    return p;
  };
  bool uploaded = false;
  for (int round = 0; round < 3 && !uploaded; ++round) {
    virStorageVolPtr vol = virStorageVolLookupByName(pool_, volume.c_str());
    virStorageVolPtr mark = virStorageVolLookupByName(pool_, marker.c_str());
    bool both = vol && mark, only_volume = vol && !mark, only_marker = !vol && mark;
    if (vol) virStorageVolFree(vol);
    if (mark) virStorageVolFree(mark);
    if (both || (only_volume && wait_for_marker(volume, marker))) {
      if (auto p = staged_path(); !p.empty()) return p;
    }
    // Missing, or a leftover of an upload that did not finish (unchanged for 15 s): upload,
    // then mark it complete. Only what was seen stale is removed: a volume another smtlab
    // creates meanwhile makes our create fail, and the next round waits for it instead.
    if (only_volume) remove_volume(volume);
    if (only_marker) remove_volume(marker);
    uploaded = upload(volume, local, bytes);
  }
  if (!uploaded)
    throw Error("staging: " + volume + " on " + connection_->info().uri +
                    " is being uploaded by another smtlab that does not finish",
                "delete it with virsh vol-delete --pool " + pool_name_ + " " + volume + " and try again");
  std::string mxml = upload_volume_xml(marker, 0);
  virStorageVolPtr m = virStorageVolCreateXML(pool_, mxml.c_str(), 0);
  if (!m)
    throw Error("staging: cannot create the completion marker " + marker + " on " + connection_->info().uri + ": " +
                libvirt_error());
  virStorageVolFree(m);
  std::string path = staged_path();
  if (path.empty()) throw Error("staging: volume " + volume + " vanished after its upload");
  return path;
}

StagedVolume Staging::upload_temporary(const std::string& volume, const fs::path& local) {
  std::error_code ec;
  auto bytes = fs::file_size(local, ec);
  if (ec) throw Error("staging: cannot read " + local.string() + ": " + ec.message());
  remove_volume(volume);
  if (!upload(volume, local, bytes))  // per-VM names are unique: a leftover that would not go
    throw Error("staging: volume " + volume + " exists on " + connection_->info().uri + " and cannot be replaced");
  virStorageVolPtr vol = virStorageVolLookupByName(pool_, volume.c_str());
  std::string path = vol ? path_of(vol) : "";
  if (vol) virStorageVolFree(vol);
  if (path.empty()) {
    remove_volume(volume);
    throw Error("staging: volume " + volume + " has no path after its upload");
  }
  return StagedVolume(*connection_, pool_, volume, path);
}

StagedVolume Staging::create_overlay(const std::string& volume, const fs::path& backing) {
  remove_volume(volume);
  std::string xml = overlay_volume_xml(volume, backing);
  virStorageVolPtr vol = virStorageVolCreateXML(pool_, xml.c_str(), 0);
  if (!vol)
    throw Error("staging: cannot create the overlay " + volume + " on " + backing.string() + " (" +
                connection_->info().uri + "): " + libvirt_error(),
                "qemu-img must be installed on the libvirt host (qemu-utils)");
  std::string path = path_of(vol);
  virStorageVolFree(vol);
  return StagedVolume(*connection_, pool_, volume, path);
}

}  // namespace smtlab::vm
