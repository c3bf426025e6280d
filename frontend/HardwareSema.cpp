// Hardware template analysis: properties, units, level order (docs/language.md,
// "Hardware templates").
#include "frontend/SemaContext.h"
#include "frontend/Units.h"
#include "support/Format.h"

#include <algorithm>
#include <set>

namespace dfl::sema {
namespace {

// Limits of a hardware template (docs/language.md, "Limits"): beyond them the
// analysis' products of sizes would overflow or leave the doubles' exact range.
constexpr int64_t kMaxUnits = int64_t(1) << 31;
constexpr int64_t kMaxAggregateBytes = int64_t(1) << 53;
constexpr int64_t kMaxWordBits = 512;
constexpr double kMinFrequencyHz = 1;
constexpr double kMinBandwidthBytesPerCycle = 1.0 / 4294967296.0;
constexpr size_t kMaxLevels = 64;
constexpr size_t kMaxMemoryChannels = 1024;

class HardwareAnalysis {
public:
  HardwareAnalysis(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) : decl_(decl), diags_(diags) {}

  Hardware run() {
    hw_.name = decl_.name.name;
    hw_.range = decl_.range;
    hw_.nameRange = decl_.name.range;
    PropertyTable top("hardware '" + hw_.name + "'", {"word", "frequency", "static_energy"}, diags_);
    std::map<std::string, SourceRange> blocks;
    for (const ast::HardwareItem &item : decl_.items) {
      if (auto *p = std::get_if<ast::Property>(&item)) {
        if (auto *ok = top.accept(*p))
          topProperty(*ok);
      } else {
        const auto &b = std::get<ast::HardwareBlock>(item);
        block(b, blocks);
      }
    }
    for (const char *req : {"word", "frequency"})
      if (!top.has(req))
        diags_.report(decl_.name.range, diag::err_missing_property) << "hardware '" + hw_.name + "'" << req;
    if (!blocks.count("mac"))
      diags_.report(decl_.name.range, diag::err_missing_property) << "hardware '" + hw_.name + "'" << "mac";
    checkLevels();
    checkChannels();
    checkVectors();
    // Bandwidths in B/s become B/cycle at this template's frequency.
    for (size_t i = 0; i < hw_.levels.size(); ++i) {
      Level &lv = hw_.levels[i];
      for (size_t b = 0; b < lv.buffers.size(); ++b) {
        auto &bw = lv.buffers[b].bandwidthBytesPerCycle;
        const bool perSecond = perSecond_.count({i, b}) > 0;
        if (perSecond && bw)
          *bw /= hw_.frequencyHz;
        // So small that a transfer's cycles would leave the doubles' exact
        // range (and an EDP, energy x latency, could reach infinity).
        if (bw && *bw < kMinBandwidthBytesPerCycle) {
          diags_.report(bandwidthRanges_[{i, b}], diag::err_value_range)
              << "bandwidth" << "at least 2^-32 B/cycle" + std::string(perSecond ? " at the frequency" : "")
              << formatNumber(*bw) + " B/cycle";
          bw.reset();
        }
      }
      if (lv.buffers.size() == 1 && lv.buffers.front().implicit)
        lv.bandwidthBytesPerCycle = lv.buffers.front().bandwidthBytesPerCycle;
    }
    // Each vector unit's template, once per model (docs/directives.md §7).
    for (VectorUnit &v : hw_.vectors)
      if (v.level >= 0)
        v.truncated = std::make_shared<const Hardware>(vectorTemplate(hw_, v));
    return std::move(hw_);
  }

private:
  void topProperty(const ast::Property &p) {
    if (p.key.name == "word") {
      if (auto bits = wordBits(p))
        hw_.wordBits = *bits;
    } else if (p.key.name == "frequency") {
      if (auto hz = positiveQuantity(p, QuantityKind::Frequency, diags_)) {
        if (*hz < kMinFrequencyHz)
          rangeError(p, "at least 1 Hz");
        else
          hw_.frequencyHz = *hz;
      }
    } else if (p.key.name == "static_energy") {
      if (auto e = positiveQuantity(p, QuantityKind::Energy, diags_, true))
        hw_.staticEnergyPj = *e;
    }
  }

  std::optional<int64_t> wordBits(const ast::Property &p) { return wordWidthBits(p, kMaxWordBits, diags_); }

