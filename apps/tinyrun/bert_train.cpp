#include "bert_train.hpp"

#include <cmath>
#include <functional>
#include <numeric>

#include "tg/error.hpp"
#include "tg/jit.hpp"

namespace tinyrun {

using tg::Error;
using tg::Tensor;

BertConfig BertTrainConfig::bert() const {
  BertConfig c;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.num_hidden_layers = layers;
  c.num_attention_heads = heads;
  c.intermediate_size = intermediate > 0 ? intermediate : 4 * hidden;
  c.max_position_embeddings = max_positions;
  c.type_vocab_size = 2;
  c.layer_norm_eps = 1e-12;
  c.hidden_act = "gelu";
  return c;
}

void BertTrainConfig::validate() const {
  const std::string op = "bert train: ";
  if (hidden % heads != 0)
    throw Error(op + "--hidden " + std::to_string(hidden) + " is not divisible by --heads " +
                std::to_string(heads));
  if (seq > max_positions)
    throw Error(op + "--seq " + std::to_string(seq) + " is longer than the model's " +
                std::to_string(max_positions) + " positions (max_position_embeddings)");
  if (seq < 4) throw Error(op + "--seq must be at least 4 ([CLS], two tokens, [SEP])");
  if (masked < 1 || masked > seq - 2)
    throw Error(op + "--masked " + std::to_string(masked) +
                " must be between 1 and --seq - 2 = " + std::to_string(seq - 2));
  if (vocab < 200) throw Error(op + "--vocab must be at least 200 (BERT's special ids reach 103)");
}

Tensor truncated_normal(const tg::Shape& shape, double std) {
  const Tensor a = Tensor::randn(shape), b = Tensor::randn(shape);
  const Tensor pick = (a.abs() <= 2).where(a, (b.abs() <= 2).where(b, b.clamp(-2.0, 2.0)));
  return (pick * std).contiguous();
}

PolynomialDecayWithWarmup::PolynomialDecayWithWarmup(tg::optim::Optimizer& o, double lr,
                                                     int64_t steps, int64_t warmup, double power)
    : LRScheduler(o), lr_(lr), power_(power), steps_(steps), warmup_(std::min(warmup, steps)) {
  if (steps < 1 || warmup < 1)
    throw Error("PolynomialDecayWithWarmup: steps and warmup must be >= 1");
  apply();
}

double PolynomialDecayWithWarmup::lr_at(int64_t t) const {
  const auto tt = static_cast<double>(t), w = static_cast<double>(warmup_);
  if (t <= warmup_) return tt / w * lr_;
  const double x = 1 - (tt - w) / (static_cast<double>(steps_) - w + 1);
  return lr_ * std::pow(x, power_);
}

struct BertTrainer::Impl {
  using StepFn = std::function<std::pair<Tensor, Tensor>(
      const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
      const Tensor&)>;
  tg::TinyJit<StepFn> train_step;
  explicit Impl(StepFn f) : train_step(std::move(f)) {}
};

BertTrainer::~BertTrainer() = default;

BertTrainer::BertTrainer(const BertTrainConfig& config) : config_(config), rng_(config.seed) {
  config_.validate();
  Tensor::manual_seed(config_.seed);
  model_ = std::make_unique<BertForPreTraining>(config_.bert(), config_.dropout);
  std::vector<Tensor> wd, no_wd;
  for (auto [name, t] : model_->named_state()) {
    if (!t.requires_grad()) continue;
    const bool norm = name.find("LayerNorm") != std::string::npos;
    const bool bias = name.find("bias") != std::string::npos;
    if (!norm && !bias)
      t.assign(truncated_normal(t.shape(), 0.02));
    else if (bias)
      t.assign(Tensor::zeros_like(t));
    t.realize();
    (norm || bias ? no_wd : wd).push_back(t);
  }
  const double lr =
      config_.lr > 0 ? config_.lr : 0.000175 * std::sqrt(static_cast<double>(config_.batch) / 96);
  opt_wd_ = std::make_unique<tg::optim::LAMB>(wd, lr, 0.9, 0.999, 1e-6, 0.01);
  opt_no_wd_ = std::make_unique<tg::optim::LAMB>(no_wd, lr, 0.9, 0.999, 1e-6, 0.0);
  sched_wd_ =
      std::make_unique<PolynomialDecayWithWarmup>(*opt_wd_, lr, config_.steps, config_.warmup);
  sched_no_wd_ =
      std::make_unique<PolynomialDecayWithWarmup>(*opt_no_wd_, lr, config_.steps, config_.warmup);
  impl_ = std::make_unique<Impl>([this](const Tensor& ids, const Tensor& types, const Tensor& mask,
                                        const Tensor& positions, const Tensor& labels,
                                        const Tensor& weights, const Tensor& nsp) {
    tg::Train train;
    opt_wd_->zero_grad();
    opt_no_wd_->zero_grad();
    const PretrainingOutput out = (*model_)(ids, types, mask, positions);
    Tensor loss = model_->loss(out, labels, weights, nsp)[0];
    loss.backward();
    Tensor sq = Tensor::zeros({});
    std::vector<tg::optim::Optimizer*> opts{opt_wd_.get(), opt_no_wd_.get()};
    for (auto* o : opts)
      for (const Tensor& p : o->params())
        if (p.grad().defined()) sq = sq + p.grad().square().sum();
    const Tensor norm = sq.sqrt().contiguous();
    for (auto* o : opts)
      for (Tensor p : o->params())
        if (p.grad().defined())
          p.set_grad((norm > 1.0).where(p.grad() / norm, p.grad()).contiguous());
    std::vector<Tensor> all{loss, norm};
    for (auto* o : opts)
      for (const Tensor& t : o->schedule_step()) all.push_back(t);
    Tensor::realize_all(all);
    return std::pair<Tensor, Tensor>{loss, norm};
  });
}

BertTrainer::StepResult BertTrainer::step() {
  const int64_t b = config_.batch, s = config_.seq, m = config_.masked;
  constexpr int32_t kCls = 101, kSep = 102, kMask = 103, kFirstWord = 1000;
  std::uniform_int_distribution<int32_t> word(kFirstWord, static_cast<int32_t>(config_.vocab - 1));
  std::vector<int32_t> ids(static_cast<size_t>(b * s)), types(static_cast<size_t>(b * s));
  std::vector<int32_t> mask(static_cast<size_t>(b * s), 1), pos(static_cast<size_t>(b * m));
  std::vector<int32_t> labels(static_cast<size_t>(b * m)), nsp(static_cast<size_t>(b));
  std::vector<float> weights(static_cast<size_t>(b * m), 1.0f);
  std::vector<int32_t> slots(static_cast<size_t>(s - 2));
  for (int64_t i = 0; i < b; ++i) {
    int32_t* row = ids.data() + i * s;
    for (int64_t j = 0; j < s; ++j) row[j] = word(rng_);
    row[0] = kCls;
    row[s / 2] = kSep;
    row[s - 1] = kSep;
    for (int64_t j = s / 2 + 1; j < s; ++j) types[static_cast<size_t>(i * s + j)] = 1;
    // M distinct positions among the tokens (not [CLS] or the last [SEP]).
    std::iota(slots.begin(), slots.end(), 1);
    std::shuffle(slots.begin(), slots.end(), rng_);
    for (int64_t k = 0; k < m; ++k) {
      const int32_t p = slots[static_cast<size_t>(k)];
      pos[static_cast<size_t>(i * m + k)] = p;
      labels[static_cast<size_t>(i * m + k)] = row[p];
      row[p] = kMask;
    }
    nsp[static_cast<size_t>(i)] = static_cast<int32_t>(rng_() & 1);
  }
  auto t2 = [](const std::vector<int32_t>& v, int64_t r, int64_t c) {
    return Tensor::from_vector(v, tg::Shape{r, c});
  };
  auto [loss, norm] = impl_->train_step(
      t2(ids, b, s), t2(types, b, s), t2(mask, b, s), t2(pos, b, m), t2(labels, b, m),
      Tensor::from_vector(weights, tg::Shape{b, m}), t2(nsp, b, 1));
  StepResult r{loss.item<float>(), norm.item<float>(), static_cast<float>(opt_wd_->lr())};
  sched_wd_->step();
  sched_no_wd_->step();
  return r;
}

} // namespace tinyrun
