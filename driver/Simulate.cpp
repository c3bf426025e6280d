// The driver's run stages (docs/simulator.md, docs/cm.md): simulate() runs a
// memory-hierarchy schedule, controlCm() derives and runs a computational-
// memory chip's control. Every error is a diagnostic, as in the other stages.
#include "driver/Compilation.h"

#include "backend/PipelineGantt.h"
#include "backend/SimReport.h"
#include "backend/cm/CmControl.h"
#include "backend/polyhedral/Isl.h"
#include "scheduler/analysis/StepBoxes.h"
#include "scheduler/placement/CmPlacementReport.h"
#include "support/ChromeTrace.h"
#include "support/Check.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace dfl::driver {
namespace {

/// E0824 from the isl dependences (docs/simulator.md, "Buffers"): the check
/// refused the segment already from the analysis' tables; here isl's, the
/// independent derivation, decide.
void checkSegmentBuffers(const sim::PipelineResult &pipe, DiagnosticsEngine &diags) {
  for (const sim::SegmentRun &g : pipe.segments)
    for (const sim::RegionRun &r : g.regions) {
      std::vector<ForwardedWords> forwarded;
      for (const sim::BufferRun &b : g.buffers)
        if (b.consumer == r.layer)
          forwarded.push_back({b.tensor, b.minSteps, b.neededWords});
      const RegionRoom room{r.level, r.nodes, r.bounded, r.capacityWords, r.otherTileWords};
      if (auto i = segmentBufferIssue(g.range, r.layer, forwarded, room))
        reportIssues({*i}, diags);
    }
}

/// Whether every core's buffers fit its SRAM (docs/cm.md, "Buffers"); E1108 for each that does not.
bool checkSram(const Network &net, const CmHardware &hw, const CmMapping &m, const cm::CmControl &ctl,
               DiagnosticsEngine &diags) {
  bool ok = true;
  const sim::PipelineDependences &deps = ctl.dependences();
  for (const cm::CmCoreMemory &mem : ctl.memory()) {
    const cm::CmRegion &r = ctl.regions()[static_cast<size_t>(mem.region)];
    if (r.core < 0 || mem.bytes <= hw.sramBytes)
      continue;
    std::vector<std::string> what;
    for (const cm::CmBuffer &b : mem.buffers) {
      const sim::EdgeDependences &e = deps.edges()[static_cast<size_t>(b.edge)];
      what.push_back("'" + e.tensor + "' from " + ctl.regions()[static_cast<size_t>(e.producer)].name + " (" +
                     std::to_string(b.steps) + " of its steps: " + std::to_string(b.words) + " words, " +
                     std::to_string(b.bytes) + " bytes)");
    }
    const CmTile &t = m.partitioning.tiles[static_cast<size_t>(r.tile)];
    const Layer &l =
        net.layers[static_cast<size_t>(m.partitioning.partitions[static_cast<size_t>(t.partition)].crossbarLayer)];
    diags.report(l.nameRange, diag::err_cm_sram).note(hw.sramRange, diag::note_cm_sram_here)
        << r.core << hw.name << "'" + r.name + "'" << mem.bytes << std::to_string(hw.sramBytes) + " bytes"
        << joinList(what, ", ", " and ");
    ok = false;
  }
  return ok;
}

} // namespace

const Schedule *Compilation::scheduleToRun() {
  if (solution_)
    return &solution_->schedule;
  if (checked_.size() != 1) {
    diags_.report({}, diag::err_run_schedule_count) << checked_.size() << "sim" << "runs one";
    return nullptr;
  }
  const Schedule &s = model_.schedules[static_cast<size_t>(checked_[0].schedule)];
  if (!checked_[0].result.complete) {
    diags_.report(s.range, diag::err_run_incomplete) << networkOf(model_, s).name << hardwareOf(model_, s).name;
    return nullptr;
  }
  return &s;
}