  void block(const ast::HardwareBlock &b, std::map<std::string, SourceRange> &seenKinds) {
    static const std::vector<std::string> kinds = {"level", "mac", "activation", "noc", "pipeline", "word", "vector"};
    const std::string &kind = b.kind.name;
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      diags_.report(b.kind.range, diag::err_unknown_block) << kind << Suggestion{b.kind.range, kind, kinds};
      return;
    }
    const bool named = kind == "level" || kind == "vector";
    if (named && !b.name) {
      diags_.report(b.kind.range, diag::err_block_name) << "a " + kind + " needs a name: `" + kind + " NAME { ... }`";
      return;
    }
    // The report, its tables and plots name a level's energy beside the
    // chip's other components by name: a level named like one would be two
    // columns, bars and keys of one name.
    static const std::vector<std::string> components = {"MAC", "NoC", "bus", "static"};
    if (kind == "level" && std::find(components.begin(), components.end(), b.name->name) != components.end()) {
      diags_.report(b.name->range, diag::err_block_name)
          << "a level cannot be named '" + b.name->name +
                 "': the report names the energy of the MACs, the NoC, the array buses and the static "
                 "energy MAC, NoC, bus and static beside the levels'";
      return;
    }
    if (!named && b.name) {
      diags_.report(b.name->range, diag::err_block_name) << "a '" + kind + "' block takes no name";
      return;
    }
    if (!named) {
      if (auto [it, inserted] = seenKinds.emplace(kind, b.kind.range); !inserted) {
        diags_.report(b.kind.range, diag::err_redefinition).note(it->second, diag::note_previous_definition)
            << "block" << kind;
        return;
      }
    }
    for (const ast::BlockItem &item : b.items)
      if (auto *sb = std::get_if<ast::SubBlock>(&item); sb && kind != "level")
        diags_.report(sb->kind.range, diag::err_nested_block) << sb->kind.name << "'" + kind + "'" << "";
    for (const ast::BlockItem &item : b.items)
      if (auto *d = std::get_if<ast::Directive>(&item); d && kind != "level") {
        const char *what = d->kind == ast::Directive::Kind::Tensor   ? "tensor"
                           : d->kind == ast::Directive::Kind::Stack  ? "stack"
                           : d->kind == ast::Directive::Kind::Layout ? "layout"
                                                                     : "update";
        diags_.report(d->range, diag::err_directive_outside_level) << what << kind;
      }
    if (kind == "level")
      level(b);
    else if (kind == "vector")
      vectorBlock(b);
    else if (kind == "mac")
      simpleBlock(b, {"energy"}, {"energy"}, [&](const ast::Property &p) {
        if (auto e = positiveQuantity(p, QuantityKind::Energy, diags_, true))
          hw_.macEnergyPj = *e;
      });
    else if (kind == "activation")
      simpleBlock(b, activationNames(), {}, [&](const ast::Property &p) {
        if (auto e = positiveQuantity(p, QuantityKind::Energy, diags_, true))
          hw_.activationEnergyPj[p.key.name] = *e;
      });
    else if (kind == "noc")
      simpleBlock(b, {"hop_energy", "topology", "channels", "pool_extra_channel"}, {"hop_energy"},
                  [&](const ast::Property &p) {
        if (p.key.name == "hop_energy") {
          if (auto e = positiveQuantity(p, QuantityKind::Energy, diags_, true))
            hw_.nocHopEnergyPj = *e;
        } else if (p.key.name == "channels") {
          channels(p);
        } else if (p.key.name == "pool_extra_channel") {
          if (const ast::Value *v = single(p, diags_))
            if (auto on = boolean(*v, p.key.name, diags_))
              hw_.poolExtraChannel = *on;
        } else if (const ast::Value *v = single(p, diags_)) {
          if (v->kind != ast::Value::Kind::Word || v->text != "mesh")
            diags_.report(v->range, diag::err_value_kind) << p.key.name << "'mesh' (the only topology modelled)";
          else
            hw_.nocTopology = v->text;
        }
      });
    else if (kind == "word")
      // Tensors wider or narrower than `word` (docs/language.md "word").
      simpleBlock(b, {"wgt", "psum"}, {}, [&](const ast::Property &p) {
        if (auto bits = wordBits(p))
          (p.key.name == "wgt" ? hw_.wgtBits : hw_.psumBits) = *bits;
      });
    else if (kind == "pipeline")
      simpleBlock(b, {"temporal", "spatial"}, {}, [&](const ast::Property &p) {
        if (const ast::Value *v = single(p, diags_))
          if (auto on = boolean(*v, p.key.name, diags_))
            (p.key.name == "temporal" ? hw_.temporalPipelining : hw_.spatialPipelining) = *on;
      });
  }

