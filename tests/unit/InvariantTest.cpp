// Internal invariants of support/ and model/ fail loudly: an impossible value
// (an id no one handed out, an enumerator outside its enum, an index past its
// table) raises InternalError with context instead of reading out of bounds or
// printing a placeholder. User input never gets here (tests/lit: diagnostics).
#include "model/Model.h"
#include "model/ScheduleWriter.h"
#include "support/Check.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

using namespace dfl;

namespace {

/// What `f` throws as InternalError ("" if it returns or throws something else).
template <class F> std::string internalError(F f) {
  try {
    f();
  } catch (const InternalError &e) {
    return e.what();
  } catch (...) {
  }
  return "";
}

Model oneLayerModel() {
  Model model;
  Network net;
  net.name = "n";
  Layer l;
  l.name = "c1";
  l.type = LayerType::Conv;
  net.layers.push_back(l);
  model.networks.push_back(net);
  Hardware &hw = model.hardware.emplace_back();
  hw.name = "hw";
  for (const char *level : {"REGF", "DRAM"})
    hw.levels.emplace_back().name = level;
  return model;
}

} // namespace

TEST(Invariants, SourceManagerRejectsIdsItDidNotHandOut) {
  SourceManager sm;
  uint32_t id = sm.addBuffer("a.dfl", "x");
  EXPECT_EQ(sm.path(id), "a.dfl");
  EXPECT_NE(internalError([&] { (void)sm.path(0); }).find("no buffer 0 (1 loaded)"), std::string::npos);
  EXPECT_NE(internalError([&] { (void)sm.text(2); }).find("no buffer 2 (1 loaded)"), std::string::npos);
  EXPECT_NE(internalError([&] { (void)sm.lineCol({7, 0}); }).find("no buffer 7"), std::string::npos);
  // "No location" stays a valid question, not an error.
  EXPECT_EQ(sm.lineCol({}).line, 0u);
}

TEST(Invariants, EnumeratorsOutsideTheirEnum) {
  EXPECT_NE(internalError([] { (void)layerTypeName(static_cast<LayerType>(99)); }).find("unreachable: LayerType 99"),
            std::string::npos);
  EXPECT_NE(internalError([] { (void)transferName(static_cast<Transfer>(99)); }).find("unreachable: Transfer 99"),
            std::string::npos);
  EXPECT_NE(internalError([] { (void)roleDims(static_cast<TensorRole>(99)); }).find("unreachable: TensorRole 99"),
            std::string::npos);
  EXPECT_STREQ(layerTypeName(LayerType::Concat), "concat");
}

TEST(Invariants, ScheduleWriterChecksItsIndices) {
  Model model = oneLayerModel();
  Schedule s;
  s.network = 0;
  s.hardware = 0;
  s.layers.push_back({0, {}, {}, -1, {}});
  s.layers.back().levels.push_back({});
  s.layers.back().levels.back().level = 1;
  EXPECT_NE(writeSchedule(model, s, {}, ""), "");
  Schedule badNet = s;
  badNet.network = 1;
  EXPECT_NE(internalError([&] { writeSchedule(model, badNet, {}, ""); }).find("schedule of network 1 of 1"),
            std::string::npos);
  Schedule badHw = s;
  badHw.hardware = -1;
  EXPECT_NE(internalError([&] { writeSchedule(model, badHw, {}, ""); }).find("schedule on hardware -1 of 1"),
            std::string::npos);
  Schedule badLayer = s;
  badLayer.layers[0].layer = 3;
  EXPECT_NE(internalError([&] { writeSchedule(model, badLayer, {}, ""); }).find("layer 3 of n's 1"),
            std::string::npos);
  Schedule badLevel = s;
  badLevel.layers[0].levels[0].level = 2;
  EXPECT_NE(internalError([&] { writeSchedule(model, badLevel, {}, ""); }).find("level 2 of hw's 2"),
            std::string::npos);
}

TEST(Invariants, DiagnosticFormatsGetEveryArgument) {
  EXPECT_EQ(formatDiagnostic("'%0' and '%1'", {"a", "b"}), "'a' and 'b'");
  EXPECT_NE(internalError([] { (void)formatDiagnostic("'%0' and '%1'", {"a"}); })
                .find("'%0' and '%1'' uses %1 but has 1 argument(s)"),
            std::string::npos);
  // Through the builder too: the diagnostic is not emitted with a hole in it.
  SourceManager sm;
  DiagnosticsEngine diags(sm);
  EXPECT_NE(internalError([&] { diags.report({}, diag::err_import_not_found); }).find("uses %0 but has 0"),
            std::string::npos);
  EXPECT_TRUE(diags.diagnostics().empty());
}
