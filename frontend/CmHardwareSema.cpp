// Computational-memory hardware analysis: cores, DPU, interconnect and GCU
// (docs/language.md, "Computational-memory accelerators").
#include "frontend/SemaContext.h"
#include "model/Network.h"

#include <algorithm>
#include <set>

namespace dfl::sema {
namespace {

// Limits (docs/language.md, "Limits"): the placement's distance table is
// cores x cores, and a crossbar's products stay exact in doubles.
constexpr int64_t kMaxCores = 4096;
constexpr int64_t kMaxCrossbarSide = int64_t(1) << 20;

/// The DPU operations a `dpu` block may price: the fused element-wise
/// operators, the DPU layers, and `psum` (adding a tile's partial sums).
std::vector<std::string> dpuOperations() {
  std::vector<std::string> ops = activationNames();
  for (const char *op : {"add", "mul", "maxpool", "avgpool", "concat", "softmax", "layernorm"})
    ops.push_back(op);
  for (const UnaryFnSpec &f : unaryFunctions())   // sigmoid is an activation too
    if (std::find(ops.begin(), ops.end(), f.name) == ops.end())
      ops.push_back(f.name);
  ops.push_back("psum");
  return ops;
}

class CmHardwareAnalysis {
public:
  CmHardwareAnalysis(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) : decl_(decl), diags_(diags) {}

  CmHardware run() {
    hw_.name = decl_.name.name;
    hw_.range = decl_.range;
    hw_.nameRange = decl_.name.range;
    PropertyTable top("hardware '" + hw_.name + "'", {"word", "frequency"}, diags_);
    std::map<std::string, SourceRange> seen;
    const ast::HardwareBlock *net = nullptr, *gcu = nullptr;
    for (const ast::HardwareItem &item : decl_.items) {
      if (auto *p = std::get_if<ast::Property>(&item)) {
        if (auto *ok = top.accept(*p))
          wordOrFrequency(*ok, hw_.wordBits, hw_.frequencyHz, diags_);
        continue;
      }
      const auto &b = std::get<ast::HardwareBlock>(item);
      static const std::vector<std::string> kinds = {"core", "dpu", "interconnect", "gcu"};
      if (!knownBlock(b, kinds, diag::err_cm_block, hw_.name, diags_) || !onceUnnamed(b, seen, diags_))
        continue;
      if (b.kind.name == "core")
        core(b);
      else if (b.kind.name == "dpu")
        dpu(b);
      else if (b.kind.name == "interconnect")
        net = &b;
      else
        gcu = &b;
    }
    for (const char *req : {"word", "frequency"})
      if (!top.has(req))
        diags_.report(decl_.name.range, diag::err_missing_property) << "hardware '" + hw_.name + "'" << req;
    for (const char *req : {"dpu", "interconnect", "gcu"})
      if (!seen.count(req))
        diags_.report(decl_.name.range, diag::err_missing_property) << "hardware '" + hw_.name + "'" << req;
    if (net)
      interconnect(*net);   // before the GCU: its ports name cores
    if (net && gcu)
      ports(*gcu);
    return std::move(hw_);
  }

private:
  void core(const ast::HardwareBlock &b) {
    PropertyTable t("'core'", {"crossbar", "mvm_cycles", "mvm_energy", "sram"}, diags_);
    for (const ast::BlockItem &bi : b.items) {
      const auto *p = std::get_if<ast::Property>(&bi);
      if (!p || !t.accept(*p))
        continue;
      if (p->key.name == "crossbar") {
        const ast::Value *v = single(*p, diags_);
        if (!v)
          continue;
        if (v->kind != ast::Value::Kind::Array) {
          diags_.report(v->range, diag::err_value_kind) << "crossbar" << "ROWS x COLUMNS, e.g. 256 x 256";
        } else if (v->rows < 1 || v->cols < 1 || v->rows > kMaxCrossbarSide || v->cols > kMaxCrossbarSide) {
          diags_.report(v->range, diag::err_value_range) << "crossbar" << "from 1 x 1 to 2^20 x 2^20" << valueText(*v);
        } else {
          hw_.xbarRows = v->rows;
          hw_.xbarCols = v->cols;
        }
      } else if (p->key.name == "mvm_cycles") {
        if (auto c = wholeNumber(*p, diags_))
          hw_.mvmCycles = *c;
      } else if (p->key.name == "mvm_energy") {
        if (auto e = positiveQuantity(*p, QuantityKind::Energy, diags_, true))
          hw_.mvmEnergyPj = *e;
      } else if (auto bytes = positiveQuantity(*p, QuantityKind::Size, diags_)) {
        hw_.sramBytes = static_cast<int64_t>(*bytes);
        hw_.sramRange = p->range;
      }
    }
    for (const char *req : {"crossbar", "sram"})
      if (!t.has(req))
        diags_.report(b.kind.range, diag::err_missing_property) << "'core'" << req;
  }

