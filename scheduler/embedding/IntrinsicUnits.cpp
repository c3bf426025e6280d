#include "scheduler/embedding/IntrinsicUnits.h"

#include "scheduler/analysis/IntrinsicUnits.h"
#include "scheduler/analysis/NocHops.h"
#include "scheduler/embedding/EmbeddingTransform.h"

#include <map>

namespace dfl {

IntrinsicUnit embedLayerUnit(const Layer &layer, const Hardware &hw, int level, const EmbeddingOptions &options) {
  const Level &lv = hw.levels[static_cast<size_t>(level)];
  const LoopNest &in = *lv.intrinsicNest;
  IntrinsicUnit u;
  u.level = level;
  u.intrinsic = lv.intrinsic;
  u.unit.fill(1);
  if (layer.nest.statement != Statement::Mac) {
    u.reason = std::string("its statement is ") + layer.nest.statementName() + ", not a multiply-accumulate";
    return u;
  }
  if (layer.nest.output != TensorRole::Ofm) {
    u.reason = layer.type == LayerType::ConvTranspose ? "a conv_transpose (a conv's data gradient) is not embedded"
                                                      : "a backward layer (training) is not embedded";
    return u;
  }
  EmbeddingResult r = embedIntrinsic(layer.nest, in, options);
  u.nodes = r.stats.nodes;
  u.failures = r.stats.failures;
  u.limitHit = r.hitLimit;
  if (r.candidates.empty()) {
    u.reason = !r.reason.empty() ? r.reason
                                 : "no embedding found within the search's work limit (" + std::to_string(r.stats.nodes) +
                                       " nodes, " + std::to_string(r.stats.failures) + " failures)";
    return u;
  }
  // The best ranked candidate whose unit the level's array holds as stacks
  // (rows and columns): one call per step, one operation per unit.
  for (const Embedding &e : r.candidates) {
    EmbeddingTransform t = transformFor(layer.nest, in, e);
    DimVector unit = t.unit;
    if (layer.channelWise())
      at(unit, Dim::K) = 1;
    std::vector<int64_t> repls;
    for (Dim d : kIndependentDims)
      if (at(unit, d) > 1)
        repls.push_back(at(unit, d));
    if (!stacksFit(repls, lv.rows, lv.cols, lv.units()))
      continue;
    u.embedded = true;
    u.model = embeddingModelName(e.model);
    u.operandsSwapped = e.operandsSwapped;
    u.dimMapping = std::move(t.dimMapping);
    u.macs = e.macs;
    u.macsMin = e.macsMin;
    u.unit = unit;
    return u;
  }
  u.reason = "no embedding's unit fits the " + std::to_string(lv.rows) + " x " + std::to_string(lv.cols) +
             " array as rows and columns";
  return u;
}

void embedIntrinsicUnits(Model &model, const EmbeddingOptions &options) {
  // Layers of one shape (a network's repeated blocks, the same network on two
  // templates) are embedded once: the key holds everything the embedding and
  // the candidate choice read.
  std::map<std::string, IntrinsicUnit> solved;
  for (Hardware &hw : model.hardware) {
    hw.intrinsicUnits.clear();
    const int level = intrinsicLevel(hw);
    if (level < 0)
      continue;
    const Level &lv = hw.levels[static_cast<size_t>(level)];
    const std::string hwKey = lv.intrinsicNest->text() + "|" + lv.intrinsicNest->toIslSet() + "|" +
                              std::to_string(level) + "|" + std::to_string(lv.rows) + "x" + std::to_string(lv.cols) +
                              "|" + lv.intrinsic;
    for (const Network &net : model.networks) {
      auto &table = hw.intrinsicUnits[net.name];
      for (const Layer &layer : net.layers) {
        std::string key = hwKey + "|" + layer.nest.toIslSet() + "|" + layer.nest.text() + "|" +
                          (layer.channelWise() ? "cw" : "") + "|" + roleName(layer.nest.output);
        for (const Access &a : layer.nest.accesses)
          key += "|" + LoopNest::toIslTensorSet(a);
        auto it = solved.find(key);
        if (it == solved.end())
          it = solved.emplace(std::move(key), embedLayerUnit(layer, hw, level, options)).first;
        table[layer.name] = it->second;
      }
    }
  }
}

} // namespace dfl