  /// `vector NAME { ops = N; energy = E pJ; level = L; }` (docs/language.md
  /// "vector"); its level is resolved once every level is read (checkVectors).
  void vectorBlock(const ast::HardwareBlock &b) {
    if (!vectorNames_.define(*b.name, "vector unit", diags_))
      return;
    VectorUnit v;
    v.name = b.name->name;
    v.range = b.range;
    v.nameRange = b.name->range;
    std::string levelName;
    simpleBlock(b, {"ops", "energy", "level"}, {"ops", "energy", "level"}, [&](const ast::Property &p) {
      const ast::Value *val = single(p, diags_);
      if (!val)
        return;
      if (p.key.name == "ops") {
        if (auto n = positiveInteger(*val, p.key.name, diags_)) {
          if (*n > kMaxUnits)
            rangeError(p, "at most 2^31 operations a cycle");
          else
            v.opsPerCycle = *n;
        }
      } else if (p.key.name == "energy") {
        if (auto e = positiveQuantity(p, QuantityKind::Energy, diags_, true))
          v.energyPj = *e;
      } else if (val->kind != ast::Value::Kind::Word) {
        diags_.report(val->range, diag::err_value_kind) << p.key.name << "the name of a level";
      } else {
        levelName = val->text;
        v.levelRange = val->range;
      }
    });
    vectorLevels_.push_back(levelName);
    hw_.vectors.push_back(std::move(v));
  }

  /// A vector unit's level: declared, neither the innermost (the MACs'
  /// operands: the unit would be a PE) nor the outermost (DRAM: the unit
  /// computes on chip).
  void checkVectors() {
    for (size_t i = 0; i < hw_.vectors.size(); ++i) {
      VectorUnit &v = hw_.vectors[i];
      const std::string &name = vectorLevels_[i];
      if (name.empty() || hw_.levels.empty())
        continue;   // E0502 said it is missing
      const int l = hw_.findLevel(name);
      std::string why;
      if (l < 0) {
        std::vector<std::string> levels;
        for (const Level &lv : hw_.levels)
          levels.push_back(lv.name);
        auto closest = closestName(name, levels);
        why = "no level of hardware '" + hw_.name + "' is named so" +
              (closest ? "; did you mean '" + *closest + "'?" : " (it has " + joinList(levels, ", ", " and ") + ")");
        auto d = diags_.report(v.levelRange, diag::err_vector_level);
        d << v.name << name << why;
        if (closest)
          d.fixit(v.levelRange, *closest);
        continue;
      }
      if (l == 0)
        why = "it is the innermost level, whose units are the MAC array's PEs";
      else if (static_cast<size_t>(l) + 1 == hw_.levels.size())
        why = "it is the outermost level; the unit computes on chip, on a level inside it";
      if (!why.empty()) {
        diags_.report(v.levelRange, diag::err_vector_level).note(hw_.levels[static_cast<size_t>(l)].nameRange,
                                                                 diag::note_level_declared, name)
            << v.name << name << why;
        continue;
      }
      v.level = l;
    }
  }

  /// `channels = ROW x COL, ...`: the nodes the outermost level's channels
  /// attach to (docs/directives.md §6 "NoC"); checked against the node mesh
  /// once the levels are known (checkChannels).
  void channels(const ast::Property &p) {
    if (p.values.size() > kMaxMemoryChannels) {
      diags_.report(p.values[kMaxMemoryChannels].range, diag::err_value_range)
          << p.key.name << "at most " + std::to_string(kMaxMemoryChannels) + " nodes"
          << std::to_string(p.values.size());
      return;
    }
    for (const ast::Value &v : p.values) {
      if (v.kind != ast::Value::Kind::Array) {
        diags_.report(v.range, diag::err_value_kind) << p.key.name << "node positions 'ROW x COL' (from 0 x 0)";
        return;
      }
      channelRanges_.push_back(v.range);
      hw_.memoryChannels.emplace_back(v.rows, v.cols);
    }
  }

