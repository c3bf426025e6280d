#include "model/ModelSummary.h"

#include "model/HardwareAdvice.h"
#include "model/ScheduleWriter.h"
#include "support/FiniteJson.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

namespace dfl {
namespace {

using json = nlohmann::ordered_json;

std::string shapeText(const TensorShape &s) {
  return "[" + std::to_string(s.C) + "," + std::to_string(s.X) + "," + std::to_string(s.Y) + "]";
}

std::string boundsText(const DimVector &b) {
  std::string s;
  for (size_t i = 0; i < kNumDims; ++i)
    s += (i ? " " : "") + std::to_string(b[i]);
  return s;
}

/// A buffer's energies per word and its port.
std::string storageText(const Buffer &buf) {
  std::ostringstream os;
  os << buf.readEnergyPj << " pJ/word";
  if (buf.writeEnergyPj != buf.readEnergyPj)
    os << " read, " << buf.writeEnergyPj << " written";
  if (buf.bandwidthBytesPerCycle)
    os << "  " << *buf.bandwidthBytesPerCycle << " B/cycle";
  return os.str();
}

std::string transfersText(const Level &lv) {
  std::string s;
  for (Transfer t : kTransfers)
    if (lv.can(t))
      s += (s.empty() ? "" : ", ") + std::string(transferName(t));
  return s;
}

} // namespace

std::string networkSummaryText(const Network &net) {
  std::ostringstream os;
  os << "network " << net.name << " (batch N=" << net.batch << ")\n";
  for (const Input &in : net.inputs)
    os << "  input " << in.name << " " << shapeText(in.shape) << "\n";
  size_t nameW = 5, typeW = 7;
  for (const Layer &l : net.layers) {
    nameW = std::max(nameW, l.name.size());
    typeW = std::max(typeW, std::string(l.kindName()).size());
  }
  std::vector<std::string> ifm, ofm;
  size_t ifmW = 3, ofmW = 3;
  for (const Layer &l : net.layers) {
    ifm.push_back(shapeText(l.ifmShape));
    ofm.push_back(shapeText(l.ofmShape));
    ifmW = std::max(ifmW, ifm.back().size());
    ofmW = std::max(ofmW, ofm.back().size());
  }
  os << "  " << padRight("layer", nameW) << "  " << padRight("type", typeW) << "  " << padRight("ifm", ifmW) << "  "
     << padRight("ofm", ofmW) << "  " << padLeft("wgt", 10) << "  " << padRight("loops N C K Xi Yi Xo Yo R S", 36) << "  "
     << padLeft("MACs", 14) << "\n";
  for (size_t i = 0; i < net.layers.size(); ++i) {
    const Layer &l = net.layers[i];
    std::string type = l.kindName();
    os << "  " << padRight(l.name, nameW) << "  " << padRight(type, typeW) << "  " << padRight(ifm[i], ifmW) << "  "
       << padRight(ofm[i], ofmW) << "  " << padLeft(l.hasWeights() ? std::to_string(l.wgtSize) : "-", 10) << "  "
       << padRight(boundsText(l.bounds), 36) << "  " << padLeft(std::to_string(l.macs * net.batch), 14);
    if (!l.activations.empty()) {
      os << "  +";
      for (size_t a = 0; a < l.activations.size(); ++a)
        os << (a ? "," : "") << l.activations[a];
    }
    os << "\n";
  }
  int64_t total = net.totalMacs();
  os << "  total: " << net.layers.size() << " layers, " << total << " MACs";
  if (total > 0)   // no "(0MACs)" for a network of pooling and element-wise layers
    os << " (" << formatScaled(static_cast<double>(total)) << "MACs)";
  os << " for batch " << net.batch;
  if (net.batch > 1 && total > 0)
    os << ", " << total / net.batch << " per sample";
  os << "\n";
  return os.str();
}

std::string dsaHardwareSummaryText(const DsaHardware &hw) {
  std::ostringstream os;
  os << "hardware " << hw.name << " (cluster/core DSA, word " << hw.wordBits << " bit, " << formatScaled(hw.frequencyHz)
     << "Hz)\n";
  os << "  " << hw.clusters << " clusters x " << hw.coresPerCluster << " cores; GB "
     << formatBytes(static_cast<double>(hw.gbBytes)) << " per cluster, " << hw.gbBytesPerCycle << " B/cycle to LB; LB "
     << formatBytes(static_cast<double>(hw.lbBytes)) << " per core";
  if (hw.weightBufferBytes)
    os << " (" << formatBytes(static_cast<double>(hw.weightBufferBytes)) << " for weights)";
  os << "\n";
  for (const DsaUnit &u : hw.units)
    os << "  unit " << u.name << ": " << dsaUnitKindName(u.kind) << ", " << u.opsPerCycle << " per cycle per core\n";
  os << "  ddr " << formatScaled(hw.ddrBytesPerSecond) << "B/s\n";
  return os.str();
}

std::string hardwareSummaryText(const Hardware &hw) {
  std::ostringstream os;
  os << "hardware " << hw.name << " (word " << hw.wordBits << " bit";
  if (hw.wgtBits)
    os << ", wgt " << *hw.wgtBits << " bit";
  if (hw.psumBits)
    os << ", psum " << *hw.psumBits << " bit";
  os << ", " << formatScaled(hw.frequencyHz) << "Hz, MAC "
     << hw.macEnergyPj << " pJ)\n";
  const HardwareTotals totals = hardwareTotals(hw);
  os << "  peak " << totals.pes << " MACs/cycle (" << formatScaled(static_cast<double>(totals.pes) * hw.frequencyHz)
     << "MAC/s), " << totals.nodes << (totals.nodes == 1 ? " node" : " nodes") << ", on-chip "
     << formatBytes(totals.onChipBytes) << "\n";
  for (size_t i = 0; i < hw.levels.size(); ++i) {
    const Level &lv = hw.levels[i];
    const int64_t units = hw.chipUnits(i);
    const bool implicit = lv.buffers.front().implicit;
    os << "  level " << padRight(lv.name, 6) << " capacity "
       << padRight(lv.capacityBytes ? formatBytes(static_cast<double>(*lv.capacityBytes)) : "unbounded", 10) << " array "
       << padRight(std::to_string(lv.rows) + "x" + std::to_string(lv.cols), 6) << " (" << units << " in all)  ";
    if (implicit)
      os << storageText(lv.buffers.front()) << "  ";
    os << transfersText(lv);
    if (!lv.intrinsic.empty())
      os << "  intrinsic " << lv.intrinsic;
    if (implicit && lv.bypasses())
      os << "  holds " << rolesText(lv.buffers.front().roles) << ";";
    if (lv.bypasses())
      os << "  " << bypassText(lv);
    os << "\n";
    // Buffers side by side: each with what it holds, its own energies and port.
    for (size_t b = 0; b < lv.buffers.size() && !implicit; ++b) {
      const Buffer &buf = lv.buffers[b];
      os << "         buffer " << padRight(buf.name, 6) << " holds " << padRight(rolesText(buf.roles), 13) << " capacity "
         << padRight(buf.capacityBytes ? formatBytes(static_cast<double>(*buf.capacityBytes)) : "unbounded", 10) << " "
         << storageText(buf);
      if (buf.fillEnergyPj)
        os << ", fill " << formatTrimmed(*buf.fillEnergyPj, 6) << " pJ/word";
      os << "\n";
    }
    // Every energy term beside the access energy, and the dataflow it fixes.
    std::vector<std::string> terms;
    auto pj = [](double v) { return formatTrimmed(v, 6) + " pJ"; };
    if (implicit && lv.fillEnergyPj)
      terms.push_back("fill " + pj(*lv.fillEnergyPj) + "/word");
    if (lv.busEnergyPj)
      terms.push_back("bus " + pj(lv.busEnergyPj) + "/word");
    if (lv.neighborEnergyPj)
      terms.push_back("neighbour " + pj(*lv.neighborEnergyPj) + "/word");
    if (lv.remoteEnergyPj)
      terms.push_back("remote " + pj(lv.remoteEnergyPj) + "/word");
    if (lv.staticEnergyPj)
      terms.push_back("static " + pj(lv.staticEnergyPj) + "/cycle per unit");
    if (!terms.empty())
      os << "         " << joinList(terms, ", ", ", ") << "\n";
    if (std::vector<std::string> fixed = printDirectives(lv.fixed); !fixed.empty())
      os << "         fixed: " << joinList(fixed, " ", " ") << "\n";
  }
  // The vector units: one per unit of their level, each `ops` a cycle.
  for (const VectorUnit &v : hw.vectors) {
    if (v.level < 0)
      continue;
    const int64_t units = hw.chipUnits(static_cast<size_t>(v.level));
    const double peak = static_cast<double>(units * v.opsPerCycle);
    os << "  vector " << padRight(v.name, 6) << " at level " << hw.levels[static_cast<size_t>(v.level)].name << ", "
       << v.opsPerCycle << " ops/cycle per unit (" << units << " in all), " << formatTrimmed(v.energyPj, 6)
       << " pJ/op; peak " << formatTrimmed(peak, 6) << " ops/cycle (" << formatScaled(peak * hw.frequencyHz)
       << "op/s)\n";
  }
  os << "  noc " << hw.nocTopology << " " << hw.nocHopEnergyPj << " pJ/hop";
  if (!hw.memoryChannels.empty()) {
    os << ", channels at";
    for (const auto &[r, c] : hw.memoryChannels)
      os << " " << r << "x" << c;
  }
  os << "; pipelining temporal="
     << (hw.temporalPipelining ? "true" : "false") << " spatial=" << (hw.spatialPipelining ? "true" : "false")
     << "\n";
  os << "  static " << formatTrimmed(hw.chipStaticEnergyPj(), 6) << " pJ/cycle for the chip";
  for (const auto &[op, e] : hw.activationEnergyPj)
    os << "; " << op << " " << formatTrimmed(e, 6) << " pJ/output";
  os << "\n";
  return os.str();
}

std::string modelSummaryJson(const Model &model, const SourceManager *sm) {
  json nets = json::array();
  for (const Network &net : model.networks) {
    json layers = json::array();
    for (const Layer &l : net.layers) {
      json bounds;
      for (size_t i = 0; i < kNumDims; ++i)
        bounds[dimName(static_cast<Dim>(i))] = l.bounds[i];
      json shape = [](const TensorShape &s) { return json{{"C", s.C}, {"X", s.X}, {"Y", s.Y}}; }(l.ifmShape);
      json layer = {{"name", l.name},
                    {"type", l.kindName()},
                    {"operands", l.operandNames},
                    {"ifm", shape},
                    {"ofm", {{"C", l.ofmShape.C}, {"X", l.ofmShape.X}, {"Y", l.ofmShape.Y}}},
                    {"wgt_words", l.wgtSize},
                    {"stride", {l.window.x.stride, l.window.y.stride}},
                    {"dilation", {l.window.x.dilation, l.window.y.dilation}},
                    {"pad", {l.window.x.padBegin, l.window.y.padBegin, l.window.x.padEnd, l.window.y.padEnd}},
                    {"groups", l.groups},
                    {"bounds", bounds},
                    {"macs", l.macs * net.batch},
                    {"ops", l.ops * net.batch}};
      json dims = json::array();   // the loop nest (docs/language.md, "Loop nests"): dims, then the statement
      for (const IterDim &d : l.nest.dims)
        dims.push_back({{"name", d.name}, {"extent", d.extent}});
      layer["loop_nest"] = {{"dims", dims}, {"statement", l.nest.text()}};
      if (!l.activations.empty())
        layer["activations"] = l.activations;
      if (l.type == LayerType::MatMul && l.kvHeads < l.groups)   // grouped-query attention
        layer["kv_heads"] = l.kvHeads;
      if (l.normalizes())   // the rows a softmax or layernorm normalizes (docs/language.md)
        layer["rows"] = {{"axis", l.normPlane ? "CXY" : l.normAxis == Dim::C ? "C" : l.normAxis == Dim::Xo ? "X" : "Y"},
                         {"groups", l.normGroups},
                         {"length", l.rowLength()}};
      if (!l.forwardOf.empty()) {
        layer["output"] = roleName(l.output);
        layer["forward_of"] = l.forwardOf;
      }
      layers.push_back(layer);
    }
    json inputs = json::array();
    for (const Input &in : net.inputs)
      inputs.push_back({{"name", in.name}, {"C", in.shape.C}, {"X", in.shape.X}, {"Y", in.shape.Y}});
    nets.push_back({{"name", net.name},
                    {"batch", net.batch},
                    {"total_macs", net.totalMacs()},
                    {"inputs", inputs},
                    {"layers", layers}});
  }
  json hws = json::array();
  for (const Hardware &hw : model.hardware) {
    json levels = json::array();
    for (size_t l = 0; l < hw.levels.size(); ++l) {
      const Level &lv = hw.levels[l];
      json j = {{"name", lv.name},
                {"capacity_bytes", lv.capacityBytes ? json(*lv.capacityBytes) : json(nullptr)},
                {"array", {lv.rows, lv.cols}},
                {"read_energy_pj", lv.readEnergyPj},
                {"write_energy_pj", lv.writeEnergyPj},
                {"fill_energy_pj", lv.fillEnergyPj ? json(*lv.fillEnergyPj) : json(nullptr)},
                {"bus_energy_pj", lv.busEnergyPj},
                {"neighbor_energy_pj", lv.neighborEnergyPj ? json(*lv.neighborEnergyPj) : json(nullptr)},
                {"remote_energy_pj", lv.remoteEnergyPj},
                {"static_energy_pj", lv.staticEnergyPj},
                {"bandwidth_bytes_per_cycle",
                 lv.bandwidthBytesPerCycle ? json(*lv.bandwidthBytesPerCycle) : json(nullptr)},
                {"transfers", transfersText(lv)},
                {"units", hw.chipUnits(l)},
                {"fixed", printDirectives(lv.fixed)}};
      if (!lv.intrinsic.empty())
        j["intrinsic"] = lv.intrinsic;
      json buffers = json::array();
      for (const Buffer &buf : lv.buffers)
        buffers.push_back({{"name", buf.name},
                           {"holds", roleNames(buf.roles)},
                           {"capacity_bytes", buf.capacityBytes ? json(*buf.capacityBytes) : json(nullptr)},
                           {"read_energy_pj", buf.readEnergyPj},
                           {"write_energy_pj", buf.writeEnergyPj},
                           {"fill_energy_pj", buf.fillEnergyPj ? json(*buf.fillEnergyPj) : json(nullptr)},
                           {"bandwidth_bytes_per_cycle",
                            buf.bandwidthBytesPerCycle ? json(*buf.bandwidthBytesPerCycle) : json(nullptr)}});
      j["buffers"] = buffers;
      levels.push_back(j);
    }
    const HardwareTotals totals = hardwareTotals(hw);
    json h = {{"name", hw.name},
              {"word_bits", hw.wordBits},
              {"wgt_bits", hw.dataBits(TensorRole::Wgt)},
              {"psum_bits", hw.partialBits()},
              {"frequency_hz", hw.frequencyHz},
              {"peak_macs_per_cycle", totals.pes},
              {"peak_macs_per_second", static_cast<double>(totals.pes) * hw.frequencyHz},
              {"nodes", totals.nodes},
              {"on_chip_bytes", totals.onChipBytes},
              {"mac_energy_pj", hw.macEnergyPj},
              {"static_energy_pj", hw.staticEnergyPj},
              {"chip_static_energy_pj", hw.chipStaticEnergyPj()},
              {"activation_energy_pj", hw.activationEnergyPj},
              {"levels", levels},
              {"noc", {{"topology", hw.nocTopology}, {"hop_energy_pj", hw.nocHopEnergyPj}, {"channels", hw.memoryChannels}}},
              {"pipeline", {{"temporal", hw.temporalPipelining}, {"spatial", hw.spatialPipelining}}}};
    if (!hw.vectors.empty()) {
      json vectors = json::array();
      for (const VectorUnit &v : hw.vectors) {
        if (v.level < 0)
          continue;
        const int64_t units = hw.chipUnits(static_cast<size_t>(v.level));
        vectors.push_back({{"name", v.name},
                           {"level", hw.levels[static_cast<size_t>(v.level)].name},
                           {"ops_per_cycle", v.opsPerCycle},
                           {"units", units},
                           {"energy_pj", v.energyPj},
                           {"peak_ops_per_second", static_cast<double>(units * v.opsPerCycle) * hw.frequencyHz}});
      }
      h["vectors"] = vectors;
    }
    if (sm) {   // the advice `show` prints, by the same rules (model/HardwareAdvice.h)
      DiagnosticsEngine advice(*sm);
      adviseOnHardware(hw, advice);
      json warnings = json::array();
      for (const Diagnostic &d : advice.diagnostics()) {
        LineCol lc = d.range.valid() ? sm->lineCol(d.range.begin) : LineCol{};
        warnings.push_back({{"code", d.code},
                            {"message", d.message},
                            {"file", d.range.valid() ? sm->path(d.range.begin.file) : ""},
                            {"line", lc.line},
                            {"column", lc.column}});
      }
      h["warnings"] = warnings;
    }
    hws.push_back(h);
  }
  return dumpReport(json{{"networks", nets}, {"hardware", hws}});
}

} // namespace dfl
