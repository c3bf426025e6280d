#include "sweep/Sweep.h"

#include "driver/Compilation.h"
#include "support/Check.h"
#include "support/Format.h"
#include "support/Svg.h"

#include <nlohmann/json.hpp>

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
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace dfl::sweep {
namespace {

using Json = nlohmann::ordered_json;

std::string pointPath(const std::string &outDir, const std::string &id) {
  return (fs::path(outDir) / "points" / (id + ".json")).string();
}

std::optional<std::string> readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A point's result file, or nullopt if it is absent or not whole.
std::optional<Json> readPoint(const std::string &path) {
  auto text = readText(path);
  if (!text)
    return std::nullopt;
  Json j = Json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("status"))
    return std::nullopt;
  return j;
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
  bool solved = false;
  try {
    solved = variant && c.load() && c.analyze() && c.selectSchedule() && c.solve();
  } catch (const std::exception &e) {   // InternalError: this point's, reported in its row
    error = std::string("internal compiler error: ") + e.what();
  }
  if (c.analyzed()) {
    out["network_name"] = c.model().networks.at(0).name;
    out["hardware_name"] = c.model().hardware.at(0).name;
    out["batch"] = c.model().networks.at(0).batch;
  }
  if (solved) {
    const Solution &s = c.solution();
    const Hardware &hw = c.model().hardware.at(0);
    out["status"] = s.stats.limit == SolveLimit::None ? "ok" : "limit";
    out["energy_pj"] = s.result.energyPj;
    out["latency_cycles"] = s.result.latencyCycles;
    out["latency_s"] = s.result.latencyCycles / hw.frequencyHz;
    out["segments"] = s.result.segments.size();
  } else {
    out["status"] = "failed";
    for (const Diagnostic &d : c.diagnostics().diagnostics())
      if (error.empty() && d.severity == Severity::Error)
        error = d.message + " [" + d.code + "]";
    out["message"] = error.empty() ? "no valid schedule" : error;
  }
  if (auto e = options.out->write({{"points/" + p.id + ".json", out.dump(1) + "\n"}}))
    std::cerr << "dflc: error: cannot write '" << e->path << "': " << e->reason << "\n";   // the point stays unsolved
}

} // namespace

bool writeSpecRecord(const SweepSpec &spec, const std::vector<SweepPoint> &points, const driver::OutputDir &out,
                     std::string &error) {
  const std::string &outDir = out.path();
  std::string path = (fs::path(outDir) / "spec.json").string();
  Json ids = Json::array();
  for (const SweepPoint &p : points)
    ids.push_back(p.id);
  std::string text = Json{{"spec", spec.text}, {"points", ids}}.dump(1) + "\n";
  // Entered on every run (made if absent): a link planted at OUT/points is refused, never followed.
  if (auto e = out.makeDirectory("points")) {
    error = "cannot write '" + e->path + "': " + e->reason;
    return false;
  }
  auto old = readText(path);
  if (old && *old == text)
    return true;   // a slice of the same sweep, or a resume
  if (old) {
    Json j = Json::parse(*old, nullptr, false);
    if (j.is_discarded() || !j.contains("spec") || j["spec"] != spec.text) {
      error = "'" + outDir + "' holds the results of another sweep spec (" + path + "); choose another -o";
      return false;
    }
  }
  if (auto e = out.write({{"spec.json", text}})) {
    error = "cannot write '" + e->path + "': " + e->reason;
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

std::string shellQuote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? "'\\''" : std::string(1, c);
  return q + "'";
}

/// The command line a slice runs, quoted for a shell.
std::string sliceCommand(const std::string &dflc, const std::string &spec, const std::string &outDir,
                         const std::vector<std::string> &includes) {
  std::string cmd = shellQuote(dflc) + " sweep " + shellQuote(fs::absolute(spec).string()) + " -o " +
                    shellQuote(fs::absolute(outDir).string());
  for (const std::string &i : includes)
    cmd += " -I " + shellQuote(fs::absolute(i).string());
  return cmd;
}

} // namespace

