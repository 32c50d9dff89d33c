#pragma once

// Runs the command line in this process, through cli::Main, with its output captured.
// (ValidateAndRun uses Catch2's assertions: include this from test files only.)

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "scenario/runner.h"
#include "test_util.h"

namespace stagegate::cli {

struct Invocation {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// `stagegate ARGS...` through cli::Main, its console writing to strings; with `seam`, `run` and
/// `profile` read time from it and send through it (scenario::RunSeam::Scripted: no socket, no
/// wait).
inline Invocation Invoke(std::vector<std::string> args, const scenario::RunSeam* seam = nullptr) {
  args.insert(args.begin(), "stagegate");
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  std::ostringstream out, err;
  console::Console console(out, err, false);
  Invocation result;
  result.exit_code = Main(static_cast<int>(argv.size()), argv.data(), console, seam);
  result.out = out.str();
  result.err = err.str();
  return result;
}

/// `stagegate validate SCENARIO`, then `stagegate run SCENARIO --out DIR/out` in a process of its
/// own (test_util.h's RunStagegate, with DIR's store); both must succeed. What the run printed.
inline testing::Ran ValidateAndRun(const testing::TempDir& dir, const std::string& scenario) {
  Invocation validated = Invoke({"validate", scenario});
  INFO(validated.err);
  REQUIRE(validated.exit_code == 0);
  testing::Ran ran = testing::RunStagegate(dir, {"run", scenario, "--out", dir / "out"});
  INFO(ran.out << ran.err);
  REQUIRE(ran.exit_code == 0);
  return ran;
}

}  // namespace stagegate::cli