  /// Every channel on a node of the mesh of the level below the outermost.
  void checkChannels() {
    if (hw_.memoryChannels.empty())
      return;
    const size_t nl = hw_.levels.size();
    const Level *nodes = nl >= 2 ? &hw_.levels[nl - 2] : nullptr;
    for (size_t i = 0; i < hw_.memoryChannels.size(); ++i) {
      auto [r, c] = hw_.memoryChannels[i];
      if (nodes && r < nodes->rows && c < nodes->cols)
        continue;
      diags_.report(channelRanges_[i], diag::err_value_range)
          << "channels"
          << (nodes ? "a node of level '" + nodes->name + "' (0 x 0 to " + std::to_string(nodes->rows - 1) + " x " +
                          std::to_string(nodes->cols - 1) + ")"
                    : std::string("a node of the level below the outermost, which this template lacks"))
          << std::to_string(r) + " x " + std::to_string(c);
      hw_.memoryChannels.clear();
      return;
    }
  }

  template <class Fn>
  void simpleBlock(const ast::HardwareBlock &b, std::vector<std::string> allowed, std::vector<std::string> required,
                   Fn fn) {
    PropertyTable table("'" + b.kind.name + "'", allowed, diags_);
    for (const ast::BlockItem &item : b.items)
      if (auto *p = std::get_if<ast::Property>(&item))
        if (auto *ok = table.accept(*p))
          fn(*ok);
    for (const std::string &r : required)
      if (!table.has(r))
        diags_.report(b.kind.range, diag::err_missing_property) << "'" + b.kind.name + "'" << r;
  }

  /// The properties of storage: a `buffer` block's, or a level's own
  /// (its implicit buffer) where it has no buffer blocks.
  static bool isStorageKey(const std::string &k) {
    return k == "holds" || k == "capacity" || k == "access_energy" || k == "read_energy" || k == "write_energy" ||
           k == "fill_energy" || k == "bandwidth";
  }

  /// A buffer's energies as written: `access_energy` sets both, `read_energy`
  /// and `write_energy` refine it.
  struct Energies {
    std::optional<double> access, read, write;
  };

  /// One storage property into `buf`, buffer `bi` of level `li`.
  void storageProperty(const ast::Property &p, Buffer &buf, Energies &e, size_t li, size_t bi) {
    const std::string &k = p.key.name;
    if (k == "capacity") {
      buf.capacityRange = p.range;
      if (auto c = positiveQuantity(p, QuantityKind::Size, diags_))
        buf.capacityBytes = static_cast<int64_t>(*c);
    } else if (k == "holds") {
      holds(p, buf);
    } else if (k == "bandwidth") {
      if (const ast::Value *v = single(p, diags_))
        if (auto q = toQuantity(*v, QuantityKind::Bandwidth, k, diags_)) {
          if (q->value <= 0) {
            diags_.report(v->range, diag::err_value_range) << k << "positive" << v->number + " " + v->unit;
          } else {
            buf.bandwidthBytesPerCycle = q->value;
            bandwidthRanges_[{li, bi}] = v->range;
            if (q->perSecond)
              perSecond_.insert({li, bi});
          }
        }
    } else if (auto pj = positiveQuantity(p, QuantityKind::Energy, diags_, true)) {
      (k == "access_energy" ? e.access : k == "read_energy" ? e.read : k == "write_energy" ? e.write : buf.fillEnergyPj) = pj;
    }
  }

  /// `holds = ifm, ofm;`: the roles a buffer stores; the others bypass it.
  void holds(const ast::Property &p, Buffer &buf) {
    static const std::vector<std::string> roles = {"ifm", "wgt", "ofm"};
    buf.holdsRange = p.range;
    buf.roles = 0;
    for (const ast::Value &v : p.values) {
      auto it = v.kind == ast::Value::Kind::Word ? std::find(roles.begin(), roles.end(), v.text) : roles.end();
      if (it == roles.end()) {
        diags_.report(v.range, diag::err_parameter_value) << p.key.name << "tensor roles: ifm, wgt, ofm" << valueText(v);
        continue;
      }
      buf.roles |= 1u << (it - roles.begin());
    }
  }

  /// Reports a buffer's missing energies and sets its read and write energies.
  void settleEnergies(Buffer &buf, const Energies &e, bool accessGiven, const SourceRange &at, const std::string &what) {
    if (!e.access && !(e.read && e.write) && !accessGiven)
      diags_.report(at, diag::err_missing_property)
          << what << (e.read || e.write ? (e.read ? "write_energy" : "read_energy") : "access_energy");
    buf.readEnergyPj = e.read.value_or(e.access.value_or(0));
    buf.writeEnergyPj = e.write.value_or(e.access.value_or(0));
  }