bool runPoints(const SweepSpec &spec, const std::vector<SweepPoint> &points, const RunOptions &options,
               RunSummary &summary) {
  DFLC_CHECK(options.out) << "runPoints() without an open OUT";
  if (!writeSpecRecord(spec, points, *options.out, summary.error))
    return false;
  std::vector<const SweepPoint *> todo;
  for (const SweepPoint &p : points) {
    if (p.index % options.slices != options.slice)
      continue;
    ++summary.points;
    if (readPoint(pointPath(options.outDir, p.id)))
      ++summary.resumed;
    else
      todo.push_back(&p);
  }
  std::map<pid_t, const SweepPoint *> running;
  size_t next = 0, done = 0;
  pid_t parent = getpid();
  auto reap = [&] {
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (pid <= 0 || it == running.end())
      return;
    auto result = readPoint(pointPath(options.outDir, it->second->id));
    ++done;
    // A worker that died without a result (killed, crashed) leaves the point
    // to the next run; one that wrote "failed" has a final answer.
    if (!result || (*result)["status"] == "failed")
      ++summary.failed;
    summary.solved += result.has_value();
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
        summary.error = "cannot start a worker process: " + std::string(std::strerror(errno));
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

bool mergeSweep(const driver::OutputDir &out, MergeSummary &summary) {
  const std::string &outDir = out.path();
  std::string specPath = (fs::path(outDir) / "spec.json").string();
  auto specText = readText(specPath);
  Json record = specText ? Json::parse(*specText, nullptr, false) : Json();
  if (!specText || record.is_discarded() || !record.contains("points")) {
    summary.error = "'" + outDir + "' holds no sweep: " + specPath + (specText ? " is not a sweep's record" : " is missing");
    return false;
  }
  Json rows = Json::array();
  std::vector<std::string> keys;   // the settings' columns, in the spec's order
  for (const Json &id : record["points"]) {
    ++summary.points;
    auto p = readPoint(pointPath(outDir, id.get<std::string>()));
    if (!p)
      continue;
    ++summary.finished;
    summary.failed += (*p)["status"] == "failed";
    for (auto &[k, v] : (*p)["settings"].items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        keys.push_back(k);
    rows.push_back(*p);
  }
  // The energy-latency front of each workload (network and batch): the rows
  // no other row of it beats in both.
  for (Json &r : rows) {
    bool front = r.contains("energy_pj");
    for (const Json &o : rows)
      if (front && o.contains("energy_pj") && o["network"] == r["network"] && o["batch"] == r["batch"]) {
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
    summary.error = "cannot write '" + e->path + "': " + e->reason;
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
    if (r.contains("energy_pj"))
      groups[r.value("network_name", r["network"].get<std::string>()) + ", batch " + r["batch"].dump()].push_back(
          {r["latency_cycles"], r["energy_pj"], r["pareto"]});
  const double W = 720, panelH = 300, left = 100, right = 45, top = 50, bottom = 50;
  double H = top + panelH * static_cast<double>(std::max<size_t>(groups.size(), 1));
  std::ostringstream s;
  s << "<text x=\"" << num(left) << "\" y=\"22\" font-size=\"15\">Energy vs latency of the sweep's "
    << merged["finished"] << " points</text>\n<text x=\"" << num(left)
    << "\" y=\"38\" fill=\"#555\">filled and joined: the Pareto front (lower is better on both axes)</text>\n";
  if (groups.empty())
    s << "<text x=\"" << num(left) << "\" y=\"" << num(top + 40) << "\">no point has a schedule</text>\n";
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
    for (double v = ax.lo; v <= ax.hi + ax.step / 2; v += ax.step)
      s << "<line x1=\"" << num(X(v)) << "\" y1=\"" << num(y0) << "\" x2=\"" << num(X(v)) << "\" y2=\"" << num(y1)
        << "\" stroke=\"#e4e4e4\"/><text x=\"" << num(X(v)) << "\" y=\"" << num(y1 + 15) << "\" text-anchor=\"middle\">"
        << formatFixed(v, ax.digits) << "</text>\n";
    for (double v = ay.lo; v <= ay.hi + ay.step / 2; v += ay.step)
      s << "<line x1=\"" << num(x0) << "\" y1=\"" << num(Y(v)) << "\" x2=\"" << num(x1) << "\" y2=\"" << num(Y(v))
        << "\" stroke=\"#e4e4e4\"/><text x=\"" << num(x0 - 6) << "\" y=\"" << num(Y(v) + 4)
        << "\" text-anchor=\"end\">" << formatFixed(v, ay.digits) << "</text>\n";
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

std::string slurmScript(const std::string &dflc, const std::string &spec, const std::string &outDir,
                        const std::vector<std::string> &includes, size_t tasks,
                        const std::vector<std::string> &sbatchOptions) {
  std::string out = fs::absolute(outDir).string();
  std::string s = "#!/bin/bash\n"
                  "# dflc sweep as a Slurm job array: task I of " + std::to_string(tasks) +
                  " solves the points whose index is I modulo " + std::to_string(tasks) +
                  "\n# and writes OUT/points/ID.json; then `dflc sweep --merge OUT` (docs/sweep.md).\n"
                  "#SBATCH --job-name=dflc-sweep\n"
                  "#SBATCH --array=0-" + std::to_string(tasks - 1) + "\n"
                  "#SBATCH --output=" + out + "/slurm/%A_%a.out\n";
  for (const std::string &o : sbatchOptions)
    s += "#SBATCH " + o + "\n";
  return s + "exec " + sliceCommand(dflc, spec, outDir, includes) + " --slice \"$SLURM_ARRAY_TASK_ID/" +
         std::to_string(tasks) + "\" --jobs \"${SLURM_CPUS_PER_TASK:-1}\"\n";
}

std::vector<std::string> parallelCommand(const std::string &dflc, const std::string &spec, const std::string &outDir,
                                         const std::vector<std::string> &includes, size_t tasks,
                                         const std::string &sshLogins) {
  // One slice a job, one worker a slice: parallel fills each host's cores.
  std::vector<std::string> argv = {"parallel", "--will-cite", "--halt", "now,fail=1", "--sshlogin", sshLogins,
                                   sliceCommand(dflc, spec, outDir, includes) + " --slice {}/" +
                                       std::to_string(tasks) + " --jobs 1",
                                   ":::"};
  for (size_t t = 0; t < tasks; ++t)
    argv.push_back(std::to_string(t));
  return argv;
}

} // namespace dfl::sweep
