#include "sweep/Sweep.h"

#include "driver/Compilation.h"
#include "scheduler/analysis/Evaluation.h"
#include "scheduler/graph/GraphTurbo.h"
#include "scheduler/placement/CmPlacementReport.h"
#include "support/Check.h"
#include "support/DiagnosticRenderer.h"
#include "support/Format.h"
#include "support/Svg.h"
#include "sweep/SweepJson.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dfl::sweep {
namespace {

std::string pointPath(const std::string &outDir, const std::string &id) {
  return (fs::path(outDir) / "points" / (id + ".json")).string();
}

/// Whether nothing is at `path` (a point not solved yet, an OUT with no sweep).
bool absent(const std::string &path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) != 0 && errno == ENOENT;
}

/// A file a sweep wrote and reads back, read as the loader reads its inputs
/// (a regular file of at most 64 MiB: never a FIFO or a device) into `sm`,
/// with its values' places; nullopt after reporting.
std::optional<LocatedJson> readRecord(const std::string &path, SourceManager &sm, DiagnosticsEngine &diags) {
  std::string error;
  auto file = sm.loadFile(path, error);
  if (!file) {
    diags.report({}, diag::err_file_unreadable) << path << error;
    return std::nullopt;
  }
  return parseLocated(*file, sm, diags, diag::err_sweep_record, diag::err_sweep_record);
}

/// A JSON value in a diagnostic, cut short.
std::string shown(const Json &v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 40 ? s.substr(0, 37) + "..." : s;
}

using Fault = std::optional<std::pair<std::string, std::string>>;   // a JSON pointer and what is wrong there

/// Why OUT/spec.json is not what writeSpecRecord writes.
Fault recordFault(const Json &r) {
  if (!r.is_object())
    return {{"", "OUT/spec.json is an object {\"spec\": \"...\", \"points\": [\"ID\", ...]}"}};
  for (auto &[k, v] : r.items())
    if (k != "spec" && k != "points")
      return {{LocatedJson::key(k), "unknown key \"" + k + "\" (OUT/spec.json has \"spec\" and \"points\")"}};
  if (!r.contains("spec") || !r["spec"].is_string())
    return {{r.contains("spec") ? "/spec" : "", "\"spec\" is the sweep spec's text"}};
  if (!r.contains("points") || !r["points"].is_array())
    return {{r.contains("points") ? "/points" : "", "\"points\" is the list of the points' ids"}};
  const Json &ids = r["points"];
  if (ids.size() > kMaxSweepPoints)
    return {{"/points", "a sweep has at most " + std::to_string(kMaxSweepPoints) + " points, this lists " +
                            std::to_string(ids.size())}};
  for (size_t i = 0; i < ids.size(); ++i) {
    // An id names a file under OUT/points: 16 hex digits, never a path.
    const Json &id = ids[i];
    if (!id.is_string() || id.get<std::string>().size() != 16 ||
        id.get<std::string>().find_first_not_of("0123456789abcdef") != std::string::npos)
      return {{"/points/" + std::to_string(i), "a point's id is 16 hexadecimal digits, got " + shown(id)}};
  }
  return std::nullopt;
}

/// OUT/spec.json as writeSpecRecord wrote it; nullopt after reporting.
std::optional<LocatedJson> readSpecRecord(const std::string &path, SourceManager &sm, DiagnosticsEngine &diags) {
  auto record = readRecord(path, sm, diags);
  if (record)
    if (auto fault = recordFault(record->value)) {
      diags.report(record->at(fault->first), diag::err_sweep_record) << fault->second;
      return std::nullopt;
    }
  return record;
}