  /// `buffer NAME { holds = ...; capacity = ...; ... }` in level `li`.
  void buffer(const ast::SubBlock &sb, Level &lv, size_t li, Scope &names) {
    if (sb.kind.name != "buffer") {
      diags_.report(sb.kind.range, diag::err_nested_block)
          << sb.kind.name << "level '" + lv.name + "'" << Suggestion{sb.kind.range, sb.kind.name, {"buffer"}};
      return;
    }
    if (!sb.name) {
      diags_.report(sb.kind.range, diag::err_block_name) << "a buffer needs a name: `buffer NAME { ... }`";
      return;
    }
    if (!names.define(*sb.name, "buffer", diags_))
      return;
    Buffer buf;
    buf.name = sb.name->name;
    buf.implicit = false;
    buf.range = sb.range;
    buf.nameRange = sb.name->range;
    const std::string what = "buffer '" + buf.name + "' of level '" + lv.name + "'";
    PropertyTable table(what, {"holds", "capacity", "access_energy", "read_energy", "write_energy", "fill_energy",
                               "bandwidth"},
                        diags_);
    Energies e;
    const size_t bi = explicitBuffers_.size();
    for (const ast::Property &p : sb.items)
      if (const ast::Property *ok = table.accept(p))
        storageProperty(*ok, buf, e, li, bi);
    settleEnergies(buf, e, table.has("access_energy"), buf.nameRange, what);
    if (!table.has("capacity"))
      diags_.report(buf.nameRange, diag::err_missing_property) << what << "capacity";
    explicitBuffers_.push_back(std::move(buf));
  }

  /// A role is held by at most one buffer of a level (E0516).
  void checkHolders(Level &lv) {
    for (size_t r = 0; r < kNumRoles; ++r) {
      const auto role = static_cast<TensorRole>(r);
      const Buffer *first = nullptr;
      for (Buffer &buf : lv.buffers) {
        if (!buf.holds(role))
          continue;
        if (!first) {
          first = &buf;
          continue;
        }
        diags_.report(buf.holdsRange.valid() ? buf.holdsRange : buf.nameRange, diag::err_role_held_twice)
                .note(first->holdsRange.valid() ? first->holdsRange : first->nameRange, diag::note_role_held,
                      roleName(role))
            << roleName(role) << first->name << buf.name << lv.name;
        buf.roles &= ~roleBit(role);
      }
    }
  }

  void level(const ast::HardwareBlock &b) {
    if (!levelNames_.define(*b.name, "level", diags_))
      return;
    Level lv;
    lv.name = b.name->name;
    lv.range = b.range;
    lv.nameRange = b.name->range;
    size_t index = hw_.levels.size();
    PropertyTable table("level '" + lv.name + "'",
                        {"holds", "capacity", "array", "access_energy", "read_energy", "write_energy", "fill_energy",
                         "bus_energy", "neighbor_energy", "static_energy", "remote_energy", "bandwidth", "transfer",
                         "psum_multicast", "fetch_padding", "pad_partial", "window_span", "intrinsic"},
                        diags_);
    // With buffer blocks, the storage properties are theirs.
    const bool hasBuffers = std::any_of(b.items.begin(), b.items.end(),
                                        [](const ast::BlockItem &i) { return std::holds_alternative<ast::SubBlock>(i); });
    explicitBuffers_.clear();
    Scope bufferNames;
    Buffer own;
    own.name = lv.name;
    Energies energies;
    std::vector<ast::Directive> fixed;
    for (const ast::BlockItem &item : b.items) {
      if (auto *d = std::get_if<ast::Directive>(&item)) {
        fixed.push_back(*d);
        continue;
      }
      if (auto *sb = std::get_if<ast::SubBlock>(&item)) {
        buffer(*sb, lv, index, bufferNames);
        continue;
      }
      const ast::Property *p = table.accept(std::get<ast::Property>(item));
      if (!p)
        continue;
      const std::string &k = p->key.name;
      if (isStorageKey(k)) {
        if (hasBuffers)
          diags_.report(p->key.range, diag::err_storage_per_buffer) << k << lv.name;
        else
          storageProperty(*p, own, energies, index, 0);
      } else {
        levelProperty(*p, lv, index);
      }
    }
    if (hasBuffers) {
      lv.buffers = std::move(explicitBuffers_);
      // The level's capacity is its buffers' together (totals, E0504, E0511).
      int64_t total = 0;
      bool bounded = !lv.buffers.empty();
      for (const Buffer &buf : lv.buffers)
        bounded = bounded && buf.capacityBytes, total += buf.capacityBytes.value_or(0);
      if (bounded)
        lv.capacityBytes = total;
      lv.capacityRange = lv.buffers.empty() ? SourceRange{} : lv.buffers.front().capacityRange;
      if (lv.buffers.empty()) {   // every block was refused: the level stores nothing
        lv.buffers.emplace_back().name = lv.name;
        lv.buffers.back().roles = 0;
      }
    } else {
      settleEnergies(own, energies, table.has("access_energy"), b.name->range, "level '" + lv.name + "'");
      lv.capacityBytes = own.capacityBytes;
      lv.capacityRange = own.capacityRange;
      lv.readEnergyPj = own.readEnergyPj;
      lv.writeEnergyPj = own.writeEnergyPj;
      lv.fillEnergyPj = own.fillEnergyPj;
      lv.buffers = {std::move(own)};
    }
    checkHolders(lv);
    lv.fixed = analyzeDirectives(fixed, nullptr, diags_);
    checkLayouts(lv.fixed.layouts, hw_, -1, diags_);
    lv.fixed.level = static_cast<int>(index);
    hw_.levels.push_back(std::move(lv));
  }

