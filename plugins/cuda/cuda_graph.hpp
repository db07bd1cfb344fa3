#pragma once
// A Graph on CUDA graphs: the recorded launches become a chain of kernel nodes, instantiated
// once; a replay updates the parameters of the nodes whose arguments changed in place
// (cuGraphExecKernelNodeSetParams) and launches the executable graph on the device's stream.
#include <string>
#include <vector>

#include "cuda_device.hpp"
#include "tg/plugin/recorded_graph.hpp"

namespace tg::cuda {

class CudaGraph final : public plugin::RecordedGraph {
public:
  CudaGraph(const std::string& device, std::shared_ptr<CudaQueue> queue,
            std::vector<GraphLaunch> launches);
  ~CudaGraph() override;
  void replay(std::span<const LaunchArgs> args) override;

private:
  std::shared_ptr<CudaQueue> owner_;
  const Gpu& gpu_;
  CudaQueue& queue_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  std::vector<CUgraphNode> nodes_;
  std::vector<LaunchArgs> current_; // the arguments each node holds now
};

} // namespace tg::cuda
