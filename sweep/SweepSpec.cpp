#include "sweep/SweepSpec.h"

#include "driver/Compilation.h"
#include "frontend/Parser.h"
#include "support/Format.h"
#include "sweep/SweepJson.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

namespace fs = std::filesystem;

namespace dfl::sweep {
namespace {

/// FNV-1a, 64 bits: a point's id, stable across machines and runs.
uint64_t fnv1a(const std::string &s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

/// The first error `c`'s stages reported, as "message" (its location is in a
/// generated or other file, so the spec's location stands for it).
std::string firstError(const driver::Compilation &c) {
  for (const Diagnostic &d : c.diagnostics().diagnostics())
    if (d.severity == Severity::Error) {
      std::string where;
      if (d.range.valid()) {
        LineCol lc = c.sources().lineCol(d.range.begin);
        where = fs::path(c.sources().path(d.range.begin.file)).filename().string() + ":" +
                std::to_string(lc.line) + ":" + std::to_string(lc.column) + ": ";
      }
      return where + d.message + " [" + d.code + "]";
    }
  return "it does not load";
}

class SpecReader {
public:
  SpecReader(SweepSpec &spec, const std::vector<std::string> &includes, SourceManager &sm, DiagnosticsEngine &diags)
      : spec_(spec), includes_(includes), sm_(sm), diags_(diags) {}

  bool read() {
    std::string error;
    auto id = sm_.loadFile(spec_.path, error);
    if (!id) {
      diags_.report({}, diag::err_file_unreadable) << spec_.path << error;
      return false;
    }
    file_ = *id;
    spec_.text = sm_.text(file_);
    auto parsed = parseLocated(file_, sm_, diags_, diag::err_sweep_json, diag::err_sweep_spec);
    if (!parsed)
      return false;
    json_ = std::move(*parsed);
    const Json &j = json_.value;
    if (!j.is_object())
      return fail("", "a sweep spec is a JSON object: {\"hardware\": ..., \"networks\": [...], ...}");
    static const std::vector<std::string> keys = {"hardware", "networks", "set",   "batch",
                                                  "objective", "solver",  "time_limit"};
    for (auto &[key, v] : j.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        return fail(LocatedJson::key(key), "unknown key '" + key + "'" + didYouMean(key, keys) +
                                               " (expected hardware, networks, set, batch, objective, solver or time_limit)");
    for (const char *key : {"hardware", "networks"})
      if (!j.contains(key))
        return fail("", std::string("a sweep spec needs \"") + key + "\"");
    // The point count before anything per value is done: files are read and
    // every value compiled only for a sweep of a size that can run.
    return strings(j, "hardware", spec_.hardware) && strings(j, "networks", spec_.networks) && options(j) &&
           overrides(j) && pointCount() && files(spec_.hardware, "hardware", spec_.hardwarePaths, spec_.hardwareTexts) &&
           files(spec_.networks, "networks", spec_.networkPaths, spec_.networkTexts) && inputs();
  }

private:
  SourceRange at(const std::string &pointer) const { return json_.at(pointer); }
  bool has(const std::string &pointer) const { return json_.ranges.count(pointer) != 0; }
  bool fail(const std::string &pointer, const std::string &message) {
    diags_.report(at(pointer), diag::err_sweep_spec) << message;
    return false;
  }

  /// `key`: a non-empty string or list of strings, without repeats.
  bool strings(const Json &j, const std::string &key, std::vector<std::string> &out) {
    const Json &v = j.at(key);
    std::string p = "/" + key;
    if (v.is_string())
      out = {v.get<std::string>()};
    else if (v.is_array() && !v.empty() && std::all_of(v.begin(), v.end(), [](const Json &e) { return e.is_string(); }))
      out = v.get<std::vector<std::string>>();
    else
      return fail(p, "\"" + key + "\" is a string or a non-empty list of strings");
    std::set<std::string> seen;
    for (size_t i = 0; i < out.size(); ++i)
      if (!seen.insert(out[i]).second)
        return fail(p + "/" + std::to_string(i), "'" + out[i] + "' is listed twice in \"" + key + "\"");
    return true;
  }

  bool options(const Json &j) {
    if (j.contains("batch")) {
      const Json &b = j["batch"];
      Json list = b.is_array() ? b : Json::array({b});
      if (list.empty())
        return fail("/batch", "\"batch\" is a positive integer or a non-empty list of them");
      spec_.batches.clear();
      for (size_t i = 0; i < list.size(); ++i)
        if (!list[i].is_number_integer() || list[i].get<int64_t>() <= 0)
          return fail(b.is_array() ? "/batch/" + std::to_string(i) : "/batch",
                      "a batch is a positive integer, got " + list[i].dump());
        else
          spec_.batches.push_back(list[i].get<int64_t>());
    } else {
      spec_.batches = {std::nullopt};
    }
    spec_.objectives = {"energy"};
    if (j.contains("objective")) {
      if (!strings(j, "objective", spec_.objectives))
        return false;
      for (size_t i = 0; i < spec_.objectives.size(); ++i)
        if (auto e = driver::objectiveNameError(spec_.objectives[i]))
          return fail(j["objective"].is_array() ? "/objective/" + std::to_string(i) : "/objective", *e);
    }
    if (j.contains("solver")) {
      if (!j["solver"].is_string())
        return fail("/solver", "\"solver\" is a solver's name");
      spec_.solver = j["solver"].get<std::string>();
      if (auto e = driver::solverNameError(spec_.solver))
        return fail("/solver", *e);
    }
    if (j.contains("time_limit")) {
      const Json &t = j["time_limit"];
      if (t.is_string() && t.get<std::string>() == "none")
        spec_.timeLimitSeconds = std::nullopt;
      else if (t.is_number() && t.get<double>() >= 0 && t.get<double>() <= 1e9)
        spec_.timeLimitSeconds = t.get<double>();
      else
        return fail("/time_limit", "\"time_limit\" is a non-negative number of seconds per point, or \"none\"");
    }
    return true;
  }

  /// The file a path names: relative to the spec's directory, then the -I
  /// dirs, DFLC_PATH and the stdlib root (as an import is found).
  bool files(const std::vector<std::string> &written, const std::string &key, std::vector<std::string> &paths,
             std::vector<std::string> &texts) {
    std::vector<std::string> roots = {fs::path(spec_.path).parent_path().string()};
    roots.insert(roots.end(), includes_.begin(), includes_.end());
    appendDefaultSearchRoots(roots);
    for (size_t i = 0; i < written.size(); ++i) {
      std::string p = "/" + key + (has("/" + key + "/0") ? "/" + std::to_string(i) : "");
      std::string found;
      for (const std::string &root : roots) {
        fs::path candidate = fs::path(written[i]).is_absolute() ? fs::path(written[i]) : fs::path(root) / written[i];
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec)) {
          found = candidate.lexically_normal().string();
          break;
        }
      }
      if (found.empty())
        return fail(p, "cannot find '" + written[i] + "' (searched the spec's directory, the -I dirs, DFLC_PATH and "
                       "the stdlib)");
      std::string error;
      SourceManager sm;
      auto id = sm.loadFile(found, error);
      if (!id)
        return fail(p, "cannot read '" + found + "': " + error);
      paths.push_back(found);
      texts.push_back(sm.text(*id));
    }
    return true;
  }

  bool overrides(const Json &j) {
    if (!j.contains("set"))
      return true;
    const Json &set = j["set"];
    if (!set.is_object())
      return fail("/set", "\"set\" is an object: {\"LEVEL.property\": [\"value\", ...], ...}");
    for (auto &[key, values] : set.items()) {
      std::string p = "/set" + LocatedJson::key(key);
      Override o{key, {}};
      if (!values.is_array() || values.empty())
        return fail(p, "the values of '" + key + "' are a non-empty list of DFL values, e.g. [\"64 KiB\", \"128 KiB\"]");
      std::set<std::string> seen;
      for (size_t i = 0; i < values.size(); ++i) {
        const Json &v = values[i];
        if (!v.is_string() && !v.is_number())
          return fail(p + "/" + std::to_string(i), "a value is DFL text (\"64 KiB\", \"8 x 8\") or a number");
        std::string text = v.is_string() ? v.get<std::string>() : v.dump();
        if (!seen.insert(text).second)
          return fail(p + "/" + std::to_string(i), "'" + text + "' is listed twice for '" + key + "'");
        o.values.push_back(text);
      }
      spec_.overrides.push_back(std::move(o));
    }
    return true;
  }

  /// The product's size, refused above kMaxSweepPoints: its points, their
  /// ids in OUT/spec.json and the merged table are all held at once.
  bool pointCount() {
    std::vector<std::pair<std::string, size_t>> factors = {{"hardware", spec_.hardware.size()},
                                                           {"networks", spec_.networks.size()}};
    for (const Override &o : spec_.overrides)
      factors.push_back({"/set" + LocatedJson::key(o.key), o.values.size()});
    factors.push_back({"batch", spec_.batches.size()});
    factors.push_back({"objective", spec_.objectives.size()});
    unsigned __int128 points = 1;   // at most 2^64 per factor, at most a few million factors in a 64 MiB spec
    std::string product;
    size_t largest = 0;
    for (size_t f = 0; f < factors.size(); ++f) {
      points = std::min<unsigned __int128>(points * factors[f].second, ~uint64_t(0));
      product += (f ? " x " : "") + std::to_string(factors[f].second);
      if (factors[f].second > factors[largest].second)
        largest = f;
    }
    if (points <= kMaxSweepPoints)
      return true;
    std::string pointer = factors[largest].first[0] == '/' ? factors[largest].first : "/" + factors[largest].first;
    if (!has(pointer))
      pointer = "";
    if (product.size() > 200)
      product = product.substr(0, 200) + " ...";
    diags_.report(at(pointer), diag::err_sweep_too_large)
        << (points >= ~uint64_t(0) ? "more than 2^64" : formatNumber(static_cast<double>(points)))
        << "hardware x networks x set values x batches x objectives = " + product << formatNumber(kMaxSweepPoints);
    return false;
  }

  /// Every hardware template and every override value, alone, through the
  /// template's sema; every network with the first template.
  bool inputs() {
    for (size_t h = 0; h < spec_.hardware.size(); ++h) {
      std::string p = "/hardware" + std::string(has("/hardware/0") ? "/" + std::to_string(h) : "");
      driver::Compilation c(driverOptions({spec_.hardwarePaths[h]}));
      if (!(c.load() && c.analyze()))
        return failInput(p, "hardware", spec_.hardware[h], firstError(c));
      if (hardwareCount(c.model()) != 1 || !c.model().networks.empty() || !c.model().schedules.empty() ||
          !c.model().dsaSchedules.empty())
        return failInput(p, "hardware", spec_.hardware[h], "the file must declare one hardware template and nothing else");
      const Model &m = c.model();
      std::string name = !m.hardware.empty() ? m.hardware[0].name : !m.dsaHardware.empty() ? m.dsaHardware[0].name : m.cmHardware.at(0).name;
      for (const Override &o : spec_.overrides)
        for (size_t i = 0; i < o.values.size(); ++i) {
          std::string error;
          std::string p = "/set" + LocatedJson::key(o.key);
          SourceRange where = at(p + "/" + std::to_string(i));
          auto text = hardwareVariant(spec_.hardwarePaths[h], spec_.hardwareTexts[h], {Override{o.key, {}}},
                                      {o.values[i]}, error);
          if (!text) {
            diags_.report(at(p), diag::err_sweep_spec) << error;
            return false;
          }
          driver::DriverOptions vo = driverOptions({spec_.hardwarePaths[h]});
          vo.openBuffers[canonicalPath(spec_.hardwarePaths[h])] = *text;
          driver::Compilation v(vo);
          if (!(v.load() && v.analyze())) {
            diags_.report(where, diag::err_sweep_value) << o.key << o.values[i] << name << firstError(v);
            return false;
          }
        }
    }
    for (size_t n = 0; n < spec_.networks.size(); ++n) {
      std::string p = "/networks" + std::string(has("/networks/0") ? "/" + std::to_string(n) : "");
      driver::Compilation c(driverOptions({spec_.networkPaths[n], spec_.hardwarePaths[0]}));
      if (!(c.load() && c.analyze()))
        return failInput(p, "network", spec_.networks[n], firstError(c));
      if (c.model().networks.size() != 1 || hardwareCount(c.model()) != 1 || !c.model().schedules.empty() ||
          !c.model().dsaSchedules.empty())
        return failInput(p, "network", spec_.networks[n], "the file must declare one network and nothing else");
    }
    return true;
  }
  /// Templates of every target: memory hierarchy, cluster/core DSA, computational memory.
  static size_t hardwareCount(const Model &m) { return m.hardware.size() + m.dsaHardware.size() + m.cmHardware.size(); }
  bool failInput(const std::string &pointer, const char *what, const std::string &name, const std::string &why) {
    diags_.report(at(pointer), diag::err_sweep_input) << what << name << why;
    return false;
  }
  driver::DriverOptions driverOptions(std::vector<std::string> files) const {
    driver::DriverOptions o;
    o.files = std::move(files);
    o.includes = includes_;
    return o;
  }

  SweepSpec &spec_;
  const std::vector<std::string> &includes_;
  SourceManager &sm_;
  DiagnosticsEngine &diags_;
  uint32_t file_ = 0;
  LocatedJson json_;
};

} // namespace

std::optional<SweepSpec> readSweepSpec(const std::string &path, const std::vector<std::string> &includes,
                                       SourceManager &sm, DiagnosticsEngine &diags) {
  SweepSpec spec;
  spec.path = path;
  if (!SpecReader(spec, includes, sm, diags).read())
    return std::nullopt;
  return spec;
}

std::vector<SweepPoint> sweepPoints(const SweepSpec &spec) {
  std::vector<SweepPoint> points;
  std::vector<size_t> pick(spec.overrides.size(), 0);   // an odometer over the overrides' values
  for (size_t h = 0; h < spec.hardware.size(); ++h)
    for (size_t n = 0; n < spec.networks.size(); ++n)
      for (bool more = true; more;) {
        std::vector<std::string> settings;
        for (size_t o = 0; o < pick.size(); ++o)
          settings.push_back(spec.overrides[o].values[pick[o]]);
        for (const std::optional<int64_t> &batch : spec.batches)
          for (const std::string &objective : spec.objectives) {
            SweepPoint p{points.size(), "", h, n, settings, batch, objective};
            // What the point solves, contents included: an edited network or
            // template gives new ids, so a resume never reuses a stale result.
            std::string what = "hardware " + spec.hardware[h] + " " + hex(fnv1a(spec.hardwareTexts[h])) +
                               "\nnetwork " + spec.networks[n] + " " + hex(fnv1a(spec.networkTexts[n]));
            for (size_t o = 0; o < pick.size(); ++o)
              what += "\nset " + spec.overrides[o].key + " = " + settings[o];
            what += "\nbatch " + (batch ? std::to_string(*batch) : "own") + "\nobjective " + objective +
                    "\nsolver " + spec.solver + "\ntime_limit " +
                    (spec.timeLimitSeconds ? std::to_string(*spec.timeLimitSeconds) : "none");
            p.id = hex(fnv1a(what));
            points.push_back(std::move(p));
          }
        more = false;   // the next odometer reading; the last override turns fastest
        for (size_t o = pick.size(); o-- > 0;) {
          if (++pick[o] < spec.overrides[o].values.size()) {
            more = true;
            break;
          }
          pick[o] = 0;
        }
      }
  return points;
}

std::optional<std::string> hardwareVariant(const std::string &templatePath, const std::string &templateText,
                                           const std::vector<Override> &overrides,
                                           const std::vector<std::string> &settings, std::string &error) {
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  uint32_t id = sm.addBuffer(templatePath, templateText);
  auto file = parseFile(id, sm, diags);
  const ast::HardwareDecl *hw = nullptr;
  if (file)
    for (const ast::TopDecl &d : file->decls)
      if (auto *h = std::get_if<ast::HardwareDecl>(&d))
        hw = h;
  if (!hw) {
    error = "'" + templatePath + "' declares no hardware template";
    return std::nullopt;
  }
  // Edits by offset, applied back to front so that earlier offsets hold.
  std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::string>> edits;
  for (size_t o = 0; o < overrides.size(); ++o) {
    const std::string &key = overrides[o].key;
    size_t dot = key.find('.');
    std::string block = dot == std::string::npos ? "" : key.substr(0, dot);
    std::string property = dot == std::string::npos ? key : key.substr(dot + 1);
    const std::vector<ast::HardwareItem> *items = nullptr;
    const std::vector<ast::BlockItem> *blockItems = nullptr;
    uint32_t insertAt = hw->range.end.offset - 1;   // before the closing brace
    std::vector<std::string> blocks;
    if (block.empty()) {
      items = &hw->items;
    } else {
      for (const ast::HardwareItem &item : hw->items)
        if (auto *b = std::get_if<ast::HardwareBlock>(&item)) {
          std::string name = b->name ? b->name->name : b->kind.name;
          blocks.push_back(name);
          if (name == block)
            blockItems = &b->items, insertAt = b->range.end.offset - 1;
        }
      if (!blockItems) {
        error = "hardware '" + hw->name.name + "' has no level or block '" + block + "'" + didYouMean(block, blocks) +
                " (it has " + joinList(blocks, ", ", " and ") + ")";
        return std::nullopt;
      }
    }
    const ast::Property *found = nullptr;
    auto look = [&](const auto &list) {
      for (const auto &item : list)
        if (auto *p = std::get_if<ast::Property>(&item); p && p->key.name == property)
          found = p;
    };
    items ? look(*items) : look(*blockItems);
    if (found && !found->values.empty())
      edits.push_back({{found->values.front().range.begin.offset, found->values.back().range.end.offset}, settings[o]});
    else
      edits.push_back({{insertAt, insertAt}, " " + property + " = " + settings[o] + "; "});
  }
  std::sort(edits.begin(), edits.end(), [](const auto &a, const auto &b) { return a.first.first > b.first.first; });
  std::string text = templateText;
  for (const auto &[range, replacement] : edits)
    text.replace(range.first, range.second - range.first, replacement);
  return text;
}

} // namespace dfl::sweep
