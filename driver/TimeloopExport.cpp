#include "driver/TimeloopExport.h"

#include "driver/Compilation.h"
#include "support/Check.h"

#include <algorithm>
#include <bit>
#include <iomanip>
#include <sstream>

namespace dfl::driver {
namespace {

/// Timeloop's CNN-layer dimension for dflc's (problem-shapes/cnn-layer.yaml):
/// the output width and height are P and Q; the input's W and H are derived
/// from them as dflc's Xi and Yi are.
const char *timeloopDim(Dim d) {
  switch (d) {
  case Dim::N: return "N";
  case Dim::C: return "C";
  case Dim::K: return "K";
  case Dim::Xo: return "P";
  case Dim::Yo: return "Q";
  case Dim::R: return "R";
  case Dim::S: return "S";
  default: return "";
  }
}

/// The one independent dim a stack or update moves (E0810 holds: checked).
Dim movedDim(const std::vector<std::pair<Dim, int64_t>> &moves) {
  for (const auto &[d, step] : moves)
    if (!isInputWindow(d))
      return d;
  return Dim::N;
}

/// One Timeloop loop: a dim, its factor, and the remainder its last
/// iteration runs when every loop outside it is at its last (Timeloop's
/// imperfect factorization, `K=8,5`).
struct Loop {
  Dim dim = Dim::N;
  int64_t factor = 1, residual = 1;
};

/// A Timeloop mapping directive: the loops of one storage level, temporal
/// or its spatial fan-out, innermost first.
struct Directive {
  std::string target;
  bool spatial = false;
  std::vector<Loop> loops;
  size_t split = 0;   // spatial: the first `split` loops run along X
};

std::string number(double v) {
  std::ostringstream os;
  os << std::setprecision(10) << v;
  return os.str();
}

std::string factorsText(const Directive &d) {
  std::string out;
  for (Dim dim : kIndependentDims) {
    Loop l{dim};
    for (const Loop &x : d.loops)
      if (x.dim == dim)
        l = x;
    out += (out.empty() ? "" : " ") + std::string(timeloopDim(dim)) + "=" + std::to_string(l.factor);
    if (l.residual != l.factor)
      out += "," + std::to_string(l.residual);
  }
  return out;
}

/// Timeloop's data space for a role (problem-shapes/cnn-layer.yaml).
const char *dataSpace(TensorRole r) {
  return r == TensorRole::Wgt ? "Weights" : r == TensorRole::Ifm ? "Inputs" : "Outputs";
}

/// ` A, B ` for a YAML flow list, empty for none.
std::string listText(const std::vector<std::string> &items) {
  std::string out;
  for (const std::string &i : items)
    out += (out.empty() ? " " : ", ") + i;
  return out.empty() ? "" : out + " ";
}

std::string permutationText(const Directive &d) {
  std::string out;
  for (const Loop &l : d.loops)
    out += timeloopDim(l.dim);
  for (Dim dim : kIndependentDims)   // loops of one trip, outermost: they do not move
    if (out.find(timeloopDim(dim)) == std::string::npos)
      out += timeloopDim(dim);
  return out;
}

class Exporter {
public:
  Exporter(const Model &model, const Schedule &s, const ScheduleResult &r, int layer, DiagnosticsEngine &diags)
      : net_(networkOf(model, s)), hw_(hardwareOf(model, s)), s_(s), layer_(net_.layers[static_cast<size_t>(layer)]),
        result_(r.layers[static_cast<size_t>(layer)]), index_(layer), diags_(diags) {
    for (const LayerScheduleModel &ls : s.layers)
      if (ls.layer == layer)
        schedule_ = &ls;
  }

  std::optional<std::string> run() {
    if (!problemExpressible() || !segmentExpressible() || !buildMapping())
      return std::nullopt;
    std::ostringstream os;
    os << "# Layer '" << layer_.name << "' of '" << net_.name << "' on '" << hw_.name
       << "', as dflc's schedule runs it: Timeloop v0.4 YAML for timeloop-model\n"
       << "# (NVlabs/timeloop v3.0.3). docs/timeloop.md: how each directive became factors,\n"
       << "# and what the two cost models count differently.\n";
    problem(os);
    architecture(os);
    energyTable(os);
    mapping(os);
    return os.str();
  }

private:
  SourceRange layerRange() const { return schedule_ ? schedule_->range : layer_.range; }