  void dpu(const ast::HardwareBlock &b) {
    PropertyTable t("'dpu' (cycles per output element)", dpuOperations(), diags_);
    for (const ast::BlockItem &bi : b.items)
      if (const auto *p = std::get_if<ast::Property>(&bi); p && t.accept(*p))
        if (auto c = wholeNumber(*p, diags_, true))
          hw_.dpuCycles[p->key.name] = *c;
  }

  void interconnect(const ast::HardwareBlock &b) {
    PropertyTable t("'interconnect'", {"topology", "cores", "link", "hop_latency", "hop_energy"}, diags_);
    const ast::Property *cores = nullptr;
    std::vector<const ast::Property *> links;
    bool topologyOk = false;
    for (const ast::BlockItem &bi : b.items) {
      const auto *p = std::get_if<ast::Property>(&bi);
      if (!p)
        continue;
      if (p->key.name == "link") {   // one property per link: repeatable
        links.push_back(p);
        continue;
      }
      if (!t.accept(*p))
        continue;
      if (p->key.name == "topology") {
        if (const ast::Value *v = single(*p, diags_)) {
          static const std::map<std::string, CmTopology> names = {
              {"mesh", CmTopology::Mesh}, {"ring", CmTopology::Ring}, {"links", CmTopology::Links}};
          auto it = names.find(v->text);
          if (v->kind != ast::Value::Kind::Word || it == names.end())
            diags_.report(v->range, diag::err_value_kind) << "topology" << "mesh, ring or links";
          else {
            hw_.topology = it->second;
            topologyOk = true;
          }
        }
      } else if (p->key.name == "cores") {
        cores = p;
      } else if (p->key.name == "hop_latency") {
        if (auto c = wholeNumber(*p, diags_))
          hw_.hopCycles = *c;
      } else if (auto e = positiveQuantity(*p, QuantityKind::Energy, diags_, true)) {
        hw_.hopEnergyPj = *e;
      }
    }
    for (const char *req : {"topology", "cores"})
      if (!t.has(req))
        diags_.report(b.kind.range, diag::err_missing_property) << "'interconnect'" << req;
    if (!topologyOk || !cores)
      return;
    hw_.coresRange = cores->range;
    if (!coreCount(*cores))
      return;
    const int n = static_cast<int>(hw_.cores);
    if (hw_.topology == CmTopology::Mesh) {
      const int rows = static_cast<int>(hw_.meshRows), cols = static_cast<int>(hw_.meshCols);
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          int u = r * cols + c;
          if (c + 1 < cols)
            both(u, u + 1);
          if (r + 1 < rows)
            both(u, u + cols);
        }
    } else if (hw_.topology == CmTopology::Ring) {
      for (int u = 0; n > 1 && u < (n == 2 ? 1 : n); ++u)
        both(u, (u + 1) % n);
    }
    if (hw_.topology != CmTopology::Links && !links.empty()) {
      diags_.report(links[0]->key.range, diag::err_cm_links)
          << std::string("'link' lists the links of `topology = links;`; a ") + cmTopologyName(hw_.topology) +
                 " has its links already";
      return;
    }
    std::set<std::pair<int, int>> have;
    for (const ast::Property *p : links) {
      if (p->values.size() != 2) {
        diags_.report(p->range, diag::err_value_count) << "link" << "two cores (from, to)" << p->values.size();
        continue;
      }
      int ends[2];
      bool ok = true;
      for (int i = 0; i < 2; ++i) {
        const ast::Value &v = p->values[static_cast<size_t>(i)];
        auto c = coreIndex(v, "link");
        ok = ok && c;
        ends[i] = c.value_or(0);
      }
      if (!ok)
        continue;
      if (ends[0] == ends[1]) {
        diags_.report(p->range, diag::err_cm_links) << "a link joins two different cores; this one starts and ends at core " +
                                                          std::to_string(ends[0]);
        continue;
      }
      if (!have.emplace(ends[0], ends[1]).second) {
        diags_.report(p->range, diag::err_cm_links)
            << "link " + std::to_string(ends[0]) + " -> " + std::to_string(ends[1]) + " is listed twice";
        continue;
      }
      hw_.links.emplace_back(ends[0], ends[1]);
    }
    if (hw_.topology == CmTopology::Links && links.empty())
      diags_.report(b.kind.range, diag::err_cm_links)
          << "`topology = links;` needs its links listed: `link = FROM, TO;` per directed link";
  }

