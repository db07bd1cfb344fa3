#pragma once
// Sampling the next token from logits, with llama.cpp's knobs and order: repetition penalty
// over the last tokens, top-k, top-p, min-p, then temperature and a draw from a seeded
// generator (so a seed reproduces a run). Temperature 0 is greedy (the first maximum).
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace tg::llm {

struct SamplingParams {
  double temperature = 0.8;
  int32_t top_k = 40;  // 0: off
  double top_p = 0.95; // 1: off
  double min_p = 0.05; // 0: off
  double repeat_penalty = 1.0;
  int32_t repeat_last_n = 64;
  uint64_t seed = 0xFFFFFFFF; // llama.cpp's "random": a seed drawn from the clock
};

class Sampler {
public:
  explicit Sampler(const SamplingParams& p);
  int32_t sample(std::span<const float> logits, std::span<const int32_t> history);
  const SamplingParams& params() const { return p_; }
  uint64_t seed() const { return seed_; }

private:
  SamplingParams p_;
  uint64_t seed_;
  std::mt19937_64 rng_;
};

// The index of the first maximum.
int32_t argmax(std::span<const float> logits);

} // namespace tg::llm