  /// A level's property that is not storage: its array, transfers, bus and
  /// other energies, switches, intrinsic.
  void levelProperty(const ast::Property &pr, Level &lv, size_t index) {
    const ast::Property *p = &pr;
    const std::string &k = p->key.name;
    if (k == "bus_energy" || k == "neighbor_energy" || k == "static_energy" || k == "remote_energy") {
      auto e = positiveQuantity(*p, QuantityKind::Energy, diags_, true);
      if (!e)
        return;
      if (k == "neighbor_energy")
        lv.neighborEnergyPj = e;
      else if (k == "remote_energy")
        lv.remoteEnergyPj = *e;
      else if (k == "bus_energy") {
        lv.busEnergyPj = *e;
        if (index == 0)   // the innermost level's units hold the MACs' operands: no bus inside
          diags_.report(p->range, diag::err_transfer_level)
              << "bus" << lv.name << "it is the innermost level, so no units sit inside it";
      } else
        lv.staticEnergyPj = *e;
    } else if (k == "psum_multicast" || k == "fetch_padding" || k == "pad_partial" || k == "window_span") {
      if (const ast::Value *v = single(*p, diags_))
        if (auto on = boolean(*v, k, diags_))
          (k == "psum_multicast"  ? lv.psumMulticast
           : k == "fetch_padding" ? lv.fetchPadding
           : k == "pad_partial"   ? lv.padPartial
                                  : lv.windowSpan) = *on;
    } else if (k == "intrinsic") {
      // Resolved against the intrinsics once every file is read (resolveLevelIntrinsics).
      if (const ast::Value *v = single(*p, diags_)) {
        if (v->kind != ast::Value::Kind::Word)
          diags_.report(v->range, diag::err_value_kind) << k << "the name of an intrinsic";
        else
          lv.intrinsic = v->text, lv.intrinsicRange = v->range;
      }
    } else if (k == "array") {
      array(*p, lv);
    } else if (k == "transfer") {
      transfers(*p, lv, index);
    }
  }

  void array(const ast::Property &p, Level &lv) {
    const std::string &k = p.key.name;
    lv.arrayRange = p.range;
    const ast::Value *v = single(p, diags_);
    if (!v)
      return;
    if (v->kind == ast::Value::Kind::Array) {
      if (v->rows < 1 || v->cols < 1)
        diags_.report(v->range, diag::err_value_range) << k << "at least 1 x 1"
                                                       << std::to_string(v->rows) + " x " + std::to_string(v->cols);
      else if (int64_t units; __builtin_mul_overflow(v->rows, v->cols, &units) || units > kMaxUnits)
        diags_.report(v->range, diag::err_hardware_too_large)
            << hw_.name << "the units of level '" + lv.name + "'" << formatProduct({v->rows, v->cols}) << "2^31";
      else
        lv.rows = v->rows, lv.cols = v->cols;
    } else if (auto n = positiveInteger(*v, k, diags_)) {
      if (*n > kMaxUnits)
        diags_.report(v->range, diag::err_hardware_too_large)
            << hw_.name << "the units of level '" + lv.name + "'" << std::to_string(*n) << "2^31";
      else
        lv.rows = *n;
    }
  }

