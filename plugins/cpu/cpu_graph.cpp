#include "cpu_graph.hpp"

namespace tg::cpu {

namespace {
std::shared_ptr<const std::vector<std::shared_ptr<Program>>>
programs_of(const std::vector<GraphLaunch>& launches) {
  auto out = std::make_shared<std::vector<std::shared_ptr<Program>>>();
  out->reserve(launches.size());
  for (const GraphLaunch& l : launches) out->push_back(l.program);
  return out;
}
} // namespace

CpuGraph::CpuGraph(CpuQueue& queue, std::vector<GraphLaunch> launches)
    : RecordedGraph("CPU", std::move(launches)), queue_(queue),
      programs_(programs_of(this->launches())) {}

void CpuGraph::replay(std::span<const LaunchArgs> args) {
  check_replay(args);
  if (args.empty()) return;
  queue_.submit([programs = programs_, copy = std::vector<LaunchArgs>(args.begin(), args.end())] {
    for (size_t i = 0; i < copy.size(); ++i) (*programs)[i]->run(copy[i], false);
  });
}

} // namespace tg::cpu