  void both(int a, int b) {
    hw_.links.emplace_back(a, b);
    hw_.links.emplace_back(b, a);
  }

  /// `cores = ROWS x COLS;` for a mesh, `cores = N;` otherwise.
  bool coreCount(const ast::Property &p) {
    const ast::Value *v = single(p, diags_);
    if (!v)
      return false;
    if (hw_.topology == CmTopology::Mesh) {
      if (v->kind != ast::Value::Kind::Array) {
        diags_.report(v->range, diag::err_value_kind) << "cores" << "ROWS x COLUMNS for a mesh, e.g. 8 x 8";
        return false;
      }
      if (v->rows < 1 || v->cols < 1 || v->rows * v->cols > kMaxCores) {
        diags_.report(v->range, diag::err_value_range)
            << "cores" << "from 1 to " + std::to_string(kMaxCores) + " cores" << valueText(*v);
        return false;
      }
      hw_.meshRows = v->rows;
      hw_.meshCols = v->cols;
      hw_.cores = v->rows * v->cols;
      return true;
    }
    if (v->kind != ast::Value::Kind::Quantity || !v->isInteger || !v->unit.empty()) {
      diags_.report(v->range, diag::err_value_kind) << "cores" << std::string("a number of cores for a ") +
                                                                     cmTopologyName(hw_.topology);
      return false;
    }
    if (v->numeric < 1 || v->numeric > kMaxCores) {
      diags_.report(v->range, diag::err_value_range)
          << "cores" << "from 1 to " + std::to_string(kMaxCores) + " cores" << valueText(*v);
      return false;
    }
    hw_.cores = static_cast<int64_t>(v->numeric);
    return true;
  }

  /// A core by index (row-major on a mesh).
  std::optional<int> coreIndex(const ast::Value &v, const std::string &key) {
    if (v.kind != ast::Value::Kind::Quantity || !v.isInteger || !v.unit.empty()) {
      diags_.report(v.range, diag::err_value_kind) << key << "a core index (row-major on a mesh, from 0)";
      return std::nullopt;
    }
    if (v.numeric >= static_cast<double>(hw_.cores)) {
      diags_.report(v.range, diag::err_cm_core_index) << key << v.number << hw_.name << hw_.cores - 1;
      return std::nullopt;
    }
    return static_cast<int>(v.numeric);
  }

  void ports(const ast::HardwareBlock &b) {
    PropertyTable t("'gcu'", {"input_core", "output_core"}, diags_);
    for (const ast::BlockItem &bi : b.items)
      if (const auto *p = std::get_if<ast::Property>(&bi); p && t.accept(*p))
        if (const ast::Value *v = single(*p, diags_))
          if (auto c = coreIndex(*v, p->key.name)) {
            (p->key.name == "input_core" ? hw_.inputCore : hw_.outputCore) = *c;
            (p->key.name == "input_core" ? hw_.inputRange : hw_.outputRange) = v->range;
          }
    for (const char *req : {"input_core", "output_core"})
      if (!t.has(req))
        diags_.report(b.kind.range, diag::err_missing_property) << "'gcu'" << req;
  }

  const ast::HardwareDecl &decl_;
  DiagnosticsEngine &diags_;
  CmHardware hw_;
};

} // namespace

bool isCmHardware(const ast::HardwareDecl &decl) { return hasBlock(decl, "core"); }

CmHardware analyzeCmHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) {
  return CmHardwareAnalysis(decl, diags).run();
}

} // namespace dfl::sema
