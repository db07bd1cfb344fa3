// Learning-rate schedules (see tg/lr_scheduler.hpp): torch.optim.lr_scheduler's closed forms.
#include "tg/lr_scheduler.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "tg/error.hpp"

namespace tg::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lr_(optimizer.lr()) {}

void LRScheduler::apply() {
  last_lr_ = lr_at(last_epoch_);
  optimizer_.set_lr(last_lr_);
}

void LRScheduler::step() {
  const double lr = lr_at(last_epoch_ + 1); // may refuse (OneCycleLR past its end): t unchanged
  ++last_epoch_;
  last_lr_ = lr;
  optimizer_.set_lr(lr);
}

// ---- StepLR ---------------------------------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, int64_t step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  if (step_size_ <= 0)
    throw Error("StepLR: step_size must be positive, got " + std::to_string(step_size_));
  apply();
}

double StepLR::lr_at(int64_t t) const {
  return base_lr_ * std::pow(gamma_, static_cast<double>(t / step_size_));
}

// ---- CosineAnnealingLR ----------------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), t_max_(T_max), eta_min_(eta_min) {
  if (t_max_ <= 0)
    throw Error("CosineAnnealingLR: T_max must be positive, got " + std::to_string(t_max_));
  apply();
}

double CosineAnnealingLR::lr_at(int64_t t) const {
  const double x = std::numbers::pi * static_cast<double>(t) / static_cast<double>(t_max_);
  return eta_min_ + (base_lr_ - eta_min_) * (1 + std::cos(x)) / 2;
}

// ---- LinearWarmup ---------------------------------------------------------------------------

LinearWarmup::LinearWarmup(Optimizer& optimizer, int64_t warmup_steps, double start_factor,
                           std::unique_ptr<LRScheduler> after)
    : LRScheduler(optimizer), warmup_(warmup_steps), start_factor_(start_factor),
      after_(std::move(after)) {
  if (warmup_ < 0)
    throw Error("LinearWarmup: warmup_steps must be >= 0, got " + std::to_string(warmup_));
  if (!(start_factor_ >= 0 && start_factor_ <= 1))
    throw Error("LinearWarmup: start_factor must be in [0, 1], got " +
                std::to_string(start_factor_));
  if (after_ && &after_->optimizer() != &optimizer)
    throw Error("LinearWarmup: the schedule to hand over to drives another optimizer; make it "
                "over the same one");
  if (after_) base_lr_ = after_->base_lr(); // the rate before `after` set its own step 0
  apply();
}

double LinearWarmup::lr_at(int64_t t) const {
  if (t < warmup_)
    return base_lr_ * (start_factor_ +
                       (1 - start_factor_) * static_cast<double>(t) / static_cast<double>(warmup_));
  return after_ ? after_->lr_at(t - warmup_) : base_lr_;
}

// ---- OneCycleLR -----------------------------------------------------------------------------

OneCycleLR::OneCycleLR(Optimizer& optimizer, double max_lr, int64_t total_steps, double pct_start,
                       const std::string& anneal_strategy, double div_factor,
                       double final_div_factor, bool three_phase)
    : LRScheduler(optimizer), total_steps_(total_steps) {
  const std::string op = "OneCycleLR: ";
  if (total_steps_ <= 0)
    throw Error(op + "total_steps must be positive, got " + std::to_string(total_steps_));
  if (!(pct_start >= 0 && pct_start <= 1))
    throw Error(op + "pct_start must be in [0, 1], got " + std::to_string(pct_start));
  if (anneal_strategy != "cos" && anneal_strategy != "linear")
    throw Error(op + "anneal_strategy must be 'cos' or 'linear', got '" + anneal_strategy + "'");
  if (!(div_factor > 0) || !(final_div_factor > 0))
    throw Error(op + "div_factor and final_div_factor must be positive");
  cos_ = anneal_strategy == "cos";
  const double initial = max_lr / div_factor, min_lr = initial / final_div_factor;
  const double up = pct_start * static_cast<double>(total_steps_) - 1;
  const auto last = static_cast<double>(total_steps_ - 1);
  if (three_phase)
    phases_ = {{up, initial, max_lr},
               {2 * pct_start * static_cast<double>(total_steps_) - 2, max_lr, initial},
               {last, initial, min_lr}};
  else
    phases_ = {{up, initial, max_lr}, {last, max_lr, min_lr}};
  // torch divides by each phase's length: a phase of length 0 would divide by zero there.
  double start = 0;
  for (const Phase& p : phases_) {
    if (!(p.end_step > start))
      throw Error(op + "pct_start=" + std::to_string(pct_start) +
                  " with total_steps=" + std::to_string(total_steps_) +
                  " leaves a phase without steps; use more steps or another pct_start");
    start = p.end_step;
  }
  base_lr_ = initial;
  apply();
}

double OneCycleLR::lr_at(int64_t t) const {
  if (t < 0 || t > total_steps_)
    throw Error("OneCycleLR: tried to step " + std::to_string(t) +
                " times; the specified number of total steps is " + std::to_string(total_steps_));
  const auto step = static_cast<double>(t);
  double start = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    const Phase& p = phases_[i];
    if (step <= p.end_step || i + 1 == phases_.size()) {
      const double pct = (step - start) / (p.end_step - start);
      if (cos_)
        return p.end_lr + (p.start_lr - p.end_lr) / 2 * (std::cos(std::numbers::pi * pct) + 1);
      return (p.end_lr - p.start_lr) * pct + p.start_lr;
    }
    start = p.end_step;
  }
  return phases_.back().end_lr; // not reached: the last phase always answers
}

} // namespace tg::optim
