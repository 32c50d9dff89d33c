#pragma once

// Runs the command line in this process, through cli::Main, with its output captured.

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace stagegate::cli {

struct Invocation {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// `stagegate ARGS...` through cli::Main, its console writing to strings.
inline Invocation Invoke(std::vector<std::string> args) {
  args.insert(args.begin(), "stagegate");
  std::vector<const char*> argv;
  for (const std::string& arg : args)
    argv.push_back(arg.c_str());
  std::ostringstream out, err;
  console::Console console(out, err, false);
  Invocation result;
  result.exit_code = Main(static_cast<int>(argv.size()), argv.data(), console);
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace stagegate::cli
