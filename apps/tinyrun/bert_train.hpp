#pragma once
// The MLPerf BERT pretraining step as tinygrad's examples/mlperf/model_train.py train_bert:
// BertForPreTraining (masked-LM + next-sentence heads) with weights drawn from a normal of std
// 0.02 truncated at 2 std (biases zero, LayerNorms one/zero), LAMB (beta 0.9/0.999, eps 1e-6)
// in two groups (weight decay 0.01, none for biases and LayerNorms), the gradients clipped to
// a global norm of 1, the rate on MLPerf's polynomial decay with warmup, the whole step in one
// TinyJit call. The data are synthetic: seeded random tokens, two segments, masked positions
// replaced by [MASK] (id 103) whose original tokens are the MLM labels, random next-sentence
// labels.
#include <cstdint>
#include <memory>
#include <random>

#include "bert_model.hpp"
#include "tg/lr_scheduler.hpp"
#include "tg/optim.hpp"

namespace tinyrun {

struct BertTrainConfig {
  int64_t layers = 2, hidden = 768, heads = 12, intermediate = 0; // 0: 4 * hidden
  int64_t vocab = 30522, max_positions = 512;
  int64_t batch = 16, seq = 128, masked = 20;
  int64_t steps = 10, warmup = 1;
  uint64_t seed = 12345; // MLPerf's
  double lr = 0;         // 0: MLPerf's 0.000175 * sqrt(batch / 96)
  double dropout = 0.1;
  BertConfig bert() const;
  void validate() const; // tg::Error for sizes that do not fit together
};

// The truncated normal of the MLPerf initializers (std * N(0, 1) within 2 std): draws beyond
// 2 std are drawn again once, and a second miss is clamped (2 in 10^5 draws).
tg::Tensor truncated_normal(const tg::Shape& shape, double std);

class BertTrainer {
public:
  explicit BertTrainer(const BertTrainConfig& config);
  ~BertTrainer();
  BertTrainer(const BertTrainer&) = delete;
  BertTrainer& operator=(const BertTrainer&) = delete;
  struct StepResult {
    float loss, grad_norm, lr;
  };
  StepResult step();
  const BertForPreTraining& model() const { return *model_; }

private:
  struct Impl;
  BertTrainConfig config_;
  std::unique_ptr<BertForPreTraining> model_;
  std::unique_ptr<tg::optim::LAMB> opt_wd_, opt_no_wd_;
  std::unique_ptr<tg::optim::LRScheduler> sched_wd_, sched_no_wd_;
  std::unique_ptr<Impl> impl_;
  std::mt19937_64 rng_;
};

// MLPerf's PolynomialDecayWithWarmup (examples/mlperf/lr_schedulers.py): t / warmup * lr up to
// step `warmup` (so 0 at step 0), then lr * (1 - (t - warmup) / (steps - warmup + 1))^power.
class PolynomialDecayWithWarmup : public tg::optim::LRScheduler {
public:
  PolynomialDecayWithWarmup(tg::optim::Optimizer& o, double lr, int64_t steps, int64_t warmup,
                            double power = 1);
  double lr_at(int64_t t) const override;

private:
  double lr_, power_;
  int64_t steps_, warmup_;
};

} // namespace tinyrun
