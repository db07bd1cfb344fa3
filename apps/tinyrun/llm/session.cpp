// Chunked, jitted runs of a Transformer; see session.hpp.
#include "session.hpp"

#include <algorithm>
#include <limits>

#include "tg/error.hpp"

namespace tg::llm {

namespace {

// A chunk's cost beyond its rows, in token rows: launching its kernels, and repacking every
// weight into the matmuls' column panels (about a quarter of a 128-token chunk of a 110M llama
// on the CPU), which a chunk of twice the rows does once.
constexpr int64_t kChunkOverhead = 32;

} // namespace

// The chunk to run first for `left` tokens: the start of the cheapest sequence of chunks that
// covers them, each costing its rows plus kChunkOverhead. Only the last chunk may be padded,
// and it must still lie inside the cache (`room` positions from here). With 16, 128 and 256:
// 512 tokens run as 256 + 256, 129 as 128 + 1, 100 as one padded 128, 20 as 16 + a padded 16.
int64_t next_prefill_chunk(const std::vector<int64_t>& chunks, int64_t left, int64_t room) {
  // cost[n]: the cheapest cover of the last n tokens; first[n]: its first chunk.
  constexpr int64_t kNever = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> cost(static_cast<size_t>(left + 1), kNever), first(cost.size(), 1);
  cost[0] = 0;
  for (int64_t n = 1; n <= left; ++n) {
    const int64_t start = left - n; // tokens already run when n are left
    for (int64_t c : chunks) {
      const int64_t rest = c >= n ? 0 : n - c;
      if (c > n && start + c > room) continue; // a padded chunk past the cache's end
      const int64_t total = c + kChunkOverhead + cost[static_cast<size_t>(rest)];
      if (total < cost[static_cast<size_t>(n)]) {
        cost[static_cast<size_t>(n)] = total;
        first[static_cast<size_t>(n)] = c;
      }
    }
  }
  return first[static_cast<size_t>(left)];
}

Session::Session(Transformer& model, std::vector<int64_t> chunks) : model_(model) {
  chunks.push_back(1);
  for (int64_t c : chunks)
    if (c >= 1 && c <= model_.context()) chunks_.push_back(c);
  std::sort(chunks_.begin(), chunks_.end(), std::greater<>());
  chunks_.erase(std::unique(chunks_.begin(), chunks_.end()), chunks_.end());
}

void Session::rewind(int64_t pos) {
  if (pos < 0 || pos > pos_)
    throw Error("rewind to " + std::to_string(pos) + ": only 0.." + std::to_string(pos_) +
                " are in the cache");
  pos_ = pos;
}

std::vector<float> Session::run(std::span<const int32_t> tokens, int64_t T) {
  const auto n = static_cast<int64_t>(tokens.size());
  std::vector<int32_t> padded(tokens.begin(), tokens.end());
  padded.resize(static_cast<size_t>(T), padded.empty() ? 0 : padded.back());
  const std::vector<float> emb = model_.embed(padded);
  auto& jit = jits_[T];
  if (!jit) {
    Step step = [this, T](const Tensor& x, const sint& start, const sint& last) {
      (void)T;
      return model_.forward(x, start, last);
    };
    jit = std::make_unique<TinyJit<Step>>(std::move(step));
  }
  const Tensor x =
      Tensor::from_vector(emb, Shape{T, model_.config().dim}, model_.device()).realize();
  // A chunk of one has no row to choose (a variable of range 0..0 is the constant 0).
  const sint last = T == 1 ? sint(0) : model_.last_var(T).bind(n - 1);
  const Tensor logits = (*jit)(x, model_.start_pos_var(T).bind(pos_), last);
  pos_ += n;
  return logits.to_vector<float>();
}

std::vector<float> Session::feed(std::span<const int32_t> tokens) {
  if (tokens.empty()) throw Error("feed: no tokens");
  if (pos_ + static_cast<int64_t>(tokens.size()) > model_.context())
    throw Error("the context is full: " + std::to_string(pos_) + " + " +
                std::to_string(tokens.size()) + " tokens exceed the " +
                std::to_string(model_.context()) + " positions of the cache (raise --ctx-size)");
  std::vector<float> logits;
  size_t i = 0;
  while (i < tokens.size()) {
    const auto left = static_cast<int64_t>(tokens.size() - i);
    const int64_t T = next_prefill_chunk(chunks_, left, model_.context() - pos_);
    const int64_t take = std::min(T, left);
    logits = run(tokens.subspan(i, static_cast<size_t>(take)), T);
    i += static_cast<size_t>(take);
  }
  return logits;
}

} // namespace tg::llm