  void refuse(SourceRange range, diag::ID id, const std::string &what) {
    diags_.report(range, id) << layer_.name << what;
  }

  /// Timeloop's problem is one CNN layer: a convolution or fully connected
  /// layer of one input, weights of its own, no groups, forward.
  bool problemExpressible() {
    std::string why;
    if (layer_.type != LayerType::Conv && layer_.type != LayerType::FC)
      why = std::string("a '") + layer_.kindName() + "' layer";
    else if (layer_.output != TensorRole::Ofm)
      why = "a backward layer (its output is the " + std::string(roleName(layer_.output)) + ")";
    else if (layer_.groups != 1)
      why = "a convolution of " + std::to_string(layer_.groups) + " groups";
    else if (layer_.ifmOperands().size() != 1)
      why = "a convolution of " + std::to_string(layer_.ifmOperands().size()) + " operands joined along C";
    if (why.empty())
      return true;
    refuse(layer_.range, diag::err_timeloop_layer, why);
    return false;
  }

  /// Timeloop prices one layer alone, on the whole chip.
  bool segmentExpressible() {
    for (const Segment &seg : s_.segments) {
      if (std::find(seg.layers.begin(), seg.layers.end(), index_) == seg.layers.end())
        continue;
      std::string why;
      if (seg.instances > 1)
        why = "runs in a segment split into " + std::to_string(seg.instances) + " instances";
      else if (seg.pipelined)
        why = "runs in a pipelined segment";
      else if (seg.layers.size() > 1)
        why = "runs in a temporal segment of " + std::to_string(seg.layers.size()) + " layers";
      if (!why.empty()) {
        refuse(seg.range, diag::err_timeloop_segment, why);
        return false;
      }
    }
    if (!schedule_ || !result_.complete) {
      refuse(layerRange(), diag::err_timeloop_segment, "is not scheduled at every level");
      return false;
    }
    return true;
  }

  /// Level `level`'s directives as the analysis took them: the schedule's,
  /// else the hardware's fixed dataflow (scheduler/analysis, docs/directives.md §10).
  const LevelDirectives *written(size_t level) const {
    for (const LevelDirectives &ld : schedule_->levels)
      if (ld.level == static_cast<int>(level) && !ld.empty())
        return &ld;
    const LevelDirectives &fixed = hw_.levels[level].fixed;
    return fixed.empty() ? nullptr : &fixed;
  }

  /// The mapping: level l's tile extents are its temporal factors (level 0)
  /// or follow from the loops inside; level l's stacks are level l+1's
  /// spatial factors and its updates level l+1's temporal factors, innermost
  /// first. Refuses what Timeloop's one loop per dim and level, and its
  /// spatial loops inside the temporal ones, cannot say.
  bool buildMapping() {
    const size_t L = hw_.levels.size();
    Directive inner{target(0), false, {}, 0};
    for (Dim d : kIndependentDims)
      inner.loops.push_back({d, at(result_.levels[0].extent, d), 0});
    directives_.push_back(inner);
    for (size_t l = 0; l + 1 < L; ++l) {
      const LevelDirectives *ld = written(l);
      const LevelResult &lr = result_.levels[l];
      Directive spatial{target(l + 1), true, {}, 0}, temporal{target(l + 1), false, {}, 0};
      std::vector<std::pair<Dim, SourceRange>> stackDims, updateDims;
      if (ld) {
        for (const StackDirective &st : ld->stacks) {
          Dim d = movedDim(st.shifts);
          if (!once(stackDims, d, st.range, l, "stack"))
            return false;
          spatial.loops.push_back({d, st.repl, 0});
        }
        for (size_t u = 0; u < ld->updates.size(); ++u) {
          const UpdateDirective &up = ld->updates[u];
          Dim d = movedDim(up.steps);
          if (!once(updateDims, d, up.range, l, "update"))
            return false;
          temporal.loops.push_back({d, lr.trips[u], 0});
        }
        // Timeloop's spatial loops of a level sit inside its temporal ones:
        // a stack along d must step further than the update along d.
        for (const auto &[d, range] : stackDims)
          for (const auto &[e, urange] : updateDims)
            if (d == e && stepOf(*ld, d, true) > stepOf(*ld, d, false)) {
              refuse(range, diag::err_timeloop_mapping,
                     "the stack along " + std::string(dimName(d)) + " at " + hw_.levels[l].name +
                         " steps further than its update along it; Timeloop's spatial loops of a level run "
                         "inside its temporal ones");
              return false;
            }
      }
      if (!placeSpatial(spatial, l, ld))
        return false;
      if (hw_.levels[l].units() > 1)   // a fan-out: Timeloop wants its factors even if all 1
        directives_.push_back(spatial);
      directives_.push_back(temporal);
    }
    return residuals();
  }

