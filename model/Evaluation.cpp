#include "model/Evaluation.h"

#include "support/Format.h"

#include <algorithm>
#include <sstream>

namespace dfl {

EnergyUnit energyUnitFor(double largestPj) {
  if (largestPj < 1e4)
    return {"pJ", 1};
  if (largestPj < 1e7)
    return {"nJ", 1e3};
  if (largestPj < 1e10)
    return {"uJ", 1e6};
  return {"mJ", 1e9};
}

std::string evaluationSummary(const Evaluation &e) {
  std::string out = "energy " + (e.energyPj ? formatEnergy(*e.energyPj) : std::string("not modelled")) + ", latency ";
  if (!e.latencyCycles)
    return out + "not modelled";
  std::ostringstream mhz;   // as the report has always printed the frequency
  mhz << e.frequencyHz / 1e6;
  return out + formatFixed(*e.latencyCycles, 0) + " cycles (" + formatFixed(*e.latencyCycles / e.frequencyHz * 1e3, 3) +
         " ms at " + mhz.str() + " MHz)";
}

namespace {

std::string ratio(double a, double b) { return a > 0 ? formatFixed(b / a, 3) : "-"; }

const EnergyPart *partNamed(const std::vector<EnergyPart> &parts, const std::string &name) {
  for (const EnergyPart &p : parts)
    if (p.name == name)
      return &p;
  return nullptr;
}

} // namespace

std::string evaluationDiffText(const Evaluation &a, const Evaluation &b) {
  std::ostringstream os;
  size_t nameW = 9;   // "component"
  for (const EvaluationRow &r : a.rows)
    nameW = std::max(nameW, r.name.size());
  // The unit from the larger total; a side without one (incomplete), its rows' sum.
  auto total = [](const Evaluation &x) {
    double sum = 0;
    for (const EvaluationRow &r : x.rows)
      sum += r.energyPj.value_or(0);
    return x.energyPj.value_or(sum);
  };
  EnergyUnit unit = energyUnitFor(std::max(total(a), total(b)));
  auto e = [&](double pj) { return formatFixed(pj / unit.pj, 3); };
  const std::string u = std::string("[") + unit.name + "]";
  auto row = [&](const std::string &name, const std::vector<std::string> &cells) {
    os << padRight(name, nameW);
    for (size_t i = 0; i < cells.size(); ++i)
      os << "  " << padLeft(cells[i], i % 3 == 2 ? 6 : 12);
    os << "\n";
  };
  // Energy and latency of A and B and B/A; "-" for a figure a side does not have.
  auto cells = [&](std::optional<double> ea, std::optional<double> eb, std::optional<double> la,
                   std::optional<double> lb) {
    auto opt = [](std::optional<double> x, const auto &f) { return x ? f(*x) : std::string("-"); };
    auto cyc = [](double c) { return formatFixed(c, 0); };
    return std::vector<std::string>{opt(ea, e), opt(eb, e), ea && eb ? ratio(*ea, *eb) : "-",
                                     opt(la, cyc), opt(lb, cyc), la && lb ? ratio(*la, *lb) : "-"};
  };
  row(a.rowKind, {"energy A", "energy B", "B/A", "cycles A", "cycles B", "B/A"});
  row("", {u, u, "", "", "", ""});
  auto known = [](const EvaluationRow &r) { return r.energyPj || r.latencyCycles; };
  for (size_t i = 0; i < a.rows.size() && i < b.rows.size(); ++i) {
    const EvaluationRow &ra = a.rows[i], &rb = b.rows[i];
    if (!known(ra) || !known(rb)) {
      row(ra.name, {known(ra) ? e(ra.energyPj.value_or(0)) : "incomplete", known(rb) ? e(rb.energyPj.value_or(0)) : "incomplete"});
      continue;
    }
    row(ra.name, cells(ra.energyPj, rb.energyPj, ra.latencyCycles, rb.latencyCycles));
  }
  if (!(a.energyPj || a.latencyCycles) || !(b.energyPj || b.latencyCycles))
    return os.str();
  row("total", cells(a.energyPj, b.energyPj, a.latencyCycles, b.latencyCycles));
  if (!a.energyPj || !b.energyPj)
    return os.str();
  // The total by component: where the difference is (A's components, then any only B has).
  os << "\n" << padRight("component", nameW) << "  " << padLeft("A " + u, 12) << "  " << padLeft("B " + u, 12) << "  "
     << padLeft("B-A " + u, 12) << "\n";
  std::vector<std::string> names;
  for (const Evaluation *x : {&a, &b})
    for (const EnergyPart &p : x->parts)
      if (std::find(names.begin(), names.end(), p.name) == names.end())
        names.push_back(p.name);
  for (const std::string &name : names) {
    const EnergyPart *x = partNamed(a.parts, name), *y = partNamed(b.parts, name);
    double px = x ? x->pj : 0, py = y ? y->pj : 0;
    os << padRight(name, nameW) << "  " << padLeft(e(px), 12) << "  " << padLeft(e(py), 12) << "  " << padLeft(e(py - px), 12)
       << "\n";
  }
  return os.str();
}

} // namespace dfl