  void transfers(const ast::Property &p, Level &lv, size_t index) {
    const std::string &k = p.key.name;
    lv.transfers = 0;
    for (const ast::Value &v : p.values) {
      static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (Transfer t : kTransfers)
          n.push_back(transferName(t));
        return n;
      }();
      auto it = v.kind == ast::Value::Kind::Word ? std::find(names.begin(), names.end(), v.text) : names.end();
      if (it == names.end()) {
        std::string got = v.kind == ast::Value::Kind::Word ? v.text : v.number;
        auto closest = closestName(got, names);
        auto d = diags_.report(v.range, diag::err_parameter_value);
        d << k << "one of " + joinList(names, ", ")
          << "'" + got + "'" + (closest ? "; did you mean '" + *closest + "'?" : "");
        if (closest)
          d.fixit(v.range, *closest);
        continue;
      }
      lv.transfers |= 1u << (it - names.begin());
      transferRanges_[index].emplace_back(*it, v.range);
    }
    if (lv.transfers == 0)
      lv.transfers = static_cast<unsigned>(Transfer::Unicast);
  }

  void checkLevels() {
    if (hw_.levels.empty()) {
      diags_.report(decl_.name.range, diag::err_no_levels) << hw_.name;
      return;
    }
    // The solver's space and the analysis' work grow with the levels (each
    // level's tiles are chosen on those of the levels around it): real
    // memory hierarchies have a handful.
    if (hw_.levels.size() > kMaxLevels)
      diags_.report(hw_.levels[kMaxLevels].nameRange, diag::err_too_many_levels)
          << hw_.name << std::to_string(hw_.levels.size()) << std::to_string(kMaxLevels);
    const Level &outer = hw_.levels.back();
    for (size_t i = 0; i + 1 < hw_.levels.size(); ++i) {
      const Level &lv = hw_.levels[i];
      if (!lv.capacityBytes && !lv.capacityRange.valid() && lv.buffers.front().implicit)
        diags_.report(lv.nameRange, diag::err_capacity_required) << lv.name << outer.name;
    }
    // The outermost level holds whole tensors, every role, in one memory.
    if (!outer.buffers.front().implicit)
      diags_.report(outer.buffers.front().nameRange, diag::err_outermost_bypass)
          << outer.name << "takes no buffer blocks";
    else if (outer.buffers.front().roles != kAllRoles)
      diags_.report(outer.buffers.front().holdsRange, diag::err_outermost_bypass)
          << outer.name << "must hold every role (ifm, wgt and ofm)";
    // Same-level transfers need a neighbour; multicast needs a level outside to send from.
    for (const auto &[i, transfers] : transferRanges_) {
      const Level &lv = hw_.levels[i];
      for (const auto &[name, range] : transfers) {
        if ((name == "systolic" || name == "sharing" || name == "reduction") && lv.units() == 1)
          diags_.report(range, diag::err_transfer_level)
              << name << lv.name << "it has a single unit (array = 1), so there is no neighbour to pass data to";
        else if (name == "multicast" && i + 1 == hw_.levels.size())
          diags_.report(range, diag::err_transfer_level)
              << name << lv.name << "it is the outermost level, so no level outside it sends data";
      }
    }
    checkProducts();
    for (size_t i = 0; i + 1 < hw_.levels.size(); ++i) {
      const Level &in = hw_.levels[i], &out = hw_.levels[i + 1];
      if (in.capacityBytes && out.capacityBytes && *out.capacityBytes < *in.capacityBytes)
        diags_.report(out.capacityRange, diag::err_level_order)
                .note(in.nameRange, diag::note_level_declared, in.name)
            << out.name << formatBytes(static_cast<double>(*out.capacityBytes)) << in.name
            << formatBytes(static_cast<double>(*in.capacityBytes));
    }
  }

