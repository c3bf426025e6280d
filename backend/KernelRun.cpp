// Running a kernel (backend/KernelRun.h).
#include "backend/KernelRun.h"

#include "support/Check.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace dfl::sim {

int64_t kernelBytes(const CompiledKernel &k) {
  double bytes = 0;   // slot sizes saturate at 2^56 elements: no wrap-around here either
  for (const KernelSlot &s : k.slots)
    bytes += static_cast<double>(s.elements) * s.bytes;
  return static_cast<int64_t>(std::min(bytes, 9e18));
}

KernelResult runKernel(const KernelPlan &plan, const CompiledKernel &k, const TensorStore &store) {
  // The slots in one zeroed block, each on a cache line of its own and a
  // word longer than it needs: a small layer's run is mostly this setup, and
  // calloc hands a large block's pages over untouched (zero until written).
  auto extent = [](const KernelSlot &s) { return (static_cast<size_t>(s.elements * s.bytes) + 8 + 63) / 64 * 64; };
  size_t total = 0;
  for (const KernelSlot &s : k.slots)
    total += extent(s);
  std::unique_ptr<void, decltype(&std::free)> storage(std::calloc(total + 64, 1), &std::free);
  DFLC_CHECK(storage) << "cannot allocate the kernel's " << total << " bytes";
  std::vector<void *> table;
  auto *next = static_cast<std::byte *>(storage.get());
  next += (64 - reinterpret_cast<uintptr_t>(next) % 64) % 64;
  for (const KernelSlot &s : k.slots) {
    void *p = next;
    next += extent(s);
    if (s.init != 0) {
      DFLC_CHECK(s.bytes == 4) << "only words start from a value other than 0";
      std::fill_n(static_cast<Word *>(p), s.elements, static_cast<Word>(s.init));
    }
    table.push_back(p);
  }
  for (const auto &[name, slot] : k.inputs) {
    const std::vector<Word> &data = store.at(name).data;
    const KernelSlot &s = k.slots[static_cast<size_t>(slot)];
    DFLC_CHECK(static_cast<int64_t>(data.size()) == s.elements) << "tensor " << name << " has " << data.size()
                                                                 << " words, the kernel " << s.elements;
    std::memcpy(table[static_cast<size_t>(slot)], data.data(), data.size() * sizeof(Word));
  }

  auto start = std::chrono::steady_clock::now();
  k.fn(table.data());
  KernelResult out;
  out.runMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const int outSlot = k.tensorSlot[static_cast<size_t>(plan.output)];
  const KernelSlot &ofm = k.slots[static_cast<size_t>(outSlot)];
  const Word *o = static_cast<const Word *>(table[static_cast<size_t>(outSlot)]);
  out.output.assign(o, o + ofm.elements);

  const auto *counters = static_cast<const int64_t *>(table[static_cast<size_t>(k.counterSlot)]);
  const size_t nl = k.counters.levels;
  out.counts.levels.resize(nl);
  for (size_t l = 0; l < nl; ++l)
    for (size_t r = 0; r < kNumRoles; ++r) {
      auto role = static_cast<TensorRole>(r);
      KernelCounts::Role &c = out.counts.levels[l][r];
      c.reads = static_cast<double>(counters[k.counters.at(l, role, kReads)]);
      c.writes = static_cast<double>(counters[k.counters.at(l, role, kWrites)]);
      c.same = static_cast<double>(counters[k.counters.at(l, role, kSame)]);
    }
  // Copies passed between neighbours instead of read from the parent (§6):
  // the reads of the level holding r above (the parent, or past a bypass)
  // that fed level l, which at the level a normalization's statistics
  // passes read are its reads less theirs (§7).
  for (size_t l = 0; l + 1 < nl; ++l)
    if (plan.levels[l].neighbourInputs)
      for (TensorRole r : kRoles)
        if (r != plan.output && plan.levels[l].holds[static_cast<size_t>(r)]) {
          const size_t h = plan.levels[l].holder[static_cast<size_t>(r)];
          double fed = out.counts.levels[h][static_cast<size_t>(r)].reads;
          if (plan.rows > 0 && r == TensorRole::Ifm && h == plan.statisticsLevel)
            fed -= static_cast<double>(plan.statisticsWords * plan.statisticsPasses());
          out.counts.levels[l][static_cast<size_t>(r)].same += out.counts.levels[l][static_cast<size_t>(r)].writes - fed;
        }
  out.counts.macs = static_cast<double>(counters[k.counters.macs()]);
  for (const PlanRole &r : plan.roles)
    if (r.present)
      for (size_t s = 0; s < r.sources.size(); ++s)
        out.counts.dramReads[static_cast<size_t>(r.role)][r.sources[s].tensor] += static_cast<double>(counters[k.counters.sourceReads(r.role, s)]);
  // A vector unit's plan counts from its level: the levels inside see no word.
  out.counts.levels.insert(out.counts.levels.begin(), plan.levelOffset, {});
  return out;
}

} // namespace dfl::sim
