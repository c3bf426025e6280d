// The wall time of each stage of an invocation (load, analyze, check, solve,
// write), for `--time-passes`. A stage is timed by a Scope living as long as
// the stage; times of a stage run more than once (dflc fmt's files) add up.
// Stages keep the order they first ran in. Not thread-safe: one per
// invocation, on the thread running it.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dfl::driver {

class PassTimer {
public:
  /// Adds the time from its construction to its destruction to `stage`.
  class Scope {
  public:
    Scope(PassTimer &timer, std::string stage)
        : timer_(timer), stage_(std::move(stage)), start_(std::chrono::steady_clock::now()) {}
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    ~Scope() {
      timer_.add(stage_, std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }

  private:
    PassTimer &timer_;
    std::string stage_;
    std::chrono::steady_clock::time_point start_;
  };

  void add(const std::string &stage, double seconds);
  /// Adds every stage of `other` (dflc fmt: one invocation per file).
  void merge(const PassTimer &other);
  /// (stage, wall seconds), in the order the stages first ran.
  const std::vector<std::pair<std::string, double>> &stages() const { return stages_; }
  /// The seconds of `stage`; 0 if it never ran.
  double seconds(const std::string &stage) const;
  double total() const;
  /// LLVM's -time-passes table: stage, wall seconds and percent of the total,
  /// in pipeline order, then the total.
  std::string report() const;

private:
  std::vector<std::pair<std::string, double>> stages_;
};

} // namespace dfl::driver
