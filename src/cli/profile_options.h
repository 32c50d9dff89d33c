#pragma once

#include <CLI/CLI.hpp>

#include "scenario/profile_plan.h"

namespace stagegate::cli {

/// Declares every option of `stagegate profile` on `app`, with its default, range check and
/// help, each into its field of `request` (scenario::PlanProfile checks them together).
void AddProfileOptions(CLI::App& app, scenario::ProfileRequest& request);

}  // namespace stagegate::cli
