#include "model/ScheduleWriter.h"

#include "support/Check.h"

#include <sstream>

namespace dfl {
namespace {

std::string steps(const std::vector<std::pair<Dim, int64_t>> &s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + std::string(dimName(s[i].first)) + " += " + std::to_string(s[i].second);
  return out;
}

} // namespace

std::string writeSchedule(const Model &model, const Schedule &schedule, const std::vector<std::string> &imports,
                          const std::string &headerComment) {
  DFLC_CHECK(schedule.network >= 0 && static_cast<size_t>(schedule.network) < model.networks.size())
      << "schedule of network " << schedule.network << " of " << model.networks.size();
  DFLC_CHECK(schedule.hardware >= 0 && static_cast<size_t>(schedule.hardware) < model.hardware.size())
      << "schedule on hardware " << schedule.hardware << " of " << model.hardware.size();
  const Network &net = model.networks[static_cast<size_t>(schedule.network)];
  const Hardware &hw = model.hardware[static_cast<size_t>(schedule.hardware)];
  std::ostringstream os;
  std::istringstream comment(headerComment);
  for (std::string line; std::getline(comment, line);)
    os << "// " << line << "\n";
  for (const std::string &imp : imports)
    os << "import \"" << imp << "\";\n";
  os << "\nschedule for " << net.name << " on " << hw.name << " {\n";
  for (const Segment &seg : schedule.segments) {
    os << "  segment ";
    for (size_t i = 0; i < seg.layers.size(); ++i)
      os << (i ? ", " : "") << net.layers[seg.layers[i]].name;
    os << (seg.pipelined ? " pipelined" : "") << ";\n";
  }
  for (const LayerScheduleModel &ls : schedule.layers) {
    DFLC_CHECK(ls.layer >= 0 && static_cast<size_t>(ls.layer) < net.layers.size())
        << "layer schedule of layer " << ls.layer << " of " << net.name << "'s " << net.layers.size();
    const Layer &layer = net.layers[static_cast<size_t>(ls.layer)];
    os << "  layer " << layer.name << " {\n";
    for (const LevelDirectives &d : ls.levels) {
      DFLC_CHECK(d.level >= 0 && static_cast<size_t>(d.level) < hw.levels.size())
          << "directives of level " << d.level << " of " << hw.name << "'s " << hw.levels.size();
      os << "    " << hw.levels[static_cast<size_t>(d.level)].name << " {\n";
      for (const TensorDirective &t : d.tensors) {
        os << "      tensor " << roleName(t.role) << " [";
        bool first = true;
        for (Dim dim : roleDims(t.role)) {
          if (!at(t.sizes, dim))
            continue;
          os << (first ? "" : ", ") << dimName(dim) << "=" << at(t.sizes, dim);
          first = false;
        }
        os << "]" << (t.shr > 1 ? " shr " + std::to_string(t.shr) : "") << ";\n";
      }
      for (const StackDirective &s : d.stacks) {
        os << "      stack " << steps(s.shifts);
        if (s.repl > 1 || s.shifts.empty())
          os << (s.shifts.empty() ? "" : " ") << "repl " << s.repl;
        os << ";\n";
      }
      for (const UpdateDirective &u : d.updates)
        os << "      update " << steps(u.steps) << ";\n";
      os << "    }\n";
    }
    os << "  }\n";
  }
  os << "}\n";
  return os.str();
}

} // namespace dfl