  static int64_t stepOf(const LevelDirectives &ld, Dim d, bool stack) {
    if (stack) {
      for (const StackDirective &st : ld.stacks)
        if (movedDim(st.shifts) == d)
          for (const auto &[e, v] : st.shifts)
            if (e == d)
              return v;
    } else {
      for (const UpdateDirective &up : ld.updates)
        if (movedDim(up.steps) == d)
          for (const auto &[e, v] : up.steps)
            if (e == d)
              return v;
    }
    return 0;
  }

  bool once(std::vector<std::pair<Dim, SourceRange>> &seen, Dim d, SourceRange range, size_t l, const char *what) {
    for (const auto &[e, first] : seen)
      if (e == d) {
        refuse(range, diag::err_timeloop_mapping,
               "a second " + std::string(what) + " along " + dimName(d) + " at " + hw_.levels[l].name +
                   "; Timeloop's mapping has one " + (std::string(what) == "stack" ? "spatial" : "temporal") +
                   " loop per dimension and level");
        return false;
      }
    seen.push_back({d, range});
    return true;
  }

  /// Orders the spatial loops so that the first `split` fit the array's
  /// columns (Timeloop's X) and the rest its rows (Y), as E0803's split.
  bool placeSpatial(Directive &spatial, size_t l, const LevelDirectives *ld) {
    const size_t n = spatial.loops.size();
    const Level &level = hw_.levels[l];
    for (uint64_t mask = 0; mask < (uint64_t(1) << n); ++mask) {
      int64_t x = 1, y = 1;
      for (size_t i = 0; i < n; ++i)
        (mask >> i & 1 ? x : y) *= spatial.loops[i].factor;
      if (x > level.cols || y > level.rows)
        continue;
      std::stable_partition(spatial.loops.begin(), spatial.loops.end(), [&](const Loop &lp) {
        for (size_t i = 0; i < n; ++i)
          if (spatial.loops[i].dim == lp.dim)
            return bool(mask >> i & 1);
        return false;
      });
      spatial.split = static_cast<size_t>(std::popcount(mask));
      return true;
    }
    refuse(ld ? ld->range : layerRange(), diag::err_timeloop_mapping,
           "no split of the stacks at " + level.name + " into the array's rows and columns");
    return false;
  }

  /// Each dim's factors, innermost first, are a mixed radix over its bound;
  /// the digits of bound - 1 are the remainders of Timeloop's last
  /// iterations. This is dflc's partial tiling only where a level's tiles
  /// over-cover the one tile of the level outside, the whole bound.
  bool residuals() {
    const size_t L = hw_.levels.size();
    for (Dim d : kIndependentDims) {
      for (size_t l = 0; l + 2 < L; ++l) {
        int64_t span = at(result_.levels[l].extent, d);
        for (const Loop *lp : loopsOf(d, l))
          span *= lp->factor;
        int64_t outer = at(result_.levels[l + 1].extent, d);
        if (span > outer && outer < at(layer_.bounds, d)) {
          const LevelDirectives *ld = written(l);
          refuse(ld ? ld->range : layerRange(), diag::err_timeloop_mapping,
                 "the tiles along " + std::string(dimName(d)) + " at " + hw_.levels[l].name + " cover " +
                     std::to_string(span) + " of each " + std::to_string(outer) + " tile of " +
                     hw_.levels[l + 1].name + ", which repeats; Timeloop leaves a remainder only in the last "
                     "iteration of all");
          return false;
        }
      }
      int64_t rest = at(layer_.bounds, d) - 1;
      for (Directive &dir : directives_)
        for (Loop &lp : dir.loops)
          if (lp.dim == d) {
            lp.residual = rest % lp.factor + 1;
            rest /= lp.factor;
          }
      DFLC_CHECK(rest == 0) << "the factors of " << dimName(d) << " do not cover layer '" << layer_.name << "'";
    }
    return true;
  }