/// Why a point's file is not the result solvePoint writes for point `index`
/// with id `id`.
Fault pointFault(const Json &p, size_t index, const std::string &id) {
  if (!p.is_object())
    return {{"", "a point's result is a JSON object"}};
  auto isString = [](const Json &v) { return v.is_string(); };
  auto isCount = [](const Json &v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0); };
  auto isAmount = [](const Json &v) { return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0; };
  auto isSettings = [](const Json &v) {
    return v.is_object() && std::all_of(v.begin(), v.end(), [](const Json &e) { return e.is_string(); });
  };
  if (!p.contains("status") || !p["status"].is_string())
    return {{p.contains("status") ? "/status" : "", "\"status\" is \"ok\", \"limit\" or \"failed\""}};
  std::string status = p["status"].get<std::string>();
  if (status != "ok" && status != "limit" && status != "failed")
    return {{"/status", "\"status\" is \"ok\", \"limit\" or \"failed\", got " + shown(p["status"])}};
  bool solved = status != "failed";
  // Always there; there when failed, else not; there when solved, maybe when
  // failed (a point that was analyzed); maybe when solved, else not (what the
  // point's target models: docs/design.md, "One evaluator").
  enum When { Always, Failed, Analyzed, Modelled };
  struct Field {
    const char *key;
    std::function<bool(const Json &)> ok;
    const char *what;
    When when;
  };
  const std::vector<Field> fields = {
      {"index", isCount, "the point's index", Always},
      {"id", isString, "the point's id", Always},
      {"hardware", isString, "a path", Always},
      {"network", isString, "a path", Always},
      {"settings", isSettings, "an object of DFL values as strings", Always},
      {"objective", isString, "an objective's name", Always},
      {"status", isString, "a string", Always},
      {"network_name", isString, "a name", Analyzed},
      {"hardware_name", isString, "a name", Analyzed},
      {"batch", isCount, "a batch size", Analyzed},
      {"energy_pj", isAmount, "a finite non-negative number", Modelled},
      {"latency_cycles", isAmount, "a finite non-negative number", Modelled},
      {"latency_s", isAmount, "a finite non-negative number", Modelled},
      {"segments", isCount, "a count", Modelled},
      {"message", isString, "a string", Failed},
  };
  for (auto &item : p.items()) {
    const std::string &k = item.key();   // not a structured binding: clang 14 cannot capture one
    const Json &v = item.value();
    auto f = std::find_if(fields.begin(), fields.end(), [&](const Field &f) { return f.key == k; });
    if (f == fields.end())
      return {{LocatedJson::key(k), "unknown key \"" + k + "\""}};
    if ((f->when == Modelled && !solved) || (f->when == Failed && solved))
      return {{LocatedJson::key(k), "\"" + k + "\" does not go with \"status\": \"" + status + "\""}};
    if (!f->ok(v))
      return {{LocatedJson::key(k), "\"" + k + "\" is " + f->what + ", got " + shown(v)}};
  }
  for (const Field &f : fields)
    if ((f.when == Always || (solved ? f.when == Analyzed : f.when == Failed)) && !p.contains(f.key))
      return {{"", std::string("\"") + f.key + "\" is missing"}};
  if (solved && !p.contains("energy_pj") && !p.contains("latency_cycles"))
    return {{"", "a solved point has \"energy_pj\" or \"latency_cycles\""}};
  if (p.contains("latency_cycles") != p.contains("latency_s"))
    return {{"", "\"latency_cycles\" and \"latency_s\" go together"}};
  if (p["index"] != index)
    return {{"/index", "this is point " + std::to_string(index) + ", not " + shown(p["index"])}};
  if (p["id"] != id)
    return {{"/id", "this is point " + id + ", not " + shown(p["id"])}};
  return std::nullopt;
}

enum class Found { Absent, Done, Bad };

/// Point `index`'s result in OUT/points/ID.json, into `result` if given. Bad
/// after reporting why the file there is not one (located in it, in `sm`).
Found readPoint(const std::string &outDir, size_t index, const std::string &id, Json *result, SourceManager &sm,
                DiagnosticsEngine &diags) {
  std::string path = pointPath(outDir, id);
  if (absent(path))
    return Found::Absent;
  // Read into a SourceManager of its own, so that a resume over 10^5 points
  // holds one at a time; a bad one is read again into `sm` to be reported.
  SourceManager own;
  DiagnosticsEngine quiet(own);
  std::string error;
  auto file = own.loadFile(path, error);
  if (!file) {
    diags.report({}, diag::err_file_unreadable) << path << error;
    return Found::Bad;
  }
  if (auto j = parseLocated(*file, own, quiet, diag::err_sweep_record, diag::err_sweep_record);
      j && !pointFault(j->value, index, id)) {
    if (result)
      *result = std::move(j->value);
    return Found::Done;
  }
  uint32_t again = sm.addBuffer(path, own.text(*file));
  if (auto j = parseLocated(again, sm, diags, diag::err_sweep_record, diag::err_sweep_record))
    if (auto fault = pointFault(j->value, index, id))
      diags.report(j->at(fault->first), diag::err_sweep_record)
          << fault->second + "; remove the file to solve the point again";
  return Found::Bad;
}

