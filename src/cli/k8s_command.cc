// `stagegate k8s SCENARIO --shards N --image IMAGE`: prints the Kubernetes objects that run the
// scenario as N shards starting at the same instant, one pod each, and merge their results.

#include <cctype>
#include <set>

#include <re2/re2.h>

#include "base/clock.h"
#include "base/strings.h"
#include "cli/command.h"
#include "cli/stored_run.h"
#include "deploy/k8s_manifests.h"
#include "deploy/k8s_plan.h"
#include "manifest/bundle.h"
#include "scenario/shard_plan.h"
#include "scenario/stage_requests.h"

namespace stagegate::cli {
using deploy::K8sManifests;
using deploy::K8sPlan;
using deploy::MergedDir;
using deploy::Rfc3339Utc;
using deploy::SecretEnv;

namespace {

CLI::Validator DnsLabel(size_t max_length) {
  return CLI::Validator(
      [max_length](std::string& text) -> std::string {
        if (deploy::IsDnsLabel(text, max_length)) return "";
        return "must be a DNS-1123 label: at most " + std::to_string(max_length) +
               " of a-z, 0-9 and '-', starting and ending with a letter or digit; got '" + text +
               "'";
      },
      "NAME");
}

// An image reference as Kubernetes and the registries read it (the grammar of
// distribution/reference): [host[:port]/]path[:tag][@digest], the path in lower case, the name at
// most 255 characters. Anything else is refused here rather than by the cluster, after the Jobs
// were created.
CLI::Validator ImageReference() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        static const RE2 grammar(
            R"((?:((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|)"
            R"([a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?)/)?)"
            R"(([a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*))"
            R"((?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?)"
            R"((?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?)");
        std::string domain, path;
        if (text.size() <= 4096 && RE2::FullMatch(text, grammar, &domain, &path)) {
          const size_t name = domain.size() + (domain.empty() ? 0 : 1) + path.size();
          if (name <= 255) return "";
          return "must be an image reference whose name is at most 255 characters, got " +
                 std::to_string(name);
        }
        return "must be an image reference such as registry.example/stagegate:0.1 (a path in "
               "lower case, then :tag or @sha256:digest); got '" +
               ShownText(text, 80) + "'";
      },
      "IMAGE");
}

CLI::Validator Quantity() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        size_t digits = 0;
        while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
          ++digits;
        static const std::set<std::string> kSuffixes = {"",  "Ki", "Mi", "Gi", "Ti", "Pi",
                                                        "k", "M",  "G",  "T",  "P"};
        if (digits > 0 && text[0] != '0' && kSuffixes.count(text.substr(digits))) return "";
        return "must be a whole number of bytes with an optional suffix (Ki, Mi, Gi, Ti, k, M, "
               "G, T...), e.g. 1Gi; got '" +
               text + "'";
      },
      "SIZE");
}

// On stderr, so that stdout pipes into kubectl: when the shards start, the Secret they read,
// and how to wait for the merge.
void PrintNextSteps(console::Console& console, const K8sPlan& plan, const std::string& scenario) {
  const std::string in_namespace = plan.ns.empty() ? "" : " -n " + plan.ns;
  console.Error("stagegate k8s: " + std::to_string(plan.shards) + " shards of " + scenario +
                " start at " + Rfc3339Utc(plan.start_unix_s) + " (in " +
                std::to_string(plan.start_in_s) + " s): apply before then");
  if (!plan.secrets.empty()) {
    std::vector<std::string> names, literals;
    bool required = false;
    for (const SecretEnv& secret : plan.secrets) {
      names.push_back(secret.name);
      literals.push_back("--from-literal=" + secret.name + "=...");
      required = required || !secret.optional;
    }
    console.Error("stagegate k8s: the shards read " + Join(names, ", ") + " from the Secret " +
                  plan.name + "-secrets; no value is in these manifests. " +
                  (required ? "Create it first:"
                            : "Against the sim each persona has a token of its own; to send "
                              "others, create it first:"));
    console.Error("  kubectl create secret generic" + in_namespace + " " + plan.name + "-secrets " +
                  Join(literals, " "));
  }
  console.Error("stagegate k8s: then kubectl wait" + in_namespace +
                " --for=condition=complete job/" + plan.name +
                "-merge --timeout=" + std::to_string(plan.start_in_s + plan.merge_timeout_s + 600) +
                "s; the merged run is in " + MergedDir() + " on the claim " + plan.name +
                "-results (docs/kubernetes.md)");
}

