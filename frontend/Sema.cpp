#include "frontend/Sema.h"

#include "frontend/SemaContext.h"
#include "model/TrainingGraph.h"

#include <cmath>

namespace dfl {

namespace sema {

std::string valueText(const ast::Value &v) {
  return v.kind == ast::Value::Kind::Quantity ? v.number + (v.unit.empty() ? "" : " " + v.unit)
         : v.kind == ast::Value::Kind::Array  ? std::to_string(v.rows) + " x " + std::to_string(v.cols)
                                              : "'" + v.text + "'";
}

std::optional<int64_t> wordWidthBits(const ast::Property &p, int64_t maxBits, DiagnosticsEngine &diags) {
  auto bytes = positiveQuantity(p, QuantityKind::Size, diags);
  if (!bytes)
    return std::nullopt;
  const double bits = *bytes * 8;
  if (bits < 1 || bits > static_cast<double>(maxBits) || bits != std::round(bits)) {
    diags.report(p.values[0].range, diag::err_value_range)
        << p.key.name << "a whole number of bits from 1 to " + std::to_string(maxBits) << valueText(p.values[0]);
    return std::nullopt;
  }
  return static_cast<int64_t>(bits);
}

void wordOrFrequency(const ast::Property &p, int64_t &wordBits, double &frequencyHz, DiagnosticsEngine &diags) {
  if (p.key.name == "word") {
    if (auto bits = wordWidthBits(p, 64, diags))
      wordBits = *bits;
  } else if (auto hz = positiveQuantity(p, QuantityKind::Frequency, diags)) {
    frequencyHz = *hz;
  }
}

bool knownBlock(const ast::HardwareBlock &b, const std::vector<std::string> &kinds, diag::ID unknownKind,
                const std::string &hardware, DiagnosticsEngine &diags) {
  if (std::find(kinds.begin(), kinds.end(), b.kind.name) == kinds.end()) {
    diags.report(b.kind.range, unknownKind) << b.kind.name << hardware << Suggestion{b.kind.range, b.kind.name, kinds};
    return false;
  }
  for (const ast::BlockItem &bi : b.items) {
    if (auto *d = std::get_if<ast::Directive>(&bi))
      diags.report(d->range, diag::err_directive_outside_level) << "dataflow" << b.kind.name;
    else if (auto *sb = std::get_if<ast::SubBlock>(&bi))
      diags.report(sb->kind.range, diag::err_nested_block)
          << sb->kind.name << "'" + b.kind.name + "'" << "";
  }
  return true;
}

bool onceUnnamed(const ast::HardwareBlock &b, std::map<std::string, SourceRange> &seen, DiagnosticsEngine &diags) {
  if (b.name) {
    diags.report(b.name->range, diag::err_block_name) << "a '" + b.kind.name + "' block takes no name";
    return false;
  }
  if (auto [it, inserted] = seen.emplace(b.kind.name, b.kind.range); !inserted) {
    diags.report(b.kind.range, diag::err_redefinition).note(it->second, diag::note_previous_definition)
        << "block" << b.kind.name;
    return false;
  }
  return true;
}

std::optional<int64_t> positiveInteger(const ast::Value &v, const std::string &key,
                                       DiagnosticsEngine &diags, int64_t least) {
  const char *what = least == 0 ? "a non-negative integer" : "a positive integer";
  if (v.kind != ast::Value::Kind::Quantity || !v.isInteger || !v.unit.empty()) {
    diags.report(v.range, diag::err_parameter_value) << key << what << valueText(v);
    return std::nullopt;
  }
  if (v.numeric < static_cast<double>(least)) {
    diags.report(v.range, diag::err_parameter_value) << key << what << v.number;
    return std::nullopt;
  }
  return static_cast<int64_t>(v.numeric);
}

std::optional<bool> boolean(const ast::Value &v, const std::string &key, DiagnosticsEngine &diags) {
  if (v.kind == ast::Value::Kind::Word && (v.text == "true" || v.text == "false"))
    return v.text == "true";
  if (v.kind == ast::Value::Kind::Quantity && v.isInteger && v.unit.empty() &&
      (v.numeric == 0 || v.numeric == 1))
    return v.numeric == 1;
  diags.report(v.range, diag::err_parameter_value) << key << "true or false"
                                                   << (v.kind == ast::Value::Kind::Quantity ? v.number : "'" + v.text + "'");
  return std::nullopt;
}

Intrinsic analyzeIntrinsic(const ast::IntrinsicDecl &decl, DiagnosticsEngine &diags) {
  Intrinsic in;
  in.name = decl.name.name;
  in.range = decl.range;
  Scope dims;
  std::vector<std::string> names;
  for (const ast::DimSize &d : decl.dims) {
    if (!dims.define(d.dim, "index", diags))
      continue;
    if (d.size.value < 1)
      diags.report(d.size.range, diag::err_nonpositive_amount) << "the extent of '" + d.dim.name + "'" << d.size.value;
    in.dims.emplace_back(d.dim.name, d.size.value);
    names.push_back(d.dim.name);
  }
  // The compute statement as a nest over the declared dims (the first
  // statement, if several): out += lhs * rhs, each index one dim.
  in.nest.name = in.name;
  for (const auto &[name, extent] : in.dims)
    in.nest.addDim(name, extent);
  bool haveStatement = false;
  for (const ast::IntrinsicItem &item : decl.items) {
    const auto *c = std::get_if<ast::IntrinsicCompute>(&item);
    if (!c)
      continue;
    std::vector<Access> accesses;
    for (auto [a, role] :
         {std::pair{&c->out, TensorRole::Ofm}, {&c->lhs, TensorRole::Ifm}, {&c->rhs, TensorRole::Wgt}}) {
      Access access{role, a->tensor.name, {}, {}, {}};
      for (const ast::Ident &idx : a->indices) {
        int dim = in.nest.findDim(idx.name);
        if (dim < 0) {
          diags.report(idx.range, diag::err_intrinsic_index) << idx.name << in.name << joinList(names, ", ", " and ");
          continue;
        }
        access.index.push_back(AffineExpr::dim(dim));
        access.extent.push_back(in.nest.dims[static_cast<size_t>(dim)].extent);
      }
      accesses.push_back(std::move(access));
    }
    if (!haveStatement)
      in.nest.accesses = std::move(accesses);
    haveStatement = true;
  }
  return in;
}

} // namespace sema

Model analyze(const std::vector<ast::File> &files, DiagnosticsEngine &diags, const AnalyzeOptions &options) {
  Model model;
  sema::Scope networks, hardware, intrinsics;
  // Networks and hardware first: schedules refer to both, wherever declared.
  for (const ast::File &f : files)
    for (const ast::TopDecl &d : f.decls) {
      if (auto *n = std::get_if<ast::NetworkDecl>(&d); n && networks.define(n->name, "network", diags))
        model.networks.push_back(sema::analyzeNetwork(*n, diags, options.batch));
      else if (auto *h = std::get_if<ast::HardwareDecl>(&d); h && hardware.define(h->name, "hardware", diags)) {
        if (sema::isDsaHardware(*h))
          model.dsaHardware.push_back(sema::analyzeDsaHardware(*h, diags));
        else if (sema::isCmHardware(*h))
          model.cmHardware.push_back(sema::analyzeCmHardware(*h, diags));
        else
          model.hardware.push_back(sema::analyzeHardware(*h, diags));
      }
      else if (auto *i = std::get_if<ast::IntrinsicDecl>(&d); i && intrinsics.define(i->name, "intrinsic", diags))
        model.intrinsics.push_back(sema::analyzeIntrinsic(*i, diags));
    }
  sema::resolveLevelIntrinsics(model, diags);
  if (options.train)
    for (Network &n : model.networks) {
      // A joined matmul's weight gradient is split among its second operands:
      // a nest no backward layer has yet (docs/limits.md).
      bool trainable = true;
      for (const Layer &l : n.layers)
        if (l.type == LayerType::MatMul && l.operands.size() > 2) {
          diags.report(l.opRange, diag::err_joined_matmul_training) << l.name << l.operands.size() - 1;
          trainable = false;
        } else if (l.causal) {   // its backward layers would need the triangle too (docs/limits.md)
          diags.report(l.opRange, diag::err_causal_training) << l.kindName() << l.name;
          trainable = false;
        } else if (l.type == LayerType::Rope) {   // the inverse rotation has no backward layer yet (docs/limits.md)
          diags.report(l.opRange, diag::err_rope_training) << l.name;
          trainable = false;
        } else if (l.resample.bilinear) {   // its weighted taps have no backward layer yet (docs/limits.md)
          diags.report(l.opRange, diag::err_bilinear_training) << l.name;
          trainable = false;
        }
      if (trainable)
        addBackwardLayers(n);
    }
  for (const ast::File &f : files)
    for (const ast::TopDecl &d : f.decls)
      if (auto *s = std::get_if<ast::ScheduleDecl>(&d)) {
        auto dsa = std::find_if(model.dsaHardware.begin(), model.dsaHardware.end(),
                                [&](const DsaHardware &h) { return h.name == s->hardware.name; });
        if (dsa != model.dsaHardware.end())
          model.dsaSchedules.push_back(sema::analyzeDsaSchedule(
              *s, model, static_cast<int>(dsa - model.dsaHardware.begin()), diags));
        else
          model.schedules.push_back(sema::analyzeSchedule(*s, model, diags));
      }
  return model;
}

} // namespace dfl
