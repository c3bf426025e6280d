// Cluster/core DSA hardware analysis: cluster, core, compute units and DDR
// (docs/language.md, "Cluster/core DSAs").
#include "frontend/SemaContext.h"

namespace dfl::sema {
namespace {

// Limits (docs/language.md, "Limits"): cores and clusters index small tables,
// and capacities stay exact in doubles.
constexpr int64_t kMaxClusters = 1024, kMaxCores = 1024;
constexpr double kMaxBytes = double(int64_t(1) << 50);

class DsaHardwareAnalysis {
public:
  DsaHardwareAnalysis(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) : decl_(decl), diags_(diags) {}

  DsaHardware run() {
    hw_.name = decl_.name.name;
    hw_.range = decl_.range;
    hw_.nameRange = decl_.name.range;
    const std::string where = "hardware '" + hw_.name + "'";
    PropertyTable top(where, {"word", "frequency"}, diags_);
    std::map<std::string, SourceRange> seen;
    std::map<std::string, SourceRange> unitNames;
    for (const ast::HardwareItem &item : decl_.items) {
      if (auto *p = std::get_if<ast::Property>(&item)) {
        if (auto *ok = top.accept(*p))
          wordOrFrequency(*ok, hw_.wordBits, hw_.frequencyHz, diags_);
        continue;
      }
      const auto &b = std::get<ast::HardwareBlock>(item);
      static const std::vector<std::string> kinds = {"cluster", "core", "unit", "ddr"};
      if (!knownBlock(b, kinds, diag::err_dsa_block, hw_.name, diags_))
        continue;
      if (b.kind.name == "unit") {   // many, each named
        if (!b.name) {
          unitErrors_ = true;
          diags_.report(b.kind.range, diag::err_block_name) << "a unit needs a name: `unit NAME { ... }`";
          continue;
        }
        if (auto [it, inserted] = unitNames.emplace(b.name->name, b.name->range); !inserted) {
          diags_.report(b.name->range, diag::err_redefinition).note(it->second, diag::note_previous_definition)
              << "unit" << b.name->name;
          continue;
        }
        unit(b);
        continue;
      }
      if (!onceUnnamed(b, seen, diags_))
        continue;
      if (b.kind.name == "cluster")
        cluster(b);
      else if (b.kind.name == "core")
        core(b);
      else
        ddr(b);
    }
    if (gbBandwidth_)
      hw_.gbBytesPerCycle = gbBandwidth_->perSecond ? gbBandwidth_->value / hw_.frequencyHz : gbBandwidth_->value;
    if (ddrBandwidth_)
      hw_.ddrBytesPerSecond = ddrBandwidth_->perSecond ? ddrBandwidth_->value : ddrBandwidth_->value * hw_.frequencyHz;
    for (const char *req : {"word", "frequency"})
      if (!top.has(req))
        diags_.report(decl_.name.range, diag::err_missing_property) << where << req;
    for (const char *req : {"core", "ddr"})
      if (!seen.count(req))
        diags_.report(decl_.name.range, diag::err_missing_property) << where << req;
    if (!unitErrors_)   // a unit reported already may have been the missing kind
      for (DsaUnitKind k : {DsaUnitKind::Matrix, DsaUnitKind::Vector})
        if (hw_.rate(k) <= 0)
          diags_.report(decl_.name.range, diag::err_dsa_units) << hw_.name << dsaUnitKindName(k);
    return std::move(hw_);
  }

private:
  /// A size in bytes, positive and at most 2^50.
  std::optional<int64_t> bytes(const ast::Property &p) {
    auto b = positiveQuantity(p, QuantityKind::Size, diags_);
    if (b && *b > kMaxBytes) {
      diags_.report(p.values[0].range, diag::err_value_range) << p.key.name << "at most 2^50 bytes" << valueText(p.values[0]);
      return std::nullopt;
    }
    return b ? std::optional<int64_t>(static_cast<int64_t>(*b)) : std::nullopt;
  }

  /// A positive count up to `max`: the range its diagnostic states is the real one.
  std::optional<int64_t> upTo(const ast::Property &p, int64_t max) { return wholeNumber(p, diags_, false, max); }

  void cluster(const ast::HardwareBlock &b) {
    PropertyTable t("'cluster'", {"count", "cores", "gb", "gb_bandwidth"}, diags_);
    for (const ast::BlockItem &bi : b.items) {
      const auto *p = std::get_if<ast::Property>(&bi);
      if (!p || !t.accept(*p))
        continue;
      if (p->key.name == "count") {
        if (auto n = upTo(*p, kMaxClusters))
          hw_.clusters = *n;
      } else if (p->key.name == "cores") {
        if (auto n = upTo(*p, kMaxCores))
          hw_.coresPerCluster = *n;
      } else if (p->key.name == "gb") {
        if (auto n = bytes(*p)) {
          hw_.gbBytes = *n;
          gbRange_ = p->values[0].range;
        }
      } else {
        gbBandwidth_ = bandwidth(*p);
      }
    }
    for (const char *req : {"count", "cores", "gb", "gb_bandwidth"})
      if (!t.has(req))
        diags_.report(b.kind.range, diag::err_missing_property) << "'cluster'" << req;
  }

