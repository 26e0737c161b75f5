// Renders the HTML report in headless Chromium (Debian's chromium package): the screenshot must
// not be blank, the plots must be in the rendered DOM, and the page with plots must render
// differently from the same page without them. Label "render" (needs chromium, takes seconds).
// The PNGs are kept in the build directory's report-render/ for people to look at.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fixtures.hpp"
#include "report/html.hpp"
#include "results/results.hpp"
#include "util/files.hpp"
#include "util/process.hpp"
#include "checkout.hpp"

using namespace smtlab;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> chromium_argv(const fs::path& profile) {
  auto chromium = smtlab::find_program("chromium");
  if (!chromium) FAIL("chromium is not installed: apt-get install -y chromium");
  return {chromium->string(),
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--no-first-run",
          "--hide-scrollbars",
          "--user-data-dir=" + profile.string()};
}

void screenshot(const fs::path& html, const fs::path& png, const fs::path& profile) {
  auto argv = chromium_argv(profile);
  argv.push_back("--screenshot=" + png.string());
  argv.push_back("--window-size=1200,1600");
  argv.push_back("file://" + html.string());
  ProcessOptions po;
  po.timeout = std::chrono::seconds(180);
  auto r = run_process(argv, po);
  INFO(r.err);
  REQUIRE(fs::exists(png));
}

std::string dump_dom(const fs::path& html, const fs::path& profile) {
  auto argv = chromium_argv(profile);
  argv.push_back("--dump-dom");
  argv.push_back("file://" + html.string());
  ProcessOptions po;
  po.timeout = std::chrono::seconds(180);
  auto r = run_process(argv, po);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the report renders in headless Chromium with its plots") {
  fs::path out = smtlab::test::binary_dir() / "report-render";
  fs::create_directories(out);
  fs::path profile = fixtures::temp_dir("chromium-profile");
  auto kern = fixtures::kernbench_run();
  auto chat = fixtures::chat_run();
  auto runs = std::vector<results::RunResults>{results::load_results(kern)};
  auto chat_runs = std::vector<results::RunResults>{results::load_results(chat)};

  report::ReportOptions with;
  report::ReportOptions without;
  without.plots = false;
  write_file_atomic(out / "kernbench.html", report::render_html_report(runs, with));
  write_file_atomic(out / "kernbench-noplots.html", report::render_html_report(runs, without));
  write_file_atomic(out / "chat.html", report::render_html_report(chat_runs, with));

  screenshot(out / "kernbench.html", out / "kernbench.png", profile);
  screenshot(out / "kernbench-noplots.html", out / "kernbench-noplots.png", profile);
  screenshot(out / "chat.html", out / "chat.png", profile);

  std::string with_png = read_file(out / "kernbench.png");
  std::string without_png = read_file(out / "kernbench-noplots.png");
  REQUIRE(with_png.size() > 8);
  CHECK(with_png.substr(1, 3) == "PNG");
  // A blank 1200x1600 PNG compresses to a few KiB; a page of tables and charts is far larger.
  CHECK(with_png.size() > 40000);
  CHECK(read_file(out / "chat.png").size() > 40000);
  CHECK(with_png != without_png);
  CHECK(with_png.size() > without_png.size());

  // The charts are in the DOM Chromium built.
  std::string dom = dump_dom(out / "kernbench.html", profile);
  CHECK(count(dom, "<svg") == 3);
  CHECK(count(dom, "<rect class=\"bar\"") == 12);
  CHECK(count(dom, "<polyline") == 8);
  fs::remove_all(profile);
  fs::remove_all(kern);
  fs::remove_all(chat);
}
