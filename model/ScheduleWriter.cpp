#include "model/ScheduleWriter.h"

#include "model/DflSyntax.h"
#include "support/Check.h"

#include <sstream>

namespace dfl {
namespace {

syntax::DimValues named(const std::vector<std::pair<Dim, int64_t>> &steps) {
  syntax::DimValues out;
  for (const auto &[dim, value] : steps)
    out.emplace_back(dimName(dim), value);
  return out;
}

} // namespace

std::string printDirective(const TensorDirective &t) {
  syntax::DimValues dims;
  for (Dim dim : roleDims(t.role))
    if (at(t.sizes, dim))
      dims.emplace_back(dimName(dim), at(t.sizes, dim));
  return syntax::tensorDirective(roleName(t.role), dims, t.shr > 1 ? std::optional<int64_t>(t.shr) : std::nullopt);
}

std::string printDirective(const StackDirective &s) {
  bool repl = s.repl > 1 || s.shifts.empty();
  return syntax::stackDirective(named(s.shifts), repl ? std::optional<int64_t>(s.repl) : std::nullopt);
}

std::string printDirective(const UpdateDirective &u) { return syntax::updateDirective(named(u.steps)); }

std::string printDirective(const LayoutDirective &l) {
  return syntax::layoutDirective(roleName(l.role), named(l.parts));
}

std::string printSegment(const Network &net, const Segment &segment) {
  std::vector<std::string> layers;
  for (int l : segment.layers) {
    DFLC_CHECK(l >= 0 && static_cast<size_t>(l) < net.layers.size())
        << "segment layer " << l << " of " << net.name << "'s " << net.layers.size();
    layers.push_back(net.layers[static_cast<size_t>(l)].name);
  }
  return syntax::segmentLine(layers, segment.pipelined, dimName(segment.splitDim), segment.instances);
}

std::vector<std::string> printDirectives(const LevelDirectives &level) {
  std::vector<std::string> out;
  for (const TensorDirective &t : level.tensors)
    out.push_back(printDirective(t));
  for (const StackDirective &s : level.stacks)
    out.push_back(printDirective(s));
  for (const UpdateDirective &u : level.updates)
    out.push_back(printDirective(u));
  for (const LayoutDirective &l : level.layouts)
    out.push_back(printDirective(l));
  return out;
}

std::string printLevelBlock(const Hardware &hw, const LevelDirectives &level, int depth) {
  std::string body;
  for (const std::string &d : printDirectives(level))
    body += syntax::line(depth + 1, d);
  DFLC_CHECK(level.level >= 0 && static_cast<size_t>(level.level) < hw.levels.size())
      << "directives of level " << level.level << " of " << hw.name << "'s " << hw.levels.size();
  return syntax::block(depth, hw.levels[static_cast<size_t>(level.level)].name, body);
}

std::string printLayerBlock(const Network &net, const Hardware &hw, const LayerScheduleModel &layer, int depth) {
  std::string body;
  for (const LevelDirectives &d : layer.levels)
    body += printLevelBlock(hw, d, depth + 1);
  DFLC_CHECK(layer.layer >= 0 && static_cast<size_t>(layer.layer) < net.layers.size())
      << "layer schedule of layer " << layer.layer << " of " << net.name << "'s " << net.layers.size();
  const std::string unit = layer.unit >= 0 ? hw.vectors.at(static_cast<size_t>(layer.unit)).name : "";
  return syntax::block(depth, syntax::layerHeader(net.layers[static_cast<size_t>(layer.layer)].name, unit), body);
}

namespace {

/// The header comment and the imports of a written schedule.
std::string preamble(const std::vector<std::string> &imports, const std::string &headerComment) {
  std::ostringstream os;
  std::istringstream comment(headerComment);
  for (std::string line; std::getline(comment, line);)
    os << "// " << line << "\n";
  for (const std::string &imp : imports)
    os << syntax::importLine(imp) << "\n";
  return os.str();
}

} // namespace

std::string writeDsaSchedule(const Network &net, const DsaHardware &hw, const DsaSchedule &schedule,
                             const std::vector<std::string> &imports, const std::string &headerComment) {
  constexpr int item = syntax::kScheduleItemDepth;
  std::string body;
  if (schedule.batchPerIteration > 0)
    body += syntax::line(item, syntax::propertyLine("batch_per_iteration", std::to_string(schedule.batchPerIteration)));
  for (const DsaSubGraphSpec &sg : schedule.subGraphs) {
    std::vector<std::string> layers;
    for (int l : sg.layers)
      layers.push_back(net.layers.at(static_cast<size_t>(l)).name);
    const std::string header = syntax::subGraphHeader(sg.name, layers);
    if (!sg.splitDim)
      body += syntax::line(item, header + ";");
    else
      body += syntax::block(item, header,
                            syntax::line(item + 1, syntax::graphDirective(
                                                       "split", {syntax::graphArg(kDsaTensorDims[*sg.splitDim], "by",
                                                                                  sg.factor)})));
  }
  using Order = DsaSchedule::Order;
  if (schedule.order == Order::Bfs || schedule.order == Order::Dfs)
    body += syntax::line(item, syntax::orderLine({schedule.order == Order::Bfs ? "bfs" : "dfs"}));
  else if (schedule.order == Order::Listed) {
    std::vector<std::string> refs;
    for (const auto &[sg, index] : schedule.listed)
      refs.push_back(syntax::instanceRef(schedule.subGraphs.at(static_cast<size_t>(sg)).name, index, false));
    body += syntax::line(item, syntax::orderLine(refs));
  }
  for (const DsaInstanceSpec &in : schedule.instances) {
    std::string lines;
    if (!in.binding.empty()) {
      std::vector<std::string> args;
      for (size_t d = 0; d < in.binding.size(); ++d)
        if (in.binding[d] > 1)
          args.push_back(syntax::graphArg(kDsaTensorDims[d], std::nullopt, in.binding[d]));
      if (args.empty())
        args.push_back(syntax::graphArg(kDsaTensorDims[0], std::nullopt, 1));
      lines += syntax::line(item + 1, syntax::graphDirective("bind", args));
    }
    if (in.scope)
      lines += syntax::line(item + 1, syntax::graphDirective("scope", {dsaScopeName(*in.scope)}));
    const std::string ref =
        syntax::instanceRef(schedule.subGraphs.at(static_cast<size_t>(in.subGraph)).name, in.index, !in.index);
    body += syntax::block(item, syntax::instanceHeader(ref), lines);
  }
  return preamble(imports, headerComment) + "\n" +
         syntax::block(syntax::kScheduleDepth, syntax::scheduleHeader(net.name, hw.name), body);
}

std::string writeSchedule(const Model &model, const Schedule &schedule, const std::vector<std::string> &imports,
                          const std::string &headerComment) {
  DFLC_CHECK(schedule.network >= 0 && static_cast<size_t>(schedule.network) < model.networks.size())
      << "schedule of network " << schedule.network << " of " << model.networks.size();
  DFLC_CHECK(schedule.hardware >= 0 && static_cast<size_t>(schedule.hardware) < model.hardware.size())
      << "schedule on hardware " << schedule.hardware << " of " << model.hardware.size();
  const Network &net = model.networks[static_cast<size_t>(schedule.network)];
  const Hardware &hw = model.hardware[static_cast<size_t>(schedule.hardware)];
  std::ostringstream os;
  os << preamble(imports, headerComment);
  std::string body;
  for (const Segment &seg : schedule.segments)
    body += syntax::line(syntax::kScheduleItemDepth, printSegment(net, seg));
  for (const LayerScheduleModel &ls : schedule.layers)
    body += printLayerBlock(net, hw, ls, syntax::kScheduleItemDepth);
  os << "\n" << syntax::block(syntax::kScheduleDepth, syntax::scheduleHeader(net.name, hw.name), body);
  return os.str();
}

} // namespace dfl
