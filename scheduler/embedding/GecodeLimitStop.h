// A Gecode search stop for dflc's constraint models (intrinsic embedding,
// core placement): internal to scheduler/, which alone links Gecode.
#pragma once

#include <gecode/search.hh>

#include <chrono>
#include <cstdint>

namespace dfl {

/// Stops at a node count or a wall-clock deadline, whichever comes first.
class LimitStop : public Gecode::Search::Stop {
public:
  LimitStop(uint64_t nodes, std::chrono::steady_clock::time_point deadline) : nodes_(nodes), deadline_(deadline) {}
  bool stop(const Gecode::Search::Statistics &s, const Gecode::Search::Options &) override {
    return s.node > nodes_ || std::chrono::steady_clock::now() >= deadline_;
  }

private:
  uint64_t nodes_;
  std::chrono::steady_clock::time_point deadline_;
};

} // namespace dfl
