// The shared Catch2 main. A test filter that matches no test case fails (Catch2 v2 would
// otherwise exit 0), so a test renamed under ctest can never pass by running nothing. Scratch
// directories (scratch.hpp) go when the run passes and are kept, with their path printed, when
// it fails.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <iostream>

#include "scratch.hpp"

int main(int argc, char* argv[]) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  session.configData().warnings = static_cast<Catch::WarnAbout::What>(
      session.configData().warnings | Catch::WarnAbout::NoTests);
  const int rc = session.run();
  if (auto kept = smtlab::test::finish_scratch(rc == 0); !kept.empty())
    std::cerr << "test scratch directories kept in " << kept << "\n";
  return rc;
}
