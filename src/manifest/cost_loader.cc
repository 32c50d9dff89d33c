#include "manifest/cost_loader.h"

#include <algorithm>

namespace stagegate::manifest {

namespace {

// The smallest price an hour that means one: a millionth of the currency's unit. Nothing is
// priced below it (an exponent gone wrong is more likely), and the report's costs per accepted
// answer, a price over thousands of answers an hour, would fall past the decimals it shows.
constexpr double kSmallestPrice = 1e-6;

}  // namespace

Cost ReadCost(const YamlFile& file, const YAML::Node& node) {
  Cost cost;
  MapReader map(file, node, "cost");
  cost.price_per_hour = map.Number("price_per_hour", Need::kRequired, kPositive).value_or(0);
  if (cost.price_per_hour > 0 && cost.price_per_hour < kSmallestPrice) {
    const YAML::Node price = map.Get("price_per_hour");
    file.Error(price, "'price_per_hour' is too small: " + Describe(price) +
                          " is below 0.000001, the smallest meaningful price an hour");
  }
  cost.per = map.Enum("per", kCostPerNames).value_or(CostPer::kInstance);
  cost.count = map.Integer("count", Need::kOptional, {.min = 1}).value_or(1);
  if (std::optional<std::string> currency = map.String("currency")) {
    // An ISO 4217 code, so that the report never shows a price in an unnamed unit.
    const bool code =
        currency->size() == 3 && std::all_of(currency->begin(), currency->end(),
                                             [](char c) { return c >= 'A' && c <= 'Z'; });
    if (code)
      cost.currency = *currency;
    else
      file.Error(map.Get("currency"),
                 "'currency' must be three capital letters (an ISO 4217 code like USD or EUR), "
                 "got '" +
                     *currency + "'");
  }
  if (std::optional<std::string> source = map.String("source", Need::kRequired)) {
    if (source->find_first_not_of(" \t") == std::string::npos)
      file.Error(map.Get("source"),
                 "'source' must say where the price comes from (like \"on-demand list price, "
                 "2026-11\"), got an empty text");
    else
      cost.source = *source;
  }
  map.Finish();
  return cost;
}

}  // namespace stagegate::manifest
