// smtlab cache ls | gc
#include <fmt/core.h>

#include <iostream>

#include "cache/cache.hpp"
#include "cli/commands.hpp"

namespace smtlab::cli {

void add_cache_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "The artifact cache ($SMTLAB_CACHE, default ~/.cache/smtlab)");
  cmd->require_subcommand(1);
  auto* ls = cmd->add_subcommand("ls", "List cached kernels, initramfs and images");
  ls->callback([] {
    cache::Cache cache;
    auto entries = cache.list();
    std::uint64_t total = 0;
    fmt::print("{:<10} {:<14} {:>10} {:>8} {:>8}  {}\n", "KIND", "KEY", "SIZE", "AGE(d)", "UNUSED", "NAME");
    for (const auto& e : entries) {
      fmt::print("{:<10} {:<14} {:>10} {:>8.1f} {:>8.1f}  {}\n", e.kind, e.key.substr(0, 12),
                 cache::Cache::human_size(e.size), e.age_days, e.unused_days, e.name);
      total += e.size;
    }
    fmt::print("{} entries, {} in {}\n", entries.size(), cache::Cache::human_size(total), cache.root().string());
    auto areas = cache.areas();
    if (!areas.empty()) fmt::print("\nnot entries (`cache gc` removes stale directories in work/, tmp/ and boot/ only):\n");
    for (const auto& a : areas)
      fmt::print("{:<10} {:>10}  {}{}\n", a.name + "/", cache::Cache::human_size(a.size), a.what,
                 a.linked ? " (" + cache::Cache::human_size(a.linked) + " of it hard links to files also elsewhere, e.g. the host's apt cache)"
                          : std::string());
  });
  auto gc_opt = std::make_shared<cache::GcOptions>();
  auto days = std::make_shared<double>(30);
  auto max_gib = std::make_shared<double>(0);
  auto* gc = cmd->add_subcommand("gc", "Remove entries unused for a while, then the least recently used over a budget");
  gc->add_option("--unused-days", *days, "Remove entries not used for this many days")->capture_default_str();
  gc->add_option("--max-gib", *max_gib, "Then keep at most this many GiB (0: no budget)")->capture_default_str();
  gc->add_flag("--dry-run", gc_opt->dry_run, "Only say what would be removed");
  gc->callback([gc_opt, days, max_gib] {
    gc_opt->unused_days = *days;
    if (*max_gib > 0) gc_opt->max_bytes = static_cast<std::uint64_t>(*max_gib * (1ull << 30));
    cache::Cache cache;
    auto r = cache.gc(*gc_opt);
    for (const auto& e : r.removed)
      fmt::print("{} {} {} ({})\n", gc_opt->dry_run ? "would remove" : "removed", e.kind, e.name,
                 cache::Cache::human_size(e.size));
    for (const auto& dir : r.removed_tmp)
      fmt::print("{} {}\n", gc_opt->dry_run ? "would remove" : "removed", dir.string());
    fmt::print("{} {}, kept {}\n", gc_opt->dry_run ? "would free" : "freed",
               cache::Cache::human_size(r.freed_bytes), cache::Cache::human_size(r.kept_bytes));
  });
}

}  // namespace smtlab::cli
