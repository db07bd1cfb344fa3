#pragma once
// The hlb_cifar10 recipe around SpeedyResNet (tinygrad's examples/hlb_cifar10.py): label
// smoothing 0.2, the loss summed and scaled by 512 / batch, two nesterov SGDs (momentum 0.85;
// the BatchNorm biases at 58x the rate and 1/58 the weight decay of the other weights), each
// on a linear one-cycle schedule (pct_start 0.23, from max / 1e6 up to max and down to
// max / 40), an EMA of the weights, and on the device per step a random 32x32 crop of the
// reflect-padded (36x36) images and a random horizontal flip, then from 49.9% of the run (the
// recipe's step 499 of 1000) cutmix. The whole step (augmentation, forward, backward, both
// updates) is one TinyJit call.
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cifar_model.hpp"
#include "tg/jit.hpp"
#include "tg/lr_scheduler.hpp"
#include "tg/optim.hpp"

namespace tinyrun {

// The one-cycle schedule of tinygrad's extra/lr_scheduler.py that hlb_cifar10 uses (linear
// both ways, no momentum cycling): from max / div up to max at step pct_start * total, then
// down to max / div / final_div at step total. Unlike torch's OneCycleLR it takes any number
// of steps.
class HlbOneCycleLR : public tg::optim::LRScheduler {
public:
  HlbOneCycleLR(tg::optim::Optimizer& o, double max_lr, double div_factor, double final_div_factor,
                int64_t total_steps, double pct_start);
  double lr_at(int64_t t) const override;

private:
  double initial_, max_, min_, pct_;
  int64_t total_;
};

struct HlbConfig {
  int64_t steps = 100;
  int64_t batch = 512;
  uint64_t seed = 201; // the recipe's
  bool ema = true;
  bool cutmix = true;
};

// hlb's cutmix: in each image a mask_size x mask_size square at a random place (the same for
// every channel) is taken from image order[i] of the batch, and the target distributions are
// mixed by the square's share of the image: t = a * t[order] + (1 - a) * t, a = size^2 / (H*W).
// x: (B, C, H, W); targets: (B, classes) float; order: (B,) int, a permutation.
std::pair<tg::Tensor, tg::Tensor> hlb_cutmix(const tg::Tensor& x, const tg::Tensor& targets,
                                             const tg::Tensor& order, int64_t mask_size);

// The images of one split, uploaded once, in equal chunks for evaluation.
struct EvalSet {
  std::vector<tg::Tensor> images; // (chunk, 3, 32, 32) normalised
  std::vector<std::vector<int32_t>> labels;
  int64_t n = 0;
};
EvalSet make_eval_set(const std::vector<float>& images, const std::vector<uint8_t>& labels,
                      int64_t n);

class HlbTrainer {
public:
  // `padded`: the normalised training images reflect-padded to 36x36 (cifar_data.hpp);
  // `whitening`: whitening_filter() of the unpadded ones.
  HlbTrainer(const HlbConfig& config, std::vector<float> padded, std::vector<uint8_t> labels,
             int64_t n, const tg::Tensor& whitening);
  ~HlbTrainer();
  HlbTrainer(const HlbTrainer&) = delete;
  HlbTrainer& operator=(const HlbTrainer&) = delete;

  struct StepResult {
    float loss;     // the recipe's summed loss
    float accuracy; // on this batch, in percent (before the update)
  };
  // Step i (0-based): a batch from this epoch's shuffle, the jitted step, the schedules, the
  // EMA update when it is due.
  StepResult step(int64_t i);
  // Test accuracy in percent of the model (or of its EMA, when there is one and `ema`).
  double accuracy(const EvalSet& test, bool ema) const;
  bool has_ema() const { return ema_ != nullptr; }
  const SpeedyResNet& model() const { return *model_; }

private:
  struct Impl;
  HlbConfig config_;
  std::vector<float> padded_;
  std::vector<uint8_t> labels_;
  int64_t n_;
  tg::Tensor whitening_;
  std::unique_ptr<SpeedyResNet> model_, ema_;
  std::unique_ptr<tg::optim::SGD> opt_bias_, opt_non_bias_;
  std::unique_ptr<HlbOneCycleLR> sched_bias_, sched_non_bias_;
  std::unique_ptr<Impl> impl_;
  std::mt19937_64 rng_;
  std::vector<int64_t> order_;
  int64_t cursor_ = 0;
};

} // namespace tinyrun
