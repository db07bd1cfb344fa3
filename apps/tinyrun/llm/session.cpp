// Chunked, jitted runs of a Transformer; see session.hpp.
#include "session.hpp"

#include <algorithm>

#include "tg/error.hpp"

namespace tg::llm {

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
    // The smallest chunk that takes everything left, else the largest that fits whole; a
    // padded chunk must still lie inside the cache.
    int64_t T = 1;
    for (int64_t c : chunks_)
      if (c <= left) {
        T = c;
        break;
      }
    for (auto it = chunks_.rbegin(); it != chunks_.rend(); ++it)
      if (*it >= left && pos_ + *it <= model_.context() && left > 1) {
        T = *it;
        break;
      }
    const int64_t take = std::min(T, left);
    logits = run(tokens.subspan(i, static_cast<size_t>(take)), T);
    i += static_cast<size_t>(take);
  }
  return logits;
}

} // namespace tg::llm