/// Solves one point through the driver and writes its result; in a worker process.
void solvePoint(const SweepSpec &spec, const SweepPoint &p, const RunOptions &options) {
  Json out = {{"index", p.index}, {"id", p.id}, {"hardware", spec.hardware[p.hardware]},
              {"network", spec.networks[p.network]}};
  Json settings = Json::object();
  for (size_t o = 0; o < spec.overrides.size(); ++o)
    settings[spec.overrides[o].key] = p.settings[o];
  out["settings"] = settings;
  out["objective"] = p.objective;
  std::string error;
  auto variant = hardwareVariant(spec.hardwarePaths[p.hardware], spec.hardwareTexts[p.hardware], spec.overrides,
                                 p.settings, error);
  driver::DriverOptions o;
  o.files = {spec.networkPaths[p.network], spec.hardwarePaths[p.hardware]};
  o.includes = options.includes;
  o.openBuffers[canonicalPath(spec.hardwarePaths[p.hardware])] = variant.value_or(spec.hardwareTexts[p.hardware]);
  o.batch = p.batch;
  o.objective = p.objective;
  o.solver = spec.solver;
  o.timeLimitSeconds = spec.timeLimitSeconds;
  driver::Compilation c(o);
  // The point's costs through the one evaluator, whatever its target.
  std::optional<Evaluation> cost;
  std::optional<size_t> segments;
  bool limit = false;
  try {
    if (variant && c.load() && c.analyze()) {
      const Model &m = c.model();
      if (c.targetsDsa()) {
        if (c.scheduleOnDsa())
          cost = graph::evaluationOf(m.networks.at(0), m.dsaHardware.at(0), c.dsaSchedules().graphTurbo);
      } else if (c.targetsCm()) {
        if (c.placeOnCm())
          cost = evaluationOf(m.networks.at(0), m.cmHardware.at(0), c.cmMapping());
      } else if (c.selectSchedule() && c.solve()) {
        const Solution &s = c.solution();
        cost = evaluationOf(m, s.schedule, s.result);
        segments = s.result.segments.size();
        limit = s.stats.limit != SolveLimit::None;
      }
    }
  } catch (const std::exception &x) {   // InternalError: this point's, reported in its row
    error = std::string("internal compiler error: ") + x.what();
  }
  if (c.analyzed()) {
    const Model &m = c.model();
    out["network_name"] = m.networks.at(0).name;
    out["hardware_name"] = !m.hardware.empty() ? m.hardware[0].name
                           : !m.dsaHardware.empty() ? m.dsaHardware.at(0).name
                                                    : m.cmHardware.at(0).name;
    out["batch"] = m.networks.at(0).batch;
  }
  if (cost) {
    out["status"] = limit ? "limit" : "ok";
    if (cost->energyPj)
      out["energy_pj"] = *cost->energyPj;
    if (cost->latencyCycles) {
      out["latency_cycles"] = *cost->latencyCycles;
      out["latency_s"] = *cost->latencyCycles / cost->frequencyHz;
    }
    if (segments)
      out["segments"] = *segments;
  } else {
    out["status"] = "failed";
    for (const Diagnostic &d : c.diagnostics().diagnostics())
      if (error.empty() && d.severity == Severity::Error)
        error = d.message + " [" + d.code + "]";
    out["message"] = error.empty() ? "no valid schedule" : error;
  }
  if (auto e = options.out->write({{"points/" + p.id + ".json", out.dump(1) + "\n"}})) {
    // The point stays unsolved; the worker says why, as a diagnostic of its own.
    SourceManager sm;
    DiagnosticsEngine diags(sm);
    driver::reportOutputError(diags, *e);
    renderText(std::cerr, sm, diags.diagnostics(), false);
  }
}

} // namespace

