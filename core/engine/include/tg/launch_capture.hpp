#pragma once
// Capturing the launches of a stretch of work and replaying them (tinygrad's CapturedJit): the
// engine half of TinyJit. While a LaunchCapture lives on a thread, run_schedule records every
// kernel launch and copy it makes there. A LaunchReplay turns such a recording into launches
// with fixed device pointers, some of whose buffers (the inputs) and variable values are swapped
// on every replay, batched into one device Graph where the plugin has one.
#include <cstdint>
#include <memory>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/runner.hpp"

namespace tg {

struct CapturedLaunch {
  std::shared_ptr<CompiledRunner> runner;    // null for a copy
  std::vector<std::shared_ptr<Buffer>> bufs; // kernel: PARAM slot order; copy: {dst, src}
};

namespace engine_detail {
void capture_launch(CapturedLaunch launch); // run_schedule's hook
bool capturing();                           // a LaunchCapture records on this thread
} // namespace engine_detail

// Records run_schedule's launches on this thread for its lifetime (nested captures: the inner
// one records, the outer one sees nothing of it).
class LaunchCapture {
public:
  LaunchCapture();
  ~LaunchCapture();
  LaunchCapture(const LaunchCapture&) = delete;
  LaunchCapture& operator=(const LaunchCapture&) = delete;
  const std::vector<CapturedLaunch>& launches() const { return launches_; }

private:
  friend void engine_detail::capture_launch(CapturedLaunch launch);
  std::vector<CapturedLaunch> launches_;
  LaunchCapture* previous_;
};

class LaunchReplay {
public:
  // `inputs`: the buffers a replay swaps, by position; `vars`: the bindings of the recording
  // call, which name every variable a kernel needs. A graph is recorded when `use_graph` and
  // every launch is a kernel on one device whose plugin has a graph form.
  LaunchReplay(const std::vector<CapturedLaunch>& launches,
               const std::vector<std::shared_ptr<Buffer>>& inputs, const VarVals& vars,
               bool use_graph);
  ~LaunchReplay();
  LaunchReplay(const LaunchReplay&) = delete;
  LaunchReplay& operator=(const LaunchReplay&) = delete;

  // Launches the recording again with `inputs` (as many as at recording) in the inputs' slots
  // and `vars`' values, then waits. DEBUG>=2 launches one by one, each line marked [jit].
  void replay(const std::vector<std::shared_ptr<Buffer>>& inputs, const VarVals& vars);
  size_t size() const;     // launches and copies recorded
  bool uses_graph() const; // replays are one device Graph submission
  // Intermediates that share the memory of an earlier one whose last use came before theirs
  // (buffers only the recording holds, written before they are read).
  size_t shared_buffers() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tg