class K8sCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("scenario", scenario_, "The scenario file")->required();
    app.add_option("--shards", plan_.shards, "Pods of the Indexed Job; each sends 1/N of the load")
        ->required()
        ->check(Between(1, 1000));
    app.add_option("--image", plan_.image,
                   "Container image with /usr/local/bin/stagegate (see the Dockerfile)")
        ->required()
        ->check(ImageReference());
    app.add_option("--namespace", plan_.ns, "Namespace of every object (default: kubectl's)")
        ->check(DnsLabel(63));
    app.add_option("--name", plan_.name,
                   "Name of the shards' Job, and prefix of the other objects' names (default: "
                   "the scenario's name and the start time, e.g. demo-1202-100000)")
        ->check(DnsLabel(deploy::kMaxNameLength));
    app.add_option("--start-in", plan_.start_in_s,
                   "Seconds from now to the start every shard waits for; long enough to pull the "
                   "image and schedule the pods")
        ->capture_default_str()
        ->check(Between(0, 7 * 86400));
    app.add_option("--cpu", plan_.cpu, "Cores each shard pod requests (and is limited to)")
        ->capture_default_str()
        ->check(Between(0.1, 1024));
    app.add_option("--memory", plan_.memory_mib, "MiB each pod requests (and is limited to)")
        ->capture_default_str()
        ->check(Between(64, 1 << 22));
    app.add_option("--volume-size", plan_.volume_size, "Size of the results volume claim")
        ->capture_default_str()
        ->check(Quantity());
    app.add_option("--storage-class", plan_.storage_class,
                   "Storage class of the results volume, one that offers ReadWriteMany (default: "
                   "the cluster's)");
    app.add_option("--merge-timeout", plan_.merge_timeout_s,
                   "Seconds after the start that the merge waits for every shard's run.json")
        ->capture_default_str()
        ->check(Between(60, 7 * 86400));
    app.add_option("--target-url", plan_.target_url,
                   "The application every shard sends to (http://host:port), instead of the "
                   "scenario's target; needed when that is the built-in sim. It is written "
                   "into every Job: a key goes in the scenario's api_key_env (a Secret), never "
                   "in the URL")
        ->check(BaseUrlToKeep());
    app.add_flag("--in-image", in_image_,
                 "The image carries the scenario and its files under /work, laid out as on disk "
                 "(as the Dockerfile copies scenarios/, corpus/ and rubrics/): no ConfigMap");
  }

  ExitCode Run(const GlobalOptions&, console::Console& console) override {
    scenario::InputFiles input;
    std::optional<manifest::Bundle> bundle = LoadBundleAsRunWill(scenario_, console, input);
    if (!bundle) return ExitCode::kInvalidInput;
    // What every shard would refuse before sending anything, refused now.
    std::vector<std::string> problems;
    if (plan_.shards > 1) problems = scenario::ShardProblems(*bundle, plan_.shards);
    for (const std::string& problem : deploy::PlanProblems(*bundle, plan_, in_image_, scenario_))
      problems.push_back("stagegate k8s: " + problem);
    for (const std::string& problem : problems)
      console.Error(problem);
    if (!problems.empty()) return ExitCode::kInvalidInput;
    Result<deploy::BundleLayout> layout = deploy::LayOutBundle(bundle->scenario, in_image_);
    if (!layout.ok()) {
      for (const std::string& line : Split(layout.status().message(), '\n'))
        console.Error("stagegate k8s: " + line);
      return layout.status().code() == Status::Code::kInvalidInput ? ExitCode::kInvalidInput
                                                                   : ExitCode::kRuntimeFailure;
    }
    deploy::CompletePlan(*bundle, std::move(*layout), WallUnixMs(), plan_);
    std::string manifests = K8sManifests(plan_);
    manifests.pop_back();  // Line() ends the last line
    console.Line(manifests);

    PrintNextSteps(console, plan_, bundle->scenario.name);
    return ExitCode::kOk;
  }

 private:
  std::string scenario_;
  bool in_image_ = false;
  K8sPlan plan_;
};

}  // namespace

std::unique_ptr<Command> MakeK8sCommand() {
  return std::make_unique<K8sCommand>();
}

}  // namespace stagegate::cli
