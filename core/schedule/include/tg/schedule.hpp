#pragma once
// The scheduler: from tensor graphs to an ordered list of kernels (tinygrad's schedule, done by
// rangeify). Movement ops become index arithmetic over RANGE loops, so views never copy; a pass
// chooses which intermediates are stored (realized): the requested tensors, CONTIGUOUS,
// sources of COPY, ASSIGN, and a REDUCE whose result is expanded (re-read by many outputs).
// Everything between two stored nodes fuses into one kernel: elementwise chains, and the
// elementwise work before and after a reduce.
//
// Scheduling works on the graph with its buffers replaced by numbered placeholders, so a
// repeated step (the same graph over other buffers) hits the schedule cache and skips it.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/ir/uop.hpp"

namespace tg {

struct ScheduleItem {
  enum class Kind { Kernel, Copy };
  Kind kind = Kind::Kernel;
  UOpPtr ast; // Kernel: the kernel AST (docs/KERNEL_IR.md), PARAM slot i is bufs[i]
  std::vector<std::shared_ptr<Buffer>> bufs; // Copy: {destination, source}
  std::string device;                        // where it runs (the destination for a copy)
};

struct Schedule {
  std::vector<ScheduleItem> items; // in dependency order
  // What each scheduled root becomes once the items ran: a view (movement ops) of a buffer.
  std::vector<UOpPtr> results;
  std::vector<std::shared_ptr<Buffer>> result_buffers; // the buffers the results name
  bool cache_hit = false;
  int64_t temporaries = 0;  // planned intermediate buffers
  int64_t reused_temps = 0; // of which share memory with an earlier one
};

// Schedules `roots` (tensor-level nodes). `buffers` must hold the Buffer of every BUFFER node
// the graphs reach. DEBUG>=1 prints the schedule's size.
Schedule create_schedule(const std::vector<UOpPtr>& roots,
                         const std::vector<std::shared_ptr<Buffer>>& buffers);

struct ScheduleCacheStats {
  int64_t lookups = 0, hits = 0, entries = 0;
};
ScheduleCacheStats schedule_cache_stats();
void clear_schedule_cache();

// True when `u` is a buffer seen through movement ops only (realizing it needs no kernel).
bool is_buffer_view(const UOpPtr& u);
// True when `u` is a BUFFER reshaped only, covering the whole buffer in order.
bool is_contiguous_buffer_view(const UOpPtr& u);
// The BUFFER node under a chain of movement ops (nullptr if there is none).
UOpPtr base_buffer(const UOpPtr& u);
// The device spec a tensor-level node lives on: leaves (BUFFER, CONST, IOTA) name theirs, a
// COPY its destination, every other node that of its first source.
std::string node_device(const UOp* u);

} // namespace tg