bool Compilation::simulate(sim::SimOptions options) {
  if (stage_ != Stage::Solved)   // else the solution runs
    enter(Stage::Checked, "simulate");
  const Schedule *s = scheduleToRun();
  if (!s)
    return false;
  const Network &net = networkOf(model_, *s);
  for (const std::string &name : options.layers)
    if (net.findLayer(name) < 0) {
      std::vector<std::string> names;
      for (const Layer &l : net.layers)
        names.push_back(l.name);
      diags_.report({}, diag::err_run_no_layer) << net.name << name << didYouMean(name, names);
    }
  if (diags_.hasErrors())
    return false;
  Simulation &run = simulation_.emplace();
  run.options = options;
  ChromeTrace pipelineTrace;
  // Pipelined segments run region against region through their LCUs; first,
  // as it is quick and can refuse the schedule before the kernels run.
  if (std::any_of(s->segments.begin(), s->segments.end(), [](const Segment &g) { return g.pipelined; })) {
    PassTimer::Scope time(timer_, "control");
    sim::PipelineOptions po;
    po.layers = options.layers;
    po.trace = &pipelineTrace;
    run.pipelines = sim::simulatePipelines(model_, *s, po);
    checkSegmentBuffers(*run.pipelines, diags_);
    if (diags_.hasErrors())
      return false;
  }
  if (!options.pipelinesOnly) {
    PassTimer::Scope time(timer_, "simulate");
    try {
      run.kernels = sim::simulate(model_, *s, options);
      if (const auto &cut = run.kernels->workCut) {
        const Layer &l = net.layers[static_cast<size_t>(cut->layer)];
        diags_.report(l.nameRange, diag::warn_sim_work_cut)
            << l.name << formatNumber(cut->work) << formatNumber(options.workLimit) << std::to_string(cut->layers)
            << std::to_string(net.layers.size());
      }
    } catch (const sim::LimitError &e) {
      const Layer &l = net.layers[static_cast<size_t>(e.layer)];
      diags_.report(l.nameRange, e.kind == sim::LimitError::Work ? diag::err_sim_work : diag::err_sim_memory)
          << l.name << formatNumber(e.amount) << e.what << formatNumber(e.limit);
      return false;
    }
    run.files.push_back({"sim.json", sim::simJson(net, hardwareOf(model_, *s), options, *run.kernels)});
    for (auto &[name, ir] : sim::kernelFiles(*run.kernels))
      run.files.push_back({"kernels/" + name, ir});
  }
  if (run.pipelines) {
    run.files.push_back({"pipeline.json", sim::pipelineJson(*run.pipelines)});
    run.files.push_back({"pipeline.svg", sim::pipelineSvg(*run.pipelines)});
    nlohmann::ordered_json segments = nlohmann::ordered_json::array();
    for (const sim::SegmentRun &g : run.pipelines->segments)
      if (g.skipped.empty() && g.error.empty())
        segments.push_back({{"segment", sim::segmentName(g)}, {"cycles", g.cycles}, {"analytical_cycles", g.analyticalCycles}});
    pipelineTrace.note("segments", segments);
    run.files.push_back({"trace.json", pipelineTrace.json()});
    for (const sim::SegmentRun &g : run.pipelines->segments)
      for (const sim::RegionRun &r : g.regions)
        run.files.push_back({"lcu/" + r.layer + ".c", r.lcuC});
  }
  return true;
}

bool Compilation::controlCm(bool simulate, uint64_t seed) {
  DFLC_CHECK(cmMapping_) << "controlCm before placeOnCm";
  PassTimer::Scope time(timer_, "control");
  const Network &net = model_.networks[0];
  const CmHardware &hw = model_.cmHardware[0];
  const CmMapping &m = *cmMapping_;
  Simulation &run = simulation_.emplace();
  run.options.seed = seed;
  run.files = {{"placement.json", cmPlacementJson(net, hw, m)}, {"placement.svg", cmPlacementSvg(net, hw, m)}};
  // The control: dependences, buffers and LCUs (docs/cm.md, "Control").
  std::unique_ptr<cm::CmControl> ctl;
  try {
    ctl = cm::CmControl::build(net, hw, m, run.cmControlSkipped, 2'000'000'000);
  } catch (const isl::OperationLimit &e) {
    run.cmControlSkipped = std::string(e.what()) + ": the dependences are too large to derive";
  }
  if (!ctl) {
    if (simulate)
      diags_.report(net.nameRange, diag::err_run_cm_control) << net.name << hw.name << run.cmControlSkipped;
    return !simulate;
  }
  run.cmControlSkipped.clear();
  if (!checkSram(net, hw, m, *ctl, diags_))
    return false;
  if (simulate) {
    ChromeTrace trace;
    cm::CmSimOptions so;
    so.seed = seed;
    so.trace = &trace;
    run.cm = cm::simulateCm(net, hw, m, *ctl, so);
    trace.note("cycles", run.cm->cycles);
    trace.note("batch", run.cm->batch);
    run.files.push_back({"sim.json", cm::cmSimJson(net, hw, so, *run.cm)});
    run.files.push_back({"trace.json", trace.json()});
    for (const cm::CmCoreRun &r : run.cm->cores)
      run.files.push_back({"lcu/" + r.region + ".c", r.lcuC});
  } else {
    for (size_t r = 0; r < ctl->regions().size(); ++r)
      run.files.push_back({"lcu/" + ctl->regions()[r].name + ".c", ctl->lcuC(static_cast<int>(r))});
  }
  return true;
}

const Simulation &Compilation::simulation() const {
  DFLC_CHECK(simulation_) << "simulation() before a run stage";
  return *simulation_;
}

} // namespace dfl::driver