  /// A positive bandwidth, per cycle or per second (converted at the
  /// hardware's frequency once every property is read).
  std::optional<Quantity> bandwidth(const ast::Property &p) {
    const ast::Value *v = single(p, diags_);
    if (!v)
      return std::nullopt;
    auto q = toQuantity(*v, QuantityKind::Bandwidth, p.key.name, diags_);
    if (!q)
      return std::nullopt;
    if (q->value <= 0) {
      diags_.report(v->range, diag::err_value_range) << p.key.name << "positive" << valueText(*v);
      return std::nullopt;
    }
    return q;
  }

  void core(const ast::HardwareBlock &b) {
    PropertyTable t("'core'", {"lb", "weight_buffer"}, diags_);
    SourceRange wbRange;
    for (const ast::BlockItem &bi : b.items) {
      const auto *p = std::get_if<ast::Property>(&bi);
      if (!p || !t.accept(*p))
        continue;
      if (auto n = bytes(*p)) {
        (p->key.name == "lb" ? hw_.lbBytes : hw_.weightBufferBytes) = *n;
        if (p->key.name == "weight_buffer")
          wbRange = p->values[0].range;
      }
    }
    if (!t.has("lb"))
      diags_.report(b.kind.range, diag::err_missing_property) << "'core'" << "lb";
    else if (hw_.lbBytes > 0 && hw_.weightBufferBytes >= hw_.lbBytes)
      diags_.report(wbRange, diag::err_dsa_capacity)
          << "the weight buffer (" + formatBytes(hw_.weightBufferBytes) + ") must leave room for activations in lb (" +
                 formatBytes(hw_.lbBytes) + ")";
    else if (hw_.gbBytes > 0 && hw_.lbBytes > hw_.gbBytes)
      diags_.report(b.kind.range, diag::err_dsa_capacity).note(gbRange_, diag::note_capacity_here, "gb",
                                                                 formatBytes(hw_.gbBytes))
          << "a core's lb (" + formatBytes(hw_.lbBytes) + ") is larger than its cluster's gb (" +
                 formatBytes(hw_.gbBytes) + "): the gb must hold what an lb spills";
  }

  void unit(const ast::HardwareBlock &b) {
    PropertyTable t("'unit " + b.name->name + "'", {"kind", "rate"}, diags_);
    DsaUnit u;
    u.name = b.name->name;
    u.range = b.range;
    bool ok = true;
    for (const ast::BlockItem &bi : b.items) {
      const auto *p = std::get_if<ast::Property>(&bi);
      if (!p || !t.accept(*p))
        continue;
      if (p->key.name == "kind") {
        const ast::Value *v = single(*p, diags_);
        if (v && v->kind == ast::Value::Kind::Word && (v->text == "vector" || v->text == "matrix"))
          u.kind = v->text == "vector" ? DsaUnitKind::Vector : DsaUnitKind::Matrix;
        else {
          ok = false;
          if (v)
            diags_.report(v->range, diag::err_value_kind) << "kind" << "vector or matrix";
        }
      } else if (auto r = upTo(*p, int64_t(1) << 24)) {
        u.opsPerCycle = static_cast<double>(*r);
      } else {
        ok = false;
      }
    }
    for (const char *req : {"kind", "rate"})
      if (!t.has(req)) {
        diags_.report(b.kind.range, diag::err_missing_property) << "'unit " + u.name + "'" << req;
        ok = false;
      }
    if (ok)
      hw_.units.push_back(std::move(u));
    else
      unitErrors_ = true;
  }

  void ddr(const ast::HardwareBlock &b) {
    PropertyTable t("'ddr'", {"bandwidth"}, diags_);
    for (const ast::BlockItem &bi : b.items)
      if (const auto *p = std::get_if<ast::Property>(&bi); p && t.accept(*p))
        ddrBandwidth_ = bandwidth(*p);
    if (!t.has("bandwidth"))
      diags_.report(b.kind.range, diag::err_missing_property) << "'ddr'" << "bandwidth";
  }

  const ast::HardwareDecl &decl_;
  DiagnosticsEngine &diags_;
  DsaHardware hw_;
  SourceRange gbRange_;
  bool unitErrors_ = false;
  std::optional<Quantity> gbBandwidth_, ddrBandwidth_;
};

} // namespace

bool isDsaHardware(const ast::HardwareDecl &decl) { return hasBlock(decl, "cluster"); }

DsaHardware analyzeDsaHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) {
  return DsaHardwareAnalysis(decl, diags).run();
}

} // namespace dfl::sema
