#pragma once

// How Catch prints an Arrival in a failed check: {sequence, intended_ns}.

#include <catch2/catch.hpp>

#include <string>

#include "load/schedule.h"

namespace Catch {
template <>
struct StringMaker<stagegate::load::Arrival> {
  static std::string convert(const stagegate::load::Arrival& arrival) {
    return "{" + std::to_string(arrival.sequence) + ", " + std::to_string(arrival.intended_ns) +
           "}";
  }
};
}  // namespace Catch
