#pragma once
// The CPU's Graph: replay() checks the arguments against the recording, then queues ONE
// command on the device's queue that runs every launch in order on the worker, so a replay
// of N launches costs one queue round-trip instead of N. A launch that throws ends that
// replay (the launches after it are skipped); the next wait() rethrows its error.
#include <memory>
#include <vector>

#include "cpu_queue.hpp"
#include "tg/plugin/recorded_graph.hpp"

namespace tg::cpu {

class CpuGraph : public plugin::RecordedGraph {
public:
  // `queue` must outlive the graph (the device owns both; a Graph dies before its Device).
  CpuGraph(CpuQueue& queue, std::vector<GraphLaunch> launches);
  void replay(std::span<const LaunchArgs> args) override;

private:
  CpuQueue& queue_;
  std::shared_ptr<const std::vector<std::shared_ptr<Program>>> programs_;
};

} // namespace tg::cpu