bool writeSpecRecord(const SweepSpec &spec, const std::vector<SweepPoint> &points, const driver::OutputDir &out,
                     SourceManager &sm, DiagnosticsEngine &diags) {
  const std::string &outDir = out.path();
  std::string path = (fs::path(outDir) / "spec.json").string();
  Json ids = Json::array();
  for (const SweepPoint &p : points)
    ids.push_back(p.id);
  std::string text = Json{{"spec", spec.text}, {"points", ids}}.dump(1) + "\n";
  // Entered on every run (made if absent): a link planted at OUT/points is refused, never followed.
  if (auto e = out.makeDirectory("points")) {
    driver::reportOutputError(diags, *e);
    return false;
  }
  if (!absent(path)) {
    auto old = readSpecRecord(path, sm, diags);
    if (!old)
      return false;
    if (old->value["spec"] != spec.text) {
      diags.report({}, diag::err_sweep_other_spec) << outDir << path;
      return false;
    }
    if (sm.text(old->file) == text)
      return true;   // a slice of the same sweep, or a resume
  }
  if (auto e = out.write({{"spec.json", text}})) {
    driver::reportOutputError(diags, *e);
    return false;
  }
  return true;
}

namespace {

/// Shortest text that reads back as the same double: the same bytes on every machine.
std::string number(double v) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string csvField(const std::string &s) {
  if (s.find_first_of(",\"\n") == std::string::npos)
    return s;
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? "\"\"" : std::string(1, c);
  return q + "\"";
}

} // namespace

bool runPoints(const SweepSpec &spec, const std::vector<SweepPoint> &points, const RunOptions &options,
               RunSummary &summary, SourceManager &sm, DiagnosticsEngine &diags) {
  DFLC_CHECK(options.out) << "runPoints() without an open OUT";
  if (!writeSpecRecord(spec, points, *options.out, sm, diags))
    return false;
  std::vector<const SweepPoint *> todo;
  bool bad = false;
  for (const SweepPoint &p : points) {
    if (p.index % options.slices != options.slice)
      continue;
    ++summary.points;
    Found f = readPoint(options.outDir, p.index, p.id, nullptr, sm, diags);
    summary.resumed += f == Found::Done;
    bad |= f == Found::Bad;
    if (f == Found::Absent)
      todo.push_back(&p);
  }
  if (bad)   // reported: not solved again over a file dflc did not write
    return false;
  std::map<pid_t, const SweepPoint *> running;
  size_t next = 0, done = 0;
  pid_t parent = getpid();
  auto reap = [&] {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (pid <= 0 || it == running.end())
      return;
    Json result;
    Found f = readPoint(options.outDir, it->second->index, it->second->id, &result, sm, diags);
    ++done;
    // A worker that died without a result (killed, crashed) leaves the point
    // to the next run; one that wrote "failed" has a final answer.
    if (f != Found::Done || result["status"] == "failed")
      ++summary.failed;
    summary.solved += f == Found::Done;
    running.erase(it);
    if (options.progress)
      options.progress(done, todo.size(), summary.resumed);
  };
  while (next < todo.size() || !running.empty()) {
    if (next < todo.size() && running.size() < std::max<size_t>(options.jobs, 1)) {
      const SweepPoint *p = todo[next++];
      pid_t pid = fork();
      if (pid == 0) {
        // The worker ends with the sweep: a killed sweep leaves no solve running.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
          _exit(1);
        solvePoint(spec, *p, options);
        _exit(0);
      }
      if (pid < 0) {
        diags.report({}, diag::err_sweep_worker) << std::strerror(errno);
        while (!running.empty())
          reap();
        return false;
      }
      running[pid] = p;
      continue;
    }
    reap();
  }
  return true;
}

