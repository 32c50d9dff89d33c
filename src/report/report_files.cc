#include "report/report_files.h"

#include <filesystem>
#include <iterator>

#include "base/files.h"
#include "report/triage.h"
#include "report/triaged_run.h"

namespace stagegate::report {
namespace {

constexpr const char* kFormats[] = {"md", "html", "json", "junit", "csv"};

}  // namespace

Status WriteDashboard(store::Store& store, const std::string& dir) {
  Result<std::vector<store::RunInfo>> runs = store.ListRuns();
  if (!runs.ok()) return runs.status();
  std::vector<ReportModel> models;
  for (const store::RunInfo& run : *runs) {
    Result<ReportModel> model = BuildReport(store, run, nullptr, false);
    if (!model.ok()) return model.status();
    models.push_back(std::move(*model));
  }
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::IoError(dir + ": " + made.message());
  return WriteFileAtomically(dir + "/index.html",
                             DashboardHtml(models, [&](const std::string& run_id) {
                               return IsRegularFile(dir + "/" + run_id + "/report.html");
                             }));
}

Result<ReportModel> BuildRunReport(store::Store& store, const store::RunInfo& run,
                                   const manifest::Bundle* bundle, const std::string& problem) {
  Result<ReportModel> model = BuildReport(store, run, bundle);
  if (!model.ok()) return model.status();
  Result<TriagedRun> triaged = TriageStoredRun(store, run, bundle, problem);
  if (!triaged.ok()) return triaged.status();
  for (const std::string& name : TriageClassNames()) {
    int64_t count = 0;
    for (const TriagedRequest& t : triaged->triaged)
      count += TriageClassName(t.triage.triage_class) == name;
    model->triage.push_back({name, count});
  }
  return model;
}

Status WriteReportFormats(const ReportModel& model, const std::string& dir,
                          std::vector<std::string> formats, std::vector<std::string>& written) {
  std::error_code made;
  std::filesystem::create_directories(dir, made);
  if (made) return Status::IoError(dir + ": " + made.message());
  if (formats.empty()) formats.assign(std::begin(kFormats), std::end(kFormats));
  for (const std::string& format : formats) {
    std::string path, text;
    if (format == "md") {
      path = dir + "/report.md", text = ReportMarkdown(model);
    } else if (format == "html") {
      path = dir + "/report.html", text = ReportHtml(model);
    } else if (format == "json") {
      path = dir + "/report.json";
      text = ReportJson(model).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    } else if (format == "junit") {
      path = dir + "/report.junit.xml", text = ReportJunit(model);
    } else {
      path = dir + "/report.csv", text = ReportCsv(model);
    }
    SG_RETURN_IF_ERROR(WriteFileAtomically(path, text));
    written.push_back(path);
  }
  return Status::Ok();
}

Result<ReportModel> WriteReportFiles(store::Store& store, const store::RunInfo& run,
                                     const manifest::Bundle& bundle, const std::string& dir,
                                     std::vector<std::string> formats,
                                     std::vector<std::string>& written) {
  Result<ReportModel> model = BuildRunReport(store, run, &bundle, "");
  if (!model.ok()) return model.status();
  SG_RETURN_IF_ERROR(WriteReportFormats(*model, dir, std::move(formats), written));
  return model;
}

}  // namespace stagegate::report