  /// The loops along d that level l's stacks and updates make (the two
  /// directives after level l's in directives_: its parent's spatial and
  /// temporal loops).
  std::vector<const Loop *> loopsOf(Dim d, size_t l) const {
    std::vector<const Loop *> out;
    const std::string parent = target(l + 1);
    for (const Directive &dir : directives_)
      if (dir.target == parent)
        for (const Loop &lp : dir.loops)
          if (lp.dim == d)
            out.push_back(&lp);
    return out;
  }

  void problem(std::ostream &os) const {
    const Window &w = layer_.window;
    os << "problem:\n"
       << "  shape:\n"
       << "    name: CNN-Layer\n"
       << "    dimensions: [ R, S, P, Q, C, K, N ]\n"
       << "    coefficients:\n";
    for (const char *c : {"Wstride", "Hstride", "Wdilation", "Hdilation"})
      os << "    - name: " << c << "\n      default: 1\n";
    os << "    data-spaces:\n"
       << "    - name: Weights\n"
       << "      projection: [ [[C]], [[K]], [[R]], [[S]] ]\n"
       << "    - name: Inputs\n"
       << "      projection: [ [[N]], [[C]], [[R, Wdilation], [P, Wstride]], [[S, Hdilation], [Q, Hstride]] ]\n"
       << "    - name: Outputs\n"
       << "      projection: [ [[N]], [[K]], [[Q]], [[P]] ]\n"
       << "      read-write: True\n"
       << "  instance:\n";
    for (Dim d : kIndependentDims)
      os << "    " << timeloopDim(d) << ": " << at(layer_.bounds, d) << "\n";
    os << "    Wstride: " << w.x.stride << "\n    Hstride: " << w.y.stride << "\n    Wdilation: " << w.x.dilation
       << "\n    Hdilation: " << w.y.dilation << "\n";
    if (w.padded())
      os << "  # dflc's padding is not here: Timeloop's input is the padded map, read from\n"
            "  # " << hw_.levels.back().name << " whole (docs/timeloop.md)\n";
  }

  /// Buffer b of level l as a Timeloop storage component: the level's name
  /// for its implicit buffer, LEVEL_BUFFER for a `buffer` block.
  std::string component(size_t l, size_t b) const {
    const Level &level = hw_.levels[l];
    return level.buffers[b].implicit ? level.name : level.name + "_" + level.buffers[b].name;
  }

  /// The component level l's loops go to: its last buffer, the innermost of
  /// the level's components (the others nest outside it with factors of 1,
  /// so each holds the level's tile of its roles).
  std::string target(size_t l) const { return component(l, hw_.levels[l].buffers.size() - 1); }

  /// Level l's units per unit of the level outside, as a range name.
  std::string unitName(size_t l) const {
    int64_t n = hw_.levels[l].units();
    return hw_.levels[l].name + "_units" + (n > 1 ? "[0.." + std::to_string(n - 1) + "]" : "");
  }

  /// The columns of level l across the chip: Timeloop's meshX.
  int64_t meshX(size_t l) const {
    int64_t x = 1;
    for (size_t m = l; m < hw_.levels.size(); ++m)
      x *= hw_.levels[m].cols;
    return x;
  }

  void architecture(std::ostream &os) const {
    const size_t L = hw_.levels.size();
    os << "architecture:\n  version: 0.4\n  subtree:\n  - name: system\n";
    std::string indent = "    ";
    for (size_t l = L; l-- > 0;) {
      const Level &level = hw_.levels[l];
      if (l + 1 < L) {
        os << indent << "subtree:\n" << indent << "- name: " << unitName(l) << "\n";
        indent += "  ";
      }
      os << indent << "local:\n";
      std::string a = indent + "    ";
      for (size_t b = 0; b < level.buffers.size(); ++b) {   // outermost first
        const Buffer &buf = level.buffers[b];
        os << indent << "- name: " << component(l, b) << "\n"
           << indent << "  class: " << (l + 1 == L ? "DRAM" : l == 0 ? "regfile" : "SRAM") << "\n"
           << indent << "  attributes:\n";
        os << a << "word-bits: " << hw_.wordBits << "\n" << a << "width: " << hw_.wordBits << "\n"
           << a << "block-size: 1\n";
        if (buf.capacityBytes)
          os << a << "depth: " << *buf.capacityBytes * 8 / hw_.wordBits << "\n";
        if (l + 1 < L)
          os << a << "meshX: " << meshX(l) << "\n";
        os << a << "addr-gen-energy: 0\n";
      }
      if (l == 0)
        os << indent << "- name: MAC\n"
           << indent << "  class: intmac\n"
           << indent << "  attributes:\n"
           << a << "datawidth: " << hw_.wordBits << "\n"
           << a << "meshX: " << meshX(0) << "\n";
    }
  }

