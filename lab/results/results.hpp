#pragma once
// The results directory of one run (schema: docs/results-schema.md). Knows nothing of VMs:
// the run module writes through ResultsWriter, compare/report read through load_results.
#include "results/loader.hpp"
#include "results/merge.hpp"
#include "results/writer.hpp"
