#include "run/artifacts.hpp"

#include <chrono>
#include <cstdlib>
#include <future>

#include "util/error.hpp"
#include "util/log.hpp"

namespace smtlab::run {

std::filesystem::path guest_agent_path() {
  if (const char* env = std::getenv("SMTLAB_GUEST_AGENT"); env && *env) return env;
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  auto agent = exe.parent_path() / "smtlab-guest";
  if (ec || !std::filesystem::exists(agent))
    throw Error("the guest agent smtlab-guest is not next to " + exe.string(),
                "build it (./smtlab builds everything), or set SMTLAB_GUEST_AGENT to its path");
  return agent;
}

nlohmann::json Artifacts::manifest() const {
  nlohmann::json out;
  out["image"] = {{"name", image.name}, {"digest", image.digest}, {"size", image.size},
                  {"fs_size_mib", image.fs_size_mib}, {"cache_hit", image.cache_hit}};
  if (!image.sha256.empty()) out["image"]["sha256"] = image.sha256;
  if (!image.installed.empty()) out["image"]["installed"] = image.installed;
  out["kernels"] = nlohmann::json::object();
  for (const auto& [name, k] : kernels) {
    out["kernels"][name] = {{"source", recipe::to_string(k.kernel.source)},
                            {"package", k.kernel.package},
                            {"version", k.kernel.version},
                            {"release", k.kernel.release},
                            {"sha256", k.kernel.sha256},
                            {"digest", k.kernel.digest},
                            {"boot_entry", k.kernel.boot_entry},
                            {"boot_entry_why", k.kernel.boot_entry_why},
                            {"initramfs_digest", k.initramfs.digest},
                            {"initramfs_modules", k.initramfs.modules}};
  }
  out["prepare_s"] = prepare_s;
  return out;
}

Artifacts prepare_artifacts(const recipe::Recipe& recipe, const plan::Plan& plan, cache::Cache& cache,
                            const std::map<std::string, KernelPin>& pins) {
  auto start = std::chrono::steady_clock::now();
  auto agent = guest_agent_path();
  Artifacts out;
  // The image build (mmdebstrap) is mostly I/O and network: run it beside the kernel fetches.
  auto image_job = std::async(std::launch::async, [&] {
    Steps steps("image " + recipe.image.name);
    try {
      return image::prepare_image(recipe.image, cache, steps);
    } catch (const Error& e) {
      throw e.within("image " + recipe.image.name);
    }
  });
  std::map<std::string, recipe::KernelSpec> needed;
  for (const auto& cell : plan.cells) needed.emplace(cell.kernel.name, cell.kernel);
  for (auto& [name, spec] : needed) {
    if (auto pin = pins.find(name); pin != pins.end() && spec.source == recipe::KernelSource::debian) {
      spec.package = pin->second.package;
      spec.version = pin->second.version;
    }
  }
  std::exception_ptr kernel_error;
  for (const auto& [name, spec] : needed) {
    try {
      Steps steps("kernel " + name);
      BootKernel bk;
      bk.kernel = kernel::prepare_kernel(spec, cache, steps);
      bk.initramfs = image::prepare_initramfs(bk.kernel, agent, cache);
      note(kernel::summary(bk.kernel));
      out.kernels.emplace(name, std::move(bk));
    } catch (const Error& e) {
      kernel_error = std::make_exception_ptr(e.within("kernel " + name));
      break;
    }
  }
  out.image = image_job.get();  // rethrows the image's error
  if (kernel_error) std::rethrow_exception(kernel_error);
  note(image::summary(out.image));
  out.prepare_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace smtlab::run
