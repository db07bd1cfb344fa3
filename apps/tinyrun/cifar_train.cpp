#include "cifar_train.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <tuple>

#include "tg/error.hpp"

namespace tinyrun {

using tg::Tensor;

namespace {

constexpr int64_t kPad = 2, kPadded = 32 + 2 * kPad, kClasses = 10;
constexpr double kBiasScaler = 58, kMomentum = 0.85, kLabelSmoothing = 0.2;
constexpr double kPctStart = 0.23, kDivFactor = 1e6, kFinalLrRatio = 0.025;
// EMA: from 40% of the run (the recipe's step 399 of 1000), every 5 steps, decay
// 0.95^5 * (i / steps)^1.6.
constexpr double kEmaStart = 0.4, kEmaDecayBase = 0.95, kEmaDecayPow = 1.6;
constexpr int64_t kEmaEvery = 5;
// Cutmix: 3x3 squares, from 49.9% of the run (the recipe's step 499 of 1000).
constexpr double kCutmixStart = 0.499;
constexpr int64_t kCutmixSize = 3;

// hlb's random_crop: per image offsets in [0, 36 - 32) (the recipe's randint excludes the last
// one), taken by two gathers; then a flip of half the images.
Tensor augment(const Tensor& x) {
  const int64_t b = x.size(0);
  const Tensor lx = Tensor::randint({b, 1, 1, 1}, 0, kPadded - 32);
  const Tensor ly = Tensor::randint({b, 1, 1, 1}, 0, kPadded - 32);
  const Tensor ix = Tensor::arange(32).reshape({1, 1, 1, 32});
  const Tensor iy = Tensor::arange(32).reshape({1, 1, 32, 1});
  Tensor h = x.gather(-1, (lx + ix).expand({b, 3, kPadded, 32}));
  h = h.gather(-2, (ly + iy).expand({b, 3, 32, 32}));
  return (Tensor::rand({b, 1, 1, 1}) < 0.5).where(h.flip({3}), h);
}

// Cross entropy against label-smoothed target distributions (one-hot, or mixed by cutmix),
// per image.
Tensor smoothed_cross_entropy(const Tensor& logits, const Tensor& targets) {
  const Tensor y = targets * (1 - kLabelSmoothing) + kLabelSmoothing / kClasses;
  return -(logits.log_softmax(1) * y).sum({1});
}

} // namespace

std::pair<Tensor, Tensor> hlb_cutmix(const Tensor& x, const Tensor& targets, const Tensor& order,
                                     int64_t mask_size) {
  const int64_t b = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  if (mask_size < 1 || mask_size > h || mask_size > w)
    throw tg::Error("cutmix: a " + std::to_string(mask_size) + "x" + std::to_string(mask_size) +
                    " square does not fit " + std::to_string(h) + "x" + std::to_string(w) +
                    " images");
  // The square's corner: randint excludes its high end, as the recipe's does.
  const Tensor lx = Tensor::randint({b, 1, 1, 1}, 0, w - mask_size + 1);
  const Tensor ly = Tensor::randint({b, 1, 1, 1}, 0, h - mask_size + 1);
  const Tensor ix = Tensor::arange(w).reshape({1, 1, 1, w});
  const Tensor iy = Tensor::arange(h).reshape({1, 1, h, 1});
  const Tensor mask = (ix >= lx)
                          .logical_and(ix < lx + mask_size)
                          .logical_and(iy >= ly)
                          .logical_and(iy < ly + mask_size);
  const Tensor x_patch = x.gather(0, order.reshape({b, 1, 1, 1}).expand({b, c, h, w}));
  const Tensor t_patch = targets.gather(0, order.reshape({b, 1}).expand({b, targets.size(1)}));
  const double mix = static_cast<double>(mask_size * mask_size) / static_cast<double>(h * w);
  return {mask.where(x_patch, x), t_patch * mix + targets * (1 - mix)};
}

HlbOneCycleLR::HlbOneCycleLR(tg::optim::Optimizer& o, double max_lr, double div_factor,
                             double final_div_factor, int64_t total_steps, double pct_start)
    : LRScheduler(o), initial_(max_lr / div_factor), max_(max_lr),
      min_(max_lr / div_factor / final_div_factor), pct_(pct_start), total_(total_steps) {
  apply();
}

double HlbOneCycleLR::lr_at(int64_t t) const {
  const double up = static_cast<double>(total_) * pct_, tt = static_cast<double>(t);
  if (tt < up) return initial_ + (max_ - initial_) * tt / up;
  return max_ + (min_ - max_) * (tt - up) / (static_cast<double>(total_) * (1 - pct_));
}

EvalSet make_eval_set(const std::vector<float>& images, const std::vector<uint8_t>& labels,
                      int64_t n) {
  EvalSet e;
  e.n = n;
  int64_t chunk = std::min<int64_t>(n, 500);
  for (int64_t c = chunk; c >= 100; --c)
    if (n % c == 0) {
      chunk = c;
      break;
    }
  constexpr int64_t px = 3 * 32 * 32;
  for (int64_t s = 0; s < n; s += chunk) {
    const int64_t m = std::min(chunk, n - s);
    std::vector<float> v(images.begin() + s * px, images.begin() + (s + m) * px);
    e.images.push_back(Tensor::from_vector(v, tg::Shape{m, 3, 32, 32}).realize());
    e.labels.emplace_back(labels.begin() + s, labels.begin() + s + m);
  }
  return e;
}

struct HlbTrainer::Impl {
  using StepFn =
      std::function<std::pair<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&)>;
  using EmaFn = std::function<Tensor(const Tensor&)>;
  tg::TinyJit<StepFn> train_step, train_step_cutmix;
  std::unique_ptr<tg::TinyJit<EmaFn>> ema_update;
  Impl(StepFn plain, StepFn cutmix)
      : train_step(std::move(plain)), train_step_cutmix(std::move(cutmix)) {}
};

