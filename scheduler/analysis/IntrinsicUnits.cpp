#include "scheduler/analysis/IntrinsicUnits.h"

#include "scheduler/analysis/NocHops.h"

#include <map>
#include <mutex>

namespace dfl {

int intrinsicLevel(const Hardware &hw) {
  for (size_t l = 0; l < hw.levels.size(); ++l)
    if (hw.levels[l].intrinsicNest)
      return static_cast<int>(l);
  return -1;
}

namespace {

IntrinsicUnit embedLayer(const Layer &layer, const Hardware &hw, int level) {
  const Level &lv = hw.levels[static_cast<size_t>(level)];
  const LoopNest &in = *lv.intrinsicNest;
  IntrinsicUnit u;
  u.level = level;
  u.intrinsic = lv.intrinsic;
  u.unit.fill(1);
  if (layer.nest.statement != Statement::Mac) {
    u.reason = std::string("its statement is ") + statementName(layer.nest.statement) + ", not a multiply-accumulate";
    return u;
  }
  if (layer.nest.output != TensorRole::Ofm) {
    u.reason = "a backward layer (training) is not embedded";
    return u;
  }
  EmbeddingResult r = embedIntrinsic(layer.nest, in);
  if (r.candidates.empty()) {
    u.reason = r.reason.empty() ? "no embedding found within the limit" : r.reason;
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
    u.embedding = e;
    u.transform = std::move(t);
    u.unit = unit;
    return u;
  }
  u.reason = "no embedding's unit fits the " + std::to_string(lv.rows) + " x " + std::to_string(lv.cols) +
             " array as rows and columns";
  return u;
}

} // namespace

std::shared_ptr<const IntrinsicUnit> intrinsicUnitFor(const Layer &layer, const Hardware &hw) {
  const int level = intrinsicLevel(hw);
  if (level < 0)
    return nullptr;
  const Level &lv = hw.levels[static_cast<size_t>(level)];
  // The key: everything the embedding and the candidate choice read.
  std::string key = lv.intrinsicNest->text() + "|" + lv.intrinsicNest->toIslSet() + "|" + std::to_string(level) +
                    "|" + std::to_string(lv.rows) + "x" + std::to_string(lv.cols) + "|" + lv.intrinsic + "|" +
                    layer.nest.toIslSet() + "|" + layer.nest.text() + "|" + (layer.channelWise() ? "cw" : "");
  for (const Access &a : layer.nest.accesses)
    key += "|" + LoopNest::toIslTensorSet(a);
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const IntrinsicUnit>> memo;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = memo.find(key); it != memo.end())
      return it->second;
  }
  // Solved outside the lock: two threads may embed one layer at once; both
  // get the same answer (the search is deterministic) and the first is kept.
  auto u = std::make_shared<const IntrinsicUnit>(embedLayer(layer, hw, level));
  std::lock_guard<std::mutex> lock(mutex);
  return memo.emplace(std::move(key), std::move(u)).first->second;
}

} // namespace dfl
