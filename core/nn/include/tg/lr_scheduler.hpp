#pragma once
// Learning-rate schedules over a tg::optim::Optimizer, as torch.optim.lr_scheduler: each
// computes the rate for step (epoch) t in closed form from the optimizer's rate when the
// schedule was made (base_lr). Construction applies t = 0; step() advances t and applies the
// new rate through Optimizer::set_lr, which writes the optimizer's realized 0-d rate tensor,
// so no kernel is recompiled as the rate changes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tg/optim.hpp"

namespace tg::optim {

class LRScheduler {
public:
  virtual ~LRScheduler() = default;
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;

  void step();                                       // t += 1, then set the optimizer's rate
  int64_t last_epoch() const { return last_epoch_; } // t (0 after construction)
  double get_last_lr() const { return last_lr_; }    // the rate set last
  double base_lr() const { return base_lr_; }
  Optimizer& optimizer() const { return optimizer_; }
  // The rate this schedule gives step t (t >= 0), without setting it.
  virtual double lr_at(int64_t t) const = 0;

protected:
  explicit LRScheduler(Optimizer& optimizer);
  // Sets the rate for last_epoch(); subclasses call it at the end of their constructor (the
  // virtual lr_at is not ready inside this base's).
  void apply();
  Optimizer& optimizer_;
  double base_lr_;

private:
  int64_t last_epoch_ = 0;
  double last_lr_ = 0;
};

// lr = base_lr * gamma^floor(t / step_size) (torch.optim.lr_scheduler.StepLR).
class StepLR : public LRScheduler {
public:
  StepLR(Optimizer& optimizer, int64_t step_size, double gamma = 0.1);
  double lr_at(int64_t t) const override;

private:
  int64_t step_size_;
  double gamma_;
};

// lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2, torch's closed form
// (CosineAnnealingLR; past T_max the cosine goes on, as torch's recursive form does).
class CosineAnnealingLR : public LRScheduler {
public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);
  double lr_at(int64_t t) const override;

private:
  int64_t t_max_;
  double eta_min_;
};

// A linear warm-up: lr = base_lr * (start_factor + (1 - start_factor) * t / warmup_steps) for
// t < warmup_steps (torch's LinearLR with end_factor 1), then `after` at step t - warmup_steps
// (as torch's SequentialLR hands over at a milestone), or base_lr held when there is none.
// `after` must be a schedule over the same optimizer, made before this one (its base_lr is the
// optimizer's rate when it was made).
class LinearWarmup : public LRScheduler {
public:
  LinearWarmup(Optimizer& optimizer, int64_t warmup_steps, double start_factor = 1.0 / 3,
               std::unique_ptr<LRScheduler> after = nullptr);
  double lr_at(int64_t t) const override;

private:
  int64_t warmup_;
  double start_factor_;
  std::unique_ptr<LRScheduler> after_;
};

// torch.optim.lr_scheduler.OneCycleLR (learning rate only; no momentum cycling): from
// max_lr / div_factor up to max_lr over the first pct_start * total_steps - 1 steps, then down
// to max_lr / div_factor / final_div_factor at step total_steps - 1, by cosine ("cos") or
// linear ("linear") annealing; three_phase comes back down to the initial rate before the
// final descent. The optimizer's rate is replaced (base_lr is max_lr / div_factor). Stepping
// past total_steps raises tg::Error, as torch does.
class OneCycleLR : public LRScheduler {
public:
  OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start = 0.3,
             const std::string& anneal_strategy = "cos", double div_factor = 25,
             double final_div_factor = 1e4, bool three_phase = false);
  double lr_at(int64_t t) const override;

private:
  struct Phase {
    double end_step, start_lr, end_lr;
  };
  std::vector<Phase> phases_;
  int64_t total_steps_;
  bool cos_;
};

} // namespace tg::optim