HlbTrainer::~HlbTrainer() = default;

HlbTrainer::HlbTrainer(const HlbConfig& config, std::vector<float> padded,
                       std::vector<uint8_t> labels, int64_t n, const Tensor& whitening)
    : config_(config), padded_(std::move(padded)), labels_(std::move(labels)), n_(n),
      whitening_(whitening), rng_(config.seed) {
  if (config_.batch > n_)
    throw tg::Error("cifar train: --batch " + std::to_string(config_.batch) + " is more than the " +
                    std::to_string(n_) + " training images");
  Tensor::manual_seed(config_.seed);
  model_ = std::make_unique<SpeedyResNet>(whitening_);
  const double bs = static_cast<double>(config_.batch);
  const double bias_lr = 1.76 * kBiasScaler / 512, non_bias_lr = 1.76 / 512;
  const double bias_decay = 1.08 * 6.45e-4 * bs / kBiasScaler, non_bias_decay = 1.08 * 6.45e-4 * bs;
  opt_bias_ = std::make_unique<tg::optim::SGD>(model_->bias_params(), 0.01, kMomentum, bias_decay,
                                               /*nesterov=*/true);
  opt_non_bias_ = std::make_unique<tg::optim::SGD>(model_->non_bias_params(), 0.01, kMomentum,
                                                   non_bias_decay, /*nesterov=*/true);
  auto one_cycle = [&](tg::optim::SGD& o, double max_lr) {
    return std::make_unique<HlbOneCycleLR>(o, max_lr, kDivFactor, 1 / (kDivFactor * kFinalLrRatio),
                                           config_.steps, kPctStart);
  };
  sched_bias_ = one_cycle(*opt_bias_, bias_lr);
  sched_non_bias_ = one_cycle(*opt_non_bias_, non_bias_lr);

  const double loss_scale = 512.0 / bs;
  // One jitted step without cutmix and one with (from kCutmixStart of the run): each a fixed
  // graph, so each captures once. `order` is the batch permutation cutmix draws patches from.
  auto make_step = [this, loss_scale](bool with_cutmix) {
    return [this, loss_scale, with_cutmix](const Tensor& x, const Tensor& y, const Tensor& order) {
      tg::Train train;
      opt_bias_->zero_grad();
      opt_non_bias_->zero_grad();
      Tensor images = augment(x);
      Tensor targets = y.one_hot(kClasses).cast(tg::dtypes::float32);
      if (with_cutmix) std::tie(images, targets) = hlb_cutmix(images, targets, order, kCutmixSize);
      const Tensor out = (*model_)(images);
      Tensor loss = (smoothed_cross_entropy(out, targets) * loss_scale).sum();
      loss.backward();
      const Tensor correct = out.detach().argmax(1).eq(y).cast(tg::dtypes::int32).sum();
      std::vector<Tensor> all{loss, correct};
      for (auto* o : {opt_bias_.get(), opt_non_bias_.get()}) {
        // Each gradient is read by the momentum buffer and the parameter's update.
        for (Tensor p : o->params())
          if (p.grad().defined()) p.set_grad(p.grad().contiguous());
        for (const Tensor& t : o->schedule_step()) all.push_back(t);
      }
      Tensor::realize_all(all);
      return std::pair<Tensor, Tensor>{loss, correct};
    };
  };
  impl_ = std::make_unique<Impl>(make_step(false), make_step(true));
  order_.resize(static_cast<size_t>(n_));
  std::iota(order_.begin(), order_.end(), 0);
  std::shuffle(order_.begin(), order_.end(), rng_);
}

