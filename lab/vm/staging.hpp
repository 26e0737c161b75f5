#pragma once
// Staging guest files on a remote libvirt host through libvirt's storage API (no scp, no ssh
// of our own): a directory pool on that host (transient, created when missing, or an existing
// pool with the same target path), volumes uploaded with virStorageVolUpload streams, and qcow2
// overlays created there on a staged base. Kernels and base images are uploaded once (named by
// content, a completion marker says the upload finished); per-VM initrds and overlays live for
// one cell. The pure parts (names, XML) are separate from the libvirt calls and unit-tested.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

typedef struct _virStoragePool* virStoragePoolPtr;

namespace smtlab::vm {

class Connection;

inline constexpr const char* kDefaultRemoteDir = "/var/lib/smtlab/staging";

// "smtlab-staging-<first 12 hex of sha256(dir)>": one pool per staging directory.
std::string staging_pool_name(const std::filesystem::path& dir);
// A transient <pool type='dir'> at `dir` (absolute, escaped).
std::string staging_pool_xml(const std::string& name, const std::filesystem::path& dir);

// "kernel-<sha256>" (64 lower-case hex required).
std::string kernel_volume_name(std::string_view sha256);
// "image-<digest>.qcow2" (digest: letters and digits, 8..128).
std::string image_volume_name(std::string_view digest);
// "<volume>.complete-<bytes>": exists only once `volume` holds all `bytes` of its upload.
std::string complete_marker_name(std::string_view volume, std::uint64_t bytes);
// "<domain>.<suffix>" for one guest's files ("initrd", "qcow2"); the domain name is unique.
std::string vm_volume_name(std::string_view domain, std::string_view suffix);
// The domain a per-VM volume belongs to ("smtlab-<cell>-vm<N>-<6 hex>.initrd|.qcow2" ->
// "smtlab-<cell>-vm<N>-<6 hex>"), "" for any other name (kernels, images, markers, others').
std::string domain_of_vm_volume(std::string_view volume);
// The <mtime> (seconds since the epoch) of a volume's XML description; -1 when absent.
double volume_mtime(std::string_view volume_xml);

// A raw volume of `bytes` (sparse: allocation 0) that an upload fills.
std::string upload_volume_xml(const std::string& name, std::uint64_t bytes);
// A qcow2 volume whose backing store is the qcow2 file `backing` on the libvirt host; the
// capacity comes from the backing file.
std::string overlay_volume_xml(const std::string& name, const std::filesystem::path& backing);

// A per-cell volume on the remote host: deleted when this handle dies (errors swallowed).
class StagedVolume {
 public:
  StagedVolume() = default;
  StagedVolume(Connection& connection, virStoragePoolPtr pool, std::string name, std::filesystem::path path);
  StagedVolume(StagedVolume&& other) noexcept;
  StagedVolume& operator=(StagedVolume&& other) noexcept;
  ~StagedVolume();
  const std::filesystem::path& path() const { return path_; }
  const std::string& name() const { return name_; }
  void remove();  // idempotent

 private:
  Connection* connection_ = nullptr;
  virStoragePoolPtr pool_ = nullptr;  // not owned
  std::string name_;
  std::filesystem::path path_;
};

class Staging {
 public:
  // Finds the pool whose target is `dir` on the connection's host, or creates a transient one
  // (building the directory). Throws smtlab::Error with libvirt's message and what to do.
  // Per-VM volumes left by an smtlab that was killed or lost its connection mid-cell (their
  // domain is gone and they are older than 10 minutes) are deleted then.
  static std::unique_ptr<Staging> open(Connection& connection, const std::filesystem::path& dir);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::string& pool_name() const { return pool_name_; }

  // The remote path of `volume` holding `local`'s bytes: reused when it exists with its
  // completion marker, waited for while another smtlab uploads it, (re)uploaded otherwise. For
  // kernels and base images.
  std::filesystem::path ensure_uploaded(const std::string& volume, const std::filesystem::path& local);
  // Uploads `local` as `volume` (replacing a leftover of the same name) for one cell.
  StagedVolume upload_temporary(const std::string& volume, const std::filesystem::path& local);
  // A qcow2 overlay on the remote qcow2 `backing` for one cell.
  StagedVolume create_overlay(const std::string& volume, const std::filesystem::path& backing);

 private:
  Staging() = default;
  // False (nothing done) when the volume could not be created because it exists by now.
  bool upload(const std::string& volume, const std::filesystem::path& local, std::uint64_t bytes);
  // While another smtlab uploads `volume` (its description keeps changing): true once `marker`
  // exists; false when the volume is gone or has not changed for 15 s (a dead upload).
  bool wait_for_marker(const std::string& volume, const std::string& marker);
  void remove_volume(const std::string& volume);
  void sweep_stale();

  Connection* connection_ = nullptr;
  virStoragePoolPtr pool_ = nullptr;
  std::filesystem::path dir_;
  std::string pool_name_;
};

}  // namespace smtlab::vm
