// Token sampling; see sampler.hpp.
#include "sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "tg/error.hpp"

namespace tg::llm {

int32_t argmax(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampling: no logits");
  return static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

Sampler::Sampler(const SamplingParams& p) : p_(p) {
  if (p_.top_p <= 0 || p_.top_p > 1) throw Error("--top-p must be in (0, 1]");
  if (p_.min_p < 0 || p_.min_p > 1) throw Error("--min-p must be in [0, 1]");
  if (p_.repeat_penalty <= 0) throw Error("--repeat-penalty must be positive");
  seed_ = p_.seed == 0xFFFFFFFF
              ? static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())
              : p_.seed;
  rng_.seed(seed_);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> history) {
  std::vector<float> l(logits.begin(), logits.end());
  if (p_.repeat_penalty != 1.0 && p_.repeat_last_n != 0) {
    const size_t n = p_.repeat_last_n < 0
                         ? history.size()
                         : std::min(history.size(), static_cast<size_t>(p_.repeat_last_n));
    std::vector<bool> seen(l.size(), false);
    for (size_t i = history.size() - n; i < history.size(); ++i) {
      const int32_t t = history[i];
      if (t < 0 || static_cast<size_t>(t) >= l.size() || seen[static_cast<size_t>(t)]) continue;
      seen[static_cast<size_t>(t)] = true;
      float& x = l[static_cast<size_t>(t)];
      x = x > 0 ? static_cast<float>(x / p_.repeat_penalty)
                : static_cast<float>(x * p_.repeat_penalty);
    }
  }
  if (p_.temperature <= 0) return argmax(l);

  std::vector<int32_t> ids(l.size());
  std::iota(ids.begin(), ids.end(), 0);
  auto by_logit = [&](int32_t a, int32_t b) {
    return l[static_cast<size_t>(a)] > l[static_cast<size_t>(b)] ||
           (l[static_cast<size_t>(a)] == l[static_cast<size_t>(b)] && a < b);
  };
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < ids.size()) {
    std::partial_sort(ids.begin(), ids.begin() + p_.top_k, ids.end(), by_logit);
    ids.resize(static_cast<size_t>(p_.top_k));
  } else {
    std::sort(ids.begin(), ids.end(), by_logit);
  }
  // Probabilities of the untempered logits (top-p and min-p see them, as in llama.cpp).
  const double mx = l[static_cast<size_t>(ids[0])];
  std::vector<double> pr(ids.size());
  double sum = 0;
  for (size_t i = 0; i < ids.size(); ++i)
    sum += (pr[i] = std::exp(l[static_cast<size_t>(ids[i])] - mx));
  for (double& x : pr) x /= sum;
  size_t keep = ids.size();
  if (p_.top_p < 1.0) {
    double cum = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
      cum += pr[i];
      if (cum >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p_.min_p > 0)
    for (size_t i = 1; i < keep; ++i)
      if (pr[i] < p_.min_p * pr[0]) {
        keep = i;
        break;
      }
  ids.resize(keep);
  std::vector<double> w(keep);
  for (size_t i = 0; i < keep; ++i)
    w[i] = std::exp((l[static_cast<size_t>(ids[i])] - mx) / p_.temperature);
  std::discrete_distribution<size_t> dist(w.begin(), w.end());
  return ids[dist(rng_)];
}

} // namespace tg::llm