HlbTrainer::StepResult HlbTrainer::step(int64_t i) {
  const int64_t b = config_.batch, img = 3 * kPadded * kPadded;
  // A new shuffle each epoch; the tail that does not fill a batch waits for the next one.
  if (cursor_ + b > n_) {
    std::shuffle(order_.begin(), order_.end(), rng_);
    cursor_ = 0;
  }
  std::vector<float> px(static_cast<size_t>(b * img));
  std::vector<int32_t> lab(static_cast<size_t>(b));
  for (int64_t k = 0; k < b; ++k) {
    const int64_t j = order_[static_cast<size_t>(cursor_ + k)];
    std::copy(padded_.begin() + j * img, padded_.begin() + (j + 1) * img, px.begin() + k * img);
    lab[static_cast<size_t>(k)] = labels_[static_cast<size_t>(j)];
  }
  cursor_ += b;
  const Tensor x = Tensor::from_vector(px, tg::Shape{b, 3, kPadded, kPadded});
  const Tensor y = Tensor::from_vector(lab, tg::Shape{b});
  std::vector<int32_t> perm(static_cast<size_t>(b));
  std::iota(perm.begin(), perm.end(), 0);
  const bool cutmix = config_.cutmix &&
                      i >= static_cast<int64_t>(kCutmixStart * static_cast<double>(config_.steps));
  if (cutmix) std::shuffle(perm.begin(), perm.end(), rng_);
  const Tensor order = Tensor::from_vector(perm, tg::Shape{b});
  auto [loss, correct] =
      cutmix ? impl_->train_step_cutmix(x, y, order) : impl_->train_step(x, y, order);
  StepResult r{loss.item<float>(),
               100.0f * static_cast<float>(correct.item<int32_t>()) / static_cast<float>(b)};
  sched_bias_->step();
  sched_non_bias_->step();

  const auto ema_start = static_cast<int64_t>(kEmaStart * static_cast<double>(config_.steps));
  if (config_.ema && i > ema_start && (i + 1) % kEmaEvery == 0) {
    if (!ema_) {
      ema_ = std::make_unique<SpeedyResNet>(whitening_);
      const auto src = model_->get_state_dict();
      for (auto& [name, t] : ema_->get_state_dict()) t.assign(src.at(name).detach().contiguous());
      std::vector<Tensor> state;
      for (auto& [name, t] : ema_->get_state_dict()) state.push_back(t);
      Tensor::realize_all(state);
      impl_->ema_update = std::make_unique<tg::TinyJit<Impl::EmaFn>>([this](const Tensor& d) {
        const auto now = model_->get_state_dict();
        std::vector<Tensor> out;
        for (auto& [name, t] : ema_->get_state_dict()) {
          const Tensor s = now.at(name).detach();
          out.push_back(t.assign(t.detach() * d + s * (1.0 - d)));
        }
        Tensor::realize_all(out);
        return out.front();
      });
    }
    const double decay =
        std::pow(kEmaDecayBase, kEmaEvery) *
        std::pow(static_cast<double>(i) / static_cast<double>(config_.steps), kEmaDecayPow);
    (*impl_->ema_update)(
        Tensor::from_vector(std::vector<float>{static_cast<float>(decay)}, tg::Shape{1}));
  }
  return r;
}

// The recipe evaluates in training mode (batch statistics), with the mirrored images averaged.
double HlbTrainer::accuracy(const EvalSet& test, bool ema) const {
  const SpeedyResNet& m = ema && ema_ ? *ema_ : *model_;
  tg::Train train;
  int64_t correct = 0;
  for (size_t c = 0; c < test.images.size(); ++c) {
    const std::vector<int32_t> pred = m(test.images[c], true).argmax(1).to_vector<int32_t>();
    for (size_t k = 0; k < pred.size(); ++k) correct += pred[k] == test.labels[c][k];
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(test.n);
}

} // namespace tinyrun
