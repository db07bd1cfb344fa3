#pragma once
// Running tokens through a Transformer: each chunk size has its own TinyJit over forward, so
// after two calls a step is one replay of recorded kernels with start_pos (and the row whose
// logits come back) swapped in. Prompts run in the cheapest sequence of chunks, the last one
// possibly padded (its extra rows write cache entries past the end, which later tokens
// overwrite and no query sees); decode steps are chunks of one.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "tg/jit.hpp"
#include "transformer.hpp"

namespace tg::llm {

// The chunk to run first for `left` prompt tokens (`chunks`: the sizes, 1 among them): the start
// of the cheapest sequence of chunks that covers them, where a chunk costs its rows plus a fixed
// overhead. Only the last chunk may be padded, and it must fit in the `room` positions left in
// the cache.
int64_t next_prefill_chunk(const std::vector<int64_t>& chunks, int64_t left, int64_t room);

class Session {
public:
  // `chunks`: the prefill chunk sizes (1 is always added for decoding).
  explicit Session(Transformer& model, std::vector<int64_t> chunks = {16, 128, 256});

  // Feeds `tokens` at the current position; returns the logits after the last one.
  std::vector<float> feed(std::span<const int32_t> tokens);
  int64_t position() const { return pos_; }
  // Continues from `pos` (0 <= pos <= position()): later tokens overwrite the cache from there.
  void rewind(int64_t pos);
  Transformer& model() { return model_; }
  int64_t context() const { return model_.context(); }

private:
  using Step = std::function<Tensor(const Tensor&, const sint&, const sint&)>;
  std::vector<float> run(std::span<const int32_t> tokens, int64_t T);

  Transformer& model_;
  std::vector<int64_t> chunks_; // descending, ending with 1
  std::map<int64_t, std::unique_ptr<TinyJit<Step>>> jits_;
  int64_t pos_ = 0;
};

} // namespace tg::llm