bool mergeSweep(const driver::OutputDir &out, MergeSummary &summary, SourceManager &sm, DiagnosticsEngine &diags) {
  const std::string &outDir = out.path();
  std::string specPath = (fs::path(outDir) / "spec.json").string();
  if (absent(specPath)) {
    diags.report({}, diag::err_sweep_no_record) << outDir << specPath;
    return false;
  }
  auto record = readSpecRecord(specPath, sm, diags);
  if (!record)
    return false;
  Json rows = Json::array();
  std::vector<std::string> keys;   // the settings' columns, in the spec's order
  bool bad = false;
  const Json &ids = record->value["points"];
  for (size_t i = 0; i < ids.size(); ++i) {
    ++summary.points;
    Json p;
    Found f = readPoint(outDir, i, ids[i].get<std::string>(), &p, sm, diags);
    bad |= f == Found::Bad;
    if (f != Found::Done)
      continue;
    ++summary.finished;
    summary.failed += p["status"] == "failed";
    for (auto &[k, v] : p["settings"].items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
    rows.push_back(std::move(p));
  }
  if (bad)
    return false;
  // The energy-latency front of each workload (network and batch): the rows
  // no other row of it beats in both.
  for (Json &r : rows) {
    // Only rows with both figures (a DSA's point has no energy, a CM chip's no latency).
    auto both = [](const Json &x) { return x.contains("energy_pj") && x.contains("latency_cycles"); };
    bool front = both(r);
    for (const Json &o : rows)
      if (front && both(o) && o["network"] == r["network"] && o["batch"] == r["batch"]) {
        double e = o["energy_pj"], l = o["latency_cycles"], re = r["energy_pj"], rl = r["latency_cycles"];
        front = !(e <= re && l <= rl && (e < re || l < rl));
      }
    r["pareto"] = front;
  }
  std::string csv = "index,id,network,network_name,hardware,hardware_name";
  for (const std::string &k : keys)
    csv += "," + csvField(k);
  csv += ",batch,objective,status,energy_pj,latency_cycles,latency_s,segments,pareto,message\n";
  for (const Json &r : rows) {
    auto text = [&](const char *k) { return r.contains(k) ? csvField(r[k].is_string() ? r[k].get<std::string>() : r[k].dump()) : ""; };
    auto num = [&](const char *k) { return r.contains(k) ? number(r[k].get<double>()) : ""; };
    csv += text("index") + "," + text("id") + "," + text("network") + "," + text("network_name") + "," +
           text("hardware") + "," + text("hardware_name");
    for (const std::string &k : keys)
      csv += "," + (r["settings"].contains(k) ? csvField(r["settings"][k].get<std::string>()) : "");
    csv += "," + text("batch") + "," + text("objective") + "," + text("status") + "," + num("energy_pj") + "," +
           num("latency_cycles") + "," + num("latency_s") + "," + text("segments") + "," + text("pareto") + "," +
           text("message") + "\n";
  }
  Json merged = {{"points", summary.points},
                 {"finished", summary.finished},
                 {"failed", summary.failed},
                 {"units", {{"energy", "pJ"}, {"latency", "cycles"}}},
                 {"rows", rows}};
  std::string json = merged.dump(1) + "\n";
  std::vector<driver::OutputFile> files = {{"sweep.csv", csv}, {"sweep.json", json}, {"pareto.svg", paretoSvg(json)}};
  if (auto e = out.write(files)) {
    driver::reportOutputError(diags, *e);
    return false;
  }
  for (const driver::OutputFile &f : files)
    summary.written.push_back(out.shown(f.path));
  return true;
}

std::string paretoSvg(const std::string &sweepJson) {
  using svg::num;
  Json merged = Json::parse(sweepJson);
  struct Dot {
    double latency, energyPj;   // cycles, pJ
    bool front;
  };
  // One panel per workload (network and batch): energies of different
  // networks differ by orders of magnitude, the trade-off within one matters.
  std::map<std::string, std::vector<Dot>> groups;
  for (const Json &r : merged["rows"])
    if (r.contains("energy_pj") && r.contains("latency_cycles"))
      groups[r.value("network_name", r["network"].get<std::string>()) + ", batch " + r["batch"].dump()].push_back(
          {r["latency_cycles"], r["energy_pj"], r["pareto"]});
  const double W = 720, panelH = 300, left = 100, right = 45, top = 50, bottom = 50;
  double H = top + panelH * static_cast<double>(std::max<size_t>(groups.size(), 1));
  std::ostringstream s;
  s << "<text x=\"" << num(left) << "\" y=\"22\" font-size=\"15\">Energy vs latency of the sweep's "
    << merged["finished"] << " points</text>\n<text x=\"" << num(left)
    << "\" y=\"38\" fill=\"#555\">filled and joined: the Pareto front (lower is better on both axes)</text>\n";
  if (groups.empty())
    s << "<text x=\"" << num(left) << "\" y=\"" << num(top + 40) << "\">no point has both an energy and a latency</text>\n";
  size_t g = 0;
  for (auto &[name, dots] : groups) {
    const char *colour = svg::colour(g);
    double y0 = top + panelH * static_cast<double>(g++) + 24, y1 = y0 + panelH - bottom - 24, x0 = left, x1 = W - right;
    auto [lx, hx] = std::minmax_element(dots.begin(), dots.end(), [](auto &a, auto &b) { return a.latency < b.latency; });
    auto [ly, hy] = std::minmax_element(dots.begin(), dots.end(), [](auto &a, auto &b) { return a.energyPj < b.energyPj; });
    svg::Axis ax(lx->latency, hx->latency), ay(ly->energyPj / 1e6, hy->energyPj / 1e6);   // energy in uJ
    auto X = [&](double v) { return ax.at(v, x0, x1); };
    auto Y = [&](double v) { return ay.at(v, y1, y0); };
    auto at = [&](const Dot &d) {
      return "cx=\"" + num(X(d.latency)) + "\" cy=\"" + num(Y(d.energyPj / 1e6)) + "\" data-pj=\"" + formatFixed(d.energyPj, 3) +
             "\" data-cycles=\"" + formatFixed(d.latency, 3) + "\"";
    };
    std::vector<Dot> front;
    for (const Dot &d : dots)
      if (d.front)
        front.push_back(d);
    std::sort(front.begin(), front.end(), [](const Dot &a, const Dot &b) { return a.latency < b.latency; });
    front.erase(std::unique(front.begin(), front.end(),
                            [](const Dot &a, const Dot &b) { return a.latency == b.latency && a.energyPj == b.energyPj; }),
                front.end());
    s << "<text x=\"" << num(x0) << "\" y=\"" << num(y0 - 8) << "\" font-weight=\"bold\" fill=\"" << colour << "\">"
      << svg::escape(name) << "</text><text x=\"" << num(x1) << "\" y=\"" << num(y0 - 8)
      << "\" text-anchor=\"end\" fill=\"#555\">" << dots.size() << " points; " << front.size()
      << " distinct on the front</text>\n";
    for (size_t i = 0; i < ax.ticks; ++i)   // bounded by construction (svg::kMaxTicks)
      s << "<line x1=\"" << num(X(ax.tick(i))) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(X(ax.tick(i))) << "\" y2=\"" << num(y1)
        << "\" stroke=\"#e4e4e4\"/><text x=\"" << num(X(ax.tick(i))) << "\" y=\"" << num(y1 + 15) << "\" text-anchor=\"middle\">"
        << formatFixed(ax.tick(i), ax.digits) << "</text>\n";
    for (size_t i = 0; i < ay.ticks; ++i)
      s << "<line x1=\"" << num(x0) << "\" y1=\"" << num(Y(ay.tick(i))) << "\" x2=\"" << num(x1) << "\" y2=\""
        << num(Y(ay.tick(i))) << "\" stroke=\"#e4e4e4\"/><text x=\"" << num(x0 - 6) << "\" y=\"" << num(Y(ay.tick(i)) + 4)
        << "\" text-anchor=\"end\">" << formatFixed(ay.tick(i), ay.digits) << "</text>\n";
    s << "<rect x=\"" << num(x0) << "\" y=\"" << num(y0) << "\" width=\"" << num(x1 - x0) << "\" height=\""
      << num(y1 - y0) << "\" fill=\"none\" stroke=\"#444\"/>\n<text x=\"" << num((x0 + x1) / 2) << "\" y=\""
      << num(y1 + 32) << "\" text-anchor=\"middle\">latency [cycles]</text>\n<text transform=\"translate(16 "
      << num((y0 + y1) / 2) << ") rotate(-90)\" text-anchor=\"middle\">energy [uJ]</text>\n";
    for (const Dot &d : dots)
      if (!d.front)
        s << "<circle " << at(d) << " r=\"3\" fill=\"none\" stroke=\"" << colour
          << "\" stroke-opacity=\"0.6\" class=\"evaluated\"/>\n";
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"";
    for (size_t i = 0; i < front.size(); ++i)   // a staircase: what the front guarantees between its points
      s << (i ? " " + num(X(front[i].latency)) + "," + num(Y(front[i - 1].energyPj / 1e6)) + " " : "") << num(X(front[i].latency))
        << "," << num(Y(front[i].energyPj / 1e6));
    s << "\"/>\n";
    for (const Dot &d : front)
      s << "<circle " << at(d) << " r=\"4.5\" fill=\"" << colour << "\" class=\"front\"/>\n";
  }
  return svg::document(W, H, s.str());
}

std::vector<std::string> sliceArgv(const std::string &dflc, const std::string &spec, const std::string &outDir,
                                   const std::vector<std::string> &includes) {
  std::vector<std::string> argv = {dflc, "sweep", fs::absolute(spec).string(), "-o", fs::absolute(outDir).string()};
  for (const std::string &i : includes) {
    argv.push_back("-I");
    argv.push_back(fs::absolute(i).string());
  }
  return argv;
}

std::string argvFile(const std::vector<std::string> &argv) {
  std::string text;
  for (const std::string &a : argv)
    text += a + '\0';
  return text;
}

namespace {

/// The head of a job script: its #SBATCH lines, the user's last.
std::string sbatchHead(const std::string &what, const std::vector<std::string> &lines,
                       const std::vector<std::string> &sbatchOptions) {
  std::string s = "#!/bin/bash\n" + what +
                  "# Submit it from OUT (cd OUT && sbatch FILE): the job runs in the directory it is\n"
                  "# submitted from and reads its command from sweep.argv there, NUL-separated, so\n"
                  "# no path is written in this script for a shell to parse.\n";
  for (const std::string &l : lines)
    s += "#SBATCH " + l + "\n";
  for (const std::string &o : sbatchOptions)
    s += "#SBATCH " + o + "\n";
  return s + "if [ ! -f sweep.argv ]; then\n"
             "  echo \"dflc sweep: no sweep.argv in $PWD: submit the job from the sweep's output directory\" >&2\n"
             "  exit 2\n"
             "fi\n"
             "mapfile -d '' -t command < sweep.argv\n";
}

} // namespace

bool sbatchOptionFits(const std::string &option) { return option.find_first_of("\n\r") == std::string::npos; }

std::string slurmScript(size_t tasks, const std::vector<std::string> &sbatchOptions) {
  std::string n = std::to_string(tasks);
  return sbatchHead("# dflc sweep as a Slurm job array: task I of " + n +
                        " solves the points whose index is I modulo " + n +
                        "\n# and writes OUT/points/ID.json; then `dflc sweep --merge OUT` (docs/sweep.md).\n",
                    {"--job-name=dflc-sweep", "--array=0-" + std::to_string(tasks - 1), "--output=slurm/%A_%a.out"},
                    sbatchOptions) +
         "exec \"${command[@]}\" --slice \"$SLURM_ARRAY_TASK_ID/" + n + "\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\"\n";
}

std::string slurmMergeScript(const std::vector<std::string> &sbatchOptions) {
  return sbatchHead("# The merge of a dflc sweep's job array: `dflc sweep --merge OUT` (docs/sweep.md);\n"
                    "# `dflc sweep --slurm --submit` submits it to run after the array.\n",
                    {"--job-name=dflc-sweep-merge", "--output=slurm/merge.out"}, sbatchOptions) +
         "exec \"${command[0]}\" sweep --merge \"$PWD\"\n";
}

ParallelRun parallelCommand(const std::string &dflc, const std::string &spec, const std::string &outDir,
                            const std::vector<std::string> &includes, size_t tasks, const std::string &sshLogins) {
  // GNU parallel expands {}, {1}, {=perl=} in its command and hands it to a
  // shell: the paths reach the jobs as environment variables (--env sends
  // them to other hosts) named by a command of fixed text; only the slice
  // numbers are parallel's arguments.
  ParallelRun run;
  run.argv = {"parallel", "--will-cite", "--halt", "now,fail=1", "--sshlogin", sshLogins};
  auto value = [&](const std::string &v) {
    std::string name = "DFLC_SWEEP_" + std::to_string(run.env.size());
    run.env.push_back({name, v});
    run.argv.insert(run.argv.end(), {"--env", name});
    return " \"$" + name + "\"";
  };
  // One statement each: the variables are numbered in the order of the words.
  std::string command = "exec" + value(dflc);
  command += " sweep" + value(fs::absolute(spec).string());
  command += " -o" + value(fs::absolute(outDir).string());
  for (const std::string &i : includes)
    command += " -I" + value(fs::absolute(i).string());
  run.argv.push_back(command + " --slice {}/" + std::to_string(tasks) + " --jobs 1");
  run.argv.push_back(":::");
  for (size_t t = 0; t < tasks; ++t)
    run.argv.push_back(std::to_string(t));
  // The local shell parallel runs the command with: POSIX quoting whatever the user's $SHELL.
  run.env.push_back({"PARALLEL_SHELL", "/bin/sh"});
  return run;
}

} // namespace dfl::sweep
