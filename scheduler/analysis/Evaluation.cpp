#include "scheduler/analysis/Evaluation.h"

namespace dfl {

Evaluation evaluationOf(const Model &model, const Schedule &schedule, const ScheduleResult &r) {
  const Network &net = networkOf(model, schedule);
  const Hardware &hw = hardwareOf(model, schedule);
  Evaluation e = evaluationHeader(net, hw, "layer");
  for (const LayerResult &lr : r.layers) {
    EvaluationRow row;
    row.name = net.layers[lr.layer].name;
    if (lr.complete && lr.valid && !lr.levels.empty()) {
      row.energyPj = lr.energyPj;
      row.latencyCycles = lr.latencyCycles;
      row.utilization = lr.utilization;
      row.parts = {{"MAC", lr.energyMacPj}};
      for (const LevelResult &lv : lr.levels)
        row.parts.push_back({hw.levels[lv.level].name, lv.energyPj});
      row.parts.insert(row.parts.end(), {{"NoC", lr.energyNocPj}, {"bus", lr.energyBusPj}, {"static", lr.energyStaticPj}});
    }
    e.rows.push_back(std::move(row));
  }
  if (r.complete && r.valid) {
    e.energyPj = r.energyPj;
    e.latencyCycles = r.latencyCycles;
    e.parts = {{"MAC", r.energyMacPj}};
    for (size_t l = 0; l < hw.levels.size() && l < r.energyLevelPj.size(); ++l)
      e.parts.push_back({hw.levels[l].name, r.energyLevelPj[l]});
    e.parts.insert(e.parts.end(), {{"NoC", r.energyNocPj}, {"bus", r.energyBusPj}, {"static", r.energyStaticPj}});
  }
  return e;
}

} // namespace dfl