  /// The products the analysis forms of the levels' sizes stay exact
  /// (docs/language.md, "Limits"): the units of a level and all levels outside
  /// it (how many of its buffers the chip has) at most 2^31, and those buffers'
  /// capacity together at most 2^53 bytes. Each is reported at the level where
  /// the product first exceeds its limit, from the outermost inwards, and the
  /// level is made a single unit so that later products stay small.
  void checkProducts() {
    int64_t units = 1;
    for (size_t i = hw_.levels.size(); i-- > 0;) {
      Level &lv = hw_.levels[i];
      std::vector<int64_t> factors;
      for (size_t k = i; k < hw_.levels.size(); ++k)
        factors.push_back(hw_.levels[k].units());
      if (int64_t u; __builtin_mul_overflow(units, lv.units(), &u) || u > kMaxUnits) {
        diags_.report(lv.arrayRange.valid() ? lv.arrayRange : lv.nameRange, diag::err_hardware_too_large)
            << hw_.name << "the units of level '" + lv.name + "' and the levels outside it"
            << formatProduct(factors) << "2^31";
        lv.rows = lv.cols = 1;
        continue;
      } else {
        units = u;
      }
      if (!lv.capacityBytes)
        continue;
      factors.insert(factors.begin(), *lv.capacityBytes);
      if (int64_t bytes; __builtin_mul_overflow(*lv.capacityBytes, units, &bytes) || bytes > kMaxAggregateBytes) {
        diags_.report(lv.capacityRange.valid() ? lv.capacityRange : lv.nameRange, diag::err_hardware_too_large)
            << hw_.name << "the capacity of all level '" + lv.name + "' buffers in bytes" << formatProduct(factors)
            << "2^53";
        lv.capacityBytes.reset();
      }
    }
  }

  void rangeError(const ast::Property &p, const std::string &expected) {
    const ast::Value &v = p.values.front();
    diags_.report(v.range, diag::err_value_range) << p.key.name << expected << v.number + (v.unit.empty() ? "" : " " + v.unit);
  }

  static std::string formatProduct(const std::vector<int64_t> &factors) {
    std::string text;
    for (int64_t f : factors)
      text += (text.empty() ? "" : " x ") + std::to_string(f);
    return text;
  }

  const ast::HardwareDecl &decl_;
  DiagnosticsEngine &diags_;
  Hardware hw_;
  Scope levelNames_, vectorNames_;
  std::vector<std::string> vectorLevels_;            // per vector unit, its level as written
  std::set<std::pair<size_t, size_t>> perSecond_;                 // (level, buffer)
  std::map<std::pair<size_t, size_t>, SourceRange> bandwidthRanges_;   // per (level, buffer)
  std::vector<Buffer> explicitBuffers_;                            // the level's being read
  std::vector<SourceRange> channelRanges_;           // per memory channel
  std::map<size_t, std::vector<std::pair<std::string, SourceRange>>> transferRanges_;   // per level index
};

} // namespace

Hardware analyzeHardware(const ast::HardwareDecl &decl, DiagnosticsEngine &diags) {
  return HardwareAnalysis(decl, diags).run();
}

void resolveLevelIntrinsics(Model &model, DiagnosticsEngine &diags) {
  std::vector<std::string> names;
  for (const Intrinsic &in : model.intrinsics)
    names.push_back(in.name);
  for (Hardware &hw : model.hardware)
    for (size_t l = 0; l < hw.levels.size(); ++l) {
      Level &lv = hw.levels[l];
      if (lv.intrinsic.empty())
        continue;
      auto it = std::find_if(model.intrinsics.begin(), model.intrinsics.end(),
                             [&](const Intrinsic &in) { return in.name == lv.intrinsic; });
      if (it == model.intrinsics.end()) {
        auto closest = closestName(lv.intrinsic, names);
        auto d = diags.report(lv.intrinsicRange, diag::err_unknown_intrinsic);
        d << lv.name << lv.intrinsic
          << (closest ? "; did you mean '" + *closest + "'?"
                      : names.empty() ? "; no intrinsic is declared" : "; declared: " + joinList(names, ", ", " and "));
        if (closest)
          d.fixit(lv.intrinsicRange, *closest);
        continue;
      }
      // The innermost level's units are the MACs' (docs/embedding.md,
      // "Intrinsic-aware scheduling"): they compute one call together, one
      // operation each.
      std::vector<std::string> extents;
      for (const auto &[dim, extent] : it->dims)
        extents.push_back(dim + "=" + std::to_string(extent));
      const int64_t ops = it->nest.points();
      std::string why;
      if (l != 0)
        why = "only the innermost level's units compute, and that is '" + hw.levels[0].name + "'";
      else if (ops != lv.units())
        why = "its " + std::to_string(ops) + " operations (" + joinList(extents, " x ", " x ") +
              ") take one unit each, but the level has " + std::to_string(lv.rows) + " x " + std::to_string(lv.cols) +
              " = " + std::to_string(lv.units()) + " units";
      if (!why.empty()) {
        diags.report(lv.intrinsicRange, diag::err_intrinsic_level).note(it->range, diag::note_intrinsic_declared, it->name)
            << it->name << lv.name << why;
        continue;
      }
      lv.intrinsicNest = it->nest;
    }
}

} // namespace dfl::sema
