#pragma once
// The part of a Graph every device shares: it keeps the recorded launches and checks a
// replay's arguments against them, with the same messages on every device. A device derives
// from it and implements replay() (check_replay() first).
#include <string>
#include <utility>

#include "tg/error.hpp"
#include "tg/plugin/device.hpp"

namespace tg::plugin {

class RecordedGraph : public Graph {
public:
  // `device` names the device in messages ("CPU").
  RecordedGraph(std::string device, std::vector<GraphLaunch> launches)
      : device_(std::move(device)), launches_(std::move(launches)) {
    for (size_t i = 0; i < launches_.size(); ++i)
      if (!launches_[i].program)
        throw Error(device_ + " graph: launch " + std::to_string(i) + " of " +
                    std::to_string(launches_.size()) + " has no program");
  }
  size_t size() const override { return launches_.size(); }
  const std::vector<GraphLaunch>& launches() const { return launches_; }

  // Throws tg::Error unless `args` has one entry per recorded launch, each with the recorded
  // number of buffers and variables and the recorded global and local sizes.
  void check_replay(std::span<const LaunchArgs> args) const {
    if (args.size() != launches_.size())
      throw Error(device_ + " graph replay: got arguments for " + std::to_string(args.size()) +
                  " launches, the graph recorded " + std::to_string(launches_.size()) +
                  "; pass one LaunchArgs per recorded launch, in recorded order");
    for (size_t i = 0; i < args.size(); ++i) {
      const LaunchArgs& want = launches_[i].args;
      const LaunchArgs& got = args[i];
      if (got.global == want.global && got.local == want.local &&
          got.buffers.size() == want.buffers.size() && got.vars.size() == want.vars.size())
        continue;
      const std::string which = device_ + " graph replay: launch " + std::to_string(i) + " ";
      if (got.global != want.global)
        throw Error(which + "has global size " + dims(got.global) + ", recorded with " +
                    dims(want.global) + "; record a new graph for a different launch shape");
      if (got.local != want.local)
        throw Error(which + "has local size " + dims(got.local) + ", recorded with " +
                    dims(want.local) + "; record a new graph for a different launch shape");
      if (got.buffers.size() != want.buffers.size())
        throw Error(which + "has " + std::to_string(got.buffers.size()) +
                    " buffers, recorded with " + std::to_string(want.buffers.size()));
      throw Error(which + "has " + std::to_string(got.vars.size()) + " variables, recorded with " +
                  std::to_string(want.vars.size()));
    }
  }

  static std::string dims(const std::array<int64_t, 3>& d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           ")";
  }

private:
  std::string device_;
  std::vector<GraphLaunch> launches_;
};

} // namespace tg::plugin
