#pragma once
// What the scheduler's stages share (scheduler.cpp runs them through the pass driver): the
// template a schedule is instantiated from, and the context the stages fill in, in order:
//   normalize      buffers -> numbered placeholders; the result is the schedule cache's key
//   stored_nodes   which nodes get memory (a kernel each); everything else fuses
//   kernels        one kernel AST per stored node (rangeify.cpp), with its buffer slots
//   order          dependency order, write-after-read edges of ASSIGNs included
//   memory_plan    intermediates share memory once their last reader ran (memory_plan.cpp)
//   results        what each root becomes: a view of an output or input buffer
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tg/ir/uop.hpp"
#include "tg/schedule.hpp"

namespace tg::sched {

// Where a kernel's PARAM slot points: an input buffer (by placeholder number), an
// intermediate (by planned slot) or an output (by number).
struct BufRef {
  enum class Kind : uint8_t { Input, Temp, Output } kind;
  int64_t index;
};

struct TemplateItem {
  ScheduleItem::Kind kind = ScheduleItem::Kind::Kernel;
  UOpPtr ast;
  std::vector<BufRef> bufs;
  std::string device;
};

struct BufferSpec {
  std::string device;
  DType dtype;
  int64_t size;
};

// What root i becomes: a view over input/output buffer `ref`, built by replacing the stored
// node in `view` (a movement chain in the normalized graph) with the real buffer.
struct RootResult {
  BufRef ref;
  UOpPtr view; // movement ops over a placeholder BUFFER (normalized), or null: reshape to shape
};

struct ScheduleTemplate {
  std::vector<TemplateItem> items;
  std::vector<BufferSpec> temps; // after planning: one per distinct piece of memory
  std::vector<BufferSpec> outputs;
  std::vector<RootResult> roots;
  int64_t temporaries = 0, reused = 0;
};

// The stages' context, named after the stage that fills each part.
struct ScheduleBuild {
  UOpPtr sink;                                   // normalize: the normalized graph
  std::vector<const UOp*> buffers_in_order;      // normalize: the real BUFFER of placeholder k
  std::unordered_set<const UOp*> roots;          // stored_nodes
  std::unordered_set<const UOp*> stored;         // stored_nodes
  std::unordered_map<const UOp*, BufRef> memory; // kernels: where each stored node lives
  std::vector<BufferSpec> unplanned;             // kernels: one temporary per stored node
  std::vector<const UOp*> writes;                // kernels: per item, the node it computes
  std::vector<std::vector<const UOp*>> reads;    // kernels: per item, the nodes it loads
  ScheduleTemplate tmpl;                         // kernels, order, memory_plan, results

  std::vector<UOpPtr> graphs() const; // for SPEC=1: the graph and every kernel built
  std::string describe() const;       // for PRINT_AFTER
};

// The stages (stored_nodes.cpp, kernels.cpp, memory_plan.cpp, scheduler.cpp).
UOpPtr normalize(const UOpPtr& sink, std::vector<const UOp*>& buffers_in_order);
void choose_stored_nodes(ScheduleBuild& b);
void build_kernels(ScheduleBuild& b);
void order_for_assigns(ScheduleBuild& b);
void plan_memory(ScheduleBuild& b);
void root_results(ScheduleBuild& b);

int64_t placeholder_number(const UOp* buffer);

} // namespace tg::sched
