// CUDA graphs: record once, update kernel-node parameters in place, launch.
#include "cuda_graph.hpp"

#include "tg/error.hpp"

namespace tg::cuda {

namespace {

const CudaProgram& program_of(const GraphLaunch& l, size_t i) {
  auto* p = dynamic_cast<const CudaProgram*>(l.program.get());
  if (p == nullptr)
    throw Error("CUDA graph: launch " + std::to_string(i) + " is not a program of a CUDA device");
  return *p;
}

bool same(const LaunchArgs& a, const LaunchArgs& b) {
  return a.buffers == b.buffers && a.vars == b.vars && a.global == b.global && a.local == b.local;
}

} // namespace

CudaGraph::CudaGraph(const std::string& device, std::shared_ptr<CudaQueue> queue,
                     std::vector<GraphLaunch> launches)
    : RecordedGraph(device, std::move(launches)), owner_(std::move(queue)), gpu_(owner_->gpu()),
      queue_(*owner_) {
  gpu_.make_current();
  check(driver().cuGraphCreate(&graph_, 0), "cuGraphCreate");
  std::vector<unsigned long long> values;
  std::vector<void*> pointers;
  for (size_t i = 0; i < this->launches().size(); ++i) {
    const GraphLaunch& l = this->launches()[i];
    const CudaKernelNodeParams p = program_of(l, i).node_params(l.args, values, pointers);
    CUgraphNode node = nullptr;
    const CUgraphNode* deps = nodes_.empty() ? nullptr : &nodes_.back();
    check(driver().cuGraphAddKernelNode(&node, graph_, deps, nodes_.empty() ? 0 : 1, &p),
          "cuGraphAddKernelNode (" + program_of(l, i).name() + ")");
    nodes_.push_back(node);
    current_.push_back(l.args);
  }
  check(driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0), "cuGraphInstantiate");
}

CudaGraph::~CudaGraph() {
  try {
    gpu_.make_current();
    queue_.drain();
  } catch (...) { // a failed replay was reported where it was waited for
  }
  if (exec_ != nullptr) driver().cuGraphExecDestroy(exec_);
  if (graph_ != nullptr) driver().cuGraphDestroy(graph_);
}

void CudaGraph::replay(std::span<const LaunchArgs> args) {
  check_replay(args);
  gpu_.make_current();
  std::vector<unsigned long long> values;
  std::vector<void*> pointers;
  for (size_t i = 0; i < args.size(); ++i) {
    if (same(args[i], current_[i])) continue;
    const CudaKernelNodeParams p =
        program_of(launches()[i], i).node_params(args[i], values, pointers);
    // The driver copies the values; launches already queued keep their own.
    check(driver().cuGraphExecKernelNodeSetParams(exec_, nodes_[i], &p),
          "cuGraphExecKernelNodeSetParams");
    current_[i] = args[i];
  }
  check(driver().cuGraphLaunch(exec_, queue_.stream()), "cuGraphLaunch");
}

} // namespace tg::cuda