  /// The ERT: dflc's energies per word read and written, per MAC. The
  /// component names are the architecture's paths.
  void energyTable(std::ostream &os) const {
    const size_t L = hw_.levels.size();
    os << "ERT:\n  version: 0.4\n  tables:\n";
    std::string path = "system";
    auto action = [&](const char *name, double pj) {
      os << "    - name: " << name << "\n      arguments: null\n      energy: " << number(pj) << "\n";
    };
    for (size_t l = L; l-- > 0;) {
      if (l + 1 < L)
        path += "." + unitName(l);
      const Level &level = hw_.levels[l];
      for (size_t b = 0; b < level.buffers.size(); ++b) {
        os << "  - name: " << path << "." << component(l, b) << "\n    actions:\n";
        action("read", level.buffers[b].readEnergyPj);
        action("write", level.buffers[b].writeEnergyPj);
      }
      if (l == 0) {
        os << "  - name: " << path << ".MAC\n    actions:\n";
        action("mac_random", hw_.macEnergyPj);
        action("mac_gated", 0);
        action("mac_skipped", 0);
      }
    }
  }

  void mapping(std::ostream &os) const {
    os << "mapping:\n";
    for (const Directive &d : directives_) {
      os << "- target: " << d.target << "\n  type: " << (d.spatial ? "spatial" : "temporal") << "\n"
         << "  factors: " << factorsText(d) << "\n"
         << "  permutation: " << permutationText(d) << "\n";
      if (d.spatial)
        os << "  split: " << d.split << "\n";
    }
    // A level's outer buffers: factors of 1, the level's tile (target()).
    for (size_t l = 0; l < hw_.levels.size(); ++l)
      for (size_t b = 0; b + 1 < hw_.levels[l].buffers.size(); ++b)
        os << "- target: " << component(l, b) << "\n  type: temporal\n  factors: " << factorsText(Directive{})
           << "\n  permutation: " << permutationText(Directive{}) << "\n";
    // Each component keeps the roles its buffer holds and bypasses the rest.
    for (size_t l = 0; l < hw_.levels.size(); ++l)
      for (size_t b = 0; b < hw_.levels[l].buffers.size(); ++b) {
        std::vector<std::string> keep, bypass;
        for (TensorRole r : {TensorRole::Wgt, TensorRole::Ifm, TensorRole::Ofm})
          (hw_.levels[l].buffers[b].holds(r) ? keep : bypass).push_back(dataSpace(r));
        os << "- target: " << component(l, b) << "\n  type: datatype\n  keep: [" << listText(keep)
           << "]\n  bypass: [" << listText(bypass) << "]\n";
      }
  }

  const Network &net_;
  const Hardware &hw_;
  const Schedule &s_;
  const Layer &layer_;
  const LayerResult &result_;
  int index_;
  DiagnosticsEngine &diags_;
  const LayerScheduleModel *schedule_ = nullptr;
  std::vector<Directive> directives_;   // innermost first
};

} // namespace

std::optional<std::string> timeloopYaml(const Model &model, const Schedule &s, const ScheduleResult &r, int layer,
                                        DiagnosticsEngine &diags) {
  return Exporter(model, s, r, layer, diags).run();
}

std::optional<std::string> Compilation::exportTimeloop(const std::string &layer) {
  enter(Stage::Checked, "export");
  if (checked_.size() != 1) {
    diags_.report({}, diag::err_run_schedule_count) << checked_.size() << "export" << "exports one";
    return std::nullopt;
  }
  const Schedule &s = model_.schedules[static_cast<size_t>(checked_[0].schedule)];
  const Network &net = networkOf(model_, s);
  int index = net.findLayer(layer);
  if (index < 0) {
    std::vector<std::string> names;
    for (const Layer &l : net.layers)
      names.push_back(l.name);
    diags_.report({}, diag::err_export_no_layer) << net.name << layer << didYouMean(layer, names);
    return std::nullopt;
  }
  return timeloopYaml(model_, s, checked_[0].result, index, diags_);
}

} // namespace dfl::driver
