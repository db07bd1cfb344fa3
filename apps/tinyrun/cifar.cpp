// `tinyrun cifar train|eval|bench` (see cifar.hpp).
#include "cifar.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>

#include "cifar_data.hpp"
#include "cifar_model.hpp"
#include "cifar_train.hpp"
#include "graph_model.hpp"
#include "options.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/safetensors.hpp"
#include "torch_bench.hpp"

namespace tinyrun {

namespace {

namespace fs = std::filesystem;
using tg::Error;
using tg::Tensor;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int train(const std::vector<std::string>& args) {
  const Options opt(
      "cifar train", args,
      {"steps", "batch", "seed", "data", "save", "holdout", "eval-every", "ema", "cutmix"});
  HlbConfig cfg;
  cfg.steps = opt.integer("steps", 200, 1);
  cfg.batch = opt.integer("batch", 256, 1);
  cfg.seed = static_cast<uint64_t>(opt.integer("seed", 201, 0));
  cfg.ema = opt.integer("ema", 1, 0, 1) != 0;
  cfg.cutmix = opt.integer("cutmix", 1, 0, 1) != 0;
  const int64_t holdout = opt.integer("holdout", 500, 1);
  const int64_t eval_every = opt.integer("eval-every", 0, 0);
  const fs::path dir = opt.has("data") ? fs::path(opt.str("data", "")) : default_cifar_dir();

  const CifarSplit data = load_cifar(dir, holdout);
  std::printf("cifar: %lld training images (%s), %lld test images (%s) from %s\n",
              static_cast<long long>(data.train.n), data.train_from.c_str(),
              static_cast<long long>(data.test.n), data.test_from.c_str(), dir.string().c_str());
  const std::vector<float> train_images = normalise(data.train);
  const Tensor whitening = whitening_filter(train_images, data.train.n);
  HlbTrainer trainer(cfg, reflect_pad(train_images, data.train.n, 2), data.train.labels,
                     data.train.n, whitening);
  const EvalSet test = make_eval_set(normalise(data.test), data.test.labels, data.test.n);
  std::printf("training hlb_cifar10 %lld steps, batch %lld, seed %llu%s%s\n",
              static_cast<long long>(cfg.steps), static_cast<long long>(cfg.batch),
              static_cast<unsigned long long>(cfg.seed), cfg.ema ? ", EMA" : "",
              cfg.cutmix ? ", cutmix" : "");
  std::fflush(stdout);

  const bool tty = isatty(fileno(stdout)) != 0;
  double train_s = 0;
  for (int64_t i = 0; i < cfg.steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const HlbTrainer::StepResult r = trainer.step(i);
    train_s += seconds_since(t0);
    const bool last = i + 1 == cfg.steps;
    char line[200];
    std::snprintf(line, sizeof line,
                  "step %lld/%lld  loss %.3f  train accuracy %.1f%%  %.1f images/s",
                  static_cast<long long>(i + 1), static_cast<long long>(cfg.steps),
                  static_cast<double>(r.loss), static_cast<double>(r.accuracy),
                  static_cast<double>((i + 1) * cfg.batch) / train_s);
    if (tty)
      std::printf("\r%s\033[K", line);
    else if ((i + 1) % 10 == 0 || i == 0 || last)
      std::printf("%s\n", line);
    if (eval_every > 0 && (i + 1) % eval_every == 0 && !last) {
      std::printf(
          "%sstep %lld: test accuracy %.2f%%%s\n", tty ? "\n" : "", static_cast<long long>(i + 1),
          trainer.accuracy(test, false),
          trainer.has_ema()
              ? (", EMA " + std::to_string(trainer.accuracy(test, true)).substr(0, 5) + "%").c_str()
              : "");
    }
    std::fflush(stdout);
  }
  if (tty) std::printf("\n");
  const double acc = trainer.accuracy(test, false);
  std::printf("model test accuracy: %.2f%%\n", acc);
  double final_acc = acc;
  if (trainer.has_ema()) {
    final_acc = trainer.accuracy(test, true);
    std::printf("EMA test accuracy: %.2f%%\n", final_acc);
  }
  std::printf("test accuracy: %.2f%%\n", final_acc);
  if (opt.has("save")) {
    const fs::path out = opt.str("save", "");
    tg::safe_save(trainer.model().get_state_dict(), out,
                  {{"model", "hlb_cifar10"}, {"steps", std::to_string(cfg.steps)}});
    std::printf("saved the model to %s\n", out.string().c_str());
  }
  return 0;
}

// The test batch of `dir`: --test NAME, else test_batch.bin, else the shared first 8 images.
tg::data::CifarBatch eval_batch(const fs::path& dir, const Options& opt) {
  if (opt.has("test")) return tg::data::read_cifar_batch(dir / opt.str("test", ""));
  for (const char* name : {"test_batch.bin", "test_batch_first8.bin"})
    if (fs::exists(dir / name)) return tg::data::read_cifar_batch(dir / name);
  throw Error("cifar eval: no test_batch.bin (or test_batch_first8.bin) in " + dir.string() +
              "; pass --data DIR or --test NAME");
}

void print_rows(const std::vector<float>& probs, int64_t n, int64_t show, const char* what) {
  for (int64_t i = 0; i < std::min(n, show); ++i) {
    std::printf("%s %lld:", what, static_cast<long long>(i));
    for (int64_t c = 0; c < 10; ++c) std::printf(" %.6f", static_cast<double>(probs[i * 10 + c]));
    std::printf("\n");
  }
}

int eval(const std::vector<std::string>& args) {
  const Options opt("cifar eval", args, {"model", "graph", "data", "test", "show"});
  std::optional<fs::path> models = tg::data::data_dir(TG_SOURCE_DIR);
  const fs::path model_path =
      opt.has("model") ? fs::path(opt.str("model", ""))
                       : (models ? *models / "models" / "resnet8_cifar10_mlperf_tiny.safetensors"
                                 : fs::path("resnet8_cifar10_mlperf_tiny.safetensors"));
  if (!fs::is_regular_file(model_path))
    throw Error("cifar eval: the model " + model_path.string() +
                " does not exist (--model FILE.safetensors: the MLPerf Tiny ResNet-8 with its "
                ".graph.json beside it, or a state written by `tinyrun cifar train --save`)");
  fs::path graph_path = opt.str("graph", "");
  if (graph_path.empty()) {
    fs::path g = model_path;
    g.replace_extension(".graph.json");
    if (fs::exists(g)) graph_path = g;
  }
  const fs::path dir = opt.has("data") ? fs::path(opt.str("data", "")) : default_cifar_dir();
  const tg::data::CifarBatch b = eval_batch(dir, opt);
  const int64_t show = opt.integer("show", 0, 0);

  std::vector<int32_t> pred(static_cast<size_t>(b.n));
  constexpr int64_t kChunk = 500;
  if (!graph_path.empty()) {
    const GraphModel model = GraphModel::load(model_path, graph_path);
    std::printf("model: %s (layer graph %s), input raw pixels 0..255 NHWC\n",
                model_path.string().c_str(), graph_path.string().c_str());
    std::vector<float> probs, logits;
    for (int64_t s = 0; s < b.n; s += kChunk) {
      const int64_t m = std::min(kChunk, b.n - s);
      std::vector<float> px(b.pixels.begin() + s * 3072, b.pixels.begin() + (s + m) * 3072);
      // CIFAR's records are CHW planes; the graph takes NHWC.
      const Tensor x = Tensor::from_vector(px, tg::Shape{m, 3, 32, 32}).permute({0, 2, 3, 1});
      Tensor lg;
      const Tensor p = model(x, &lg);
      const std::vector<float> pv = p.reshape({m, -1}).to_vector<float>();
      probs.insert(probs.end(), pv.begin(), pv.end());
      if (lg.defined()) {
        const std::vector<float> lv = lg.reshape({m, -1}).to_vector<float>();
        logits.insert(logits.end(), lv.begin(), lv.end());
      }
    }
    if (static_cast<int64_t>(probs.size()) != b.n * 10)
      throw Error("cifar eval: the model does not output 10 classes per image");
    for (int64_t i = 0; i < b.n; ++i)
      pred[static_cast<size_t>(i)] = static_cast<int32_t>(
          std::max_element(probs.begin() + i * 10, probs.begin() + (i + 1) * 10) -
          (probs.begin() + i * 10));
    print_rows(probs, b.n, show, "probabilities");
    if (!logits.empty()) print_rows(logits, b.n, show, "logits");
  } else {
    const tg::SafetensorsFile f = tg::safe_load(model_path);
    std::map<std::string, Tensor> state(f.tensors.begin(), f.tensors.end());
    auto w = state.find("whitening");
    if (w == state.end())
      throw Error("cifar eval: " + model_path.string() +
                  " has no layer graph beside it (.graph.json) and is not an hlb_cifar10 state "
                  "(no 'whitening' tensor); pass --graph FILE for a layer-graph model");
    SpeedyResNet model(w->second);
    try {
      model.load_state_dict(state, true);
    } catch (const Error& e) {
      throw Error("cifar eval: " + model_path.string() +
                  " is not an hlb_cifar10 state: " + e.what());
    }
    std::printf("model: %s (hlb_cifar10)\n", model_path.string().c_str());
    const EvalSet set = make_eval_set(normalise(b), b.labels, b.n);
    size_t k = 0;
    for (size_t c = 0; c < set.images.size(); ++c)
      for (int32_t p : model(set.images[c], true).argmax(1).to_vector<int32_t>()) pred[k++] = p;
  }
  int64_t correct = 0;
  for (int64_t i = 0; i < b.n; ++i)
    correct += pred[static_cast<size_t>(i)] == b.labels[static_cast<size_t>(i)];
  std::printf("%lld images\n", static_cast<long long>(b.n));
  std::printf("test accuracy: %.2f%%\n",
              100.0 * static_cast<double>(correct) / static_cast<double>(b.n));
  return 0;
}

// Training steps on random images of CIFAR's shape after 2 warm-up steps (compiling, then
// recording the jit), beside bench/cifar_torch.py's PyTorch step.
int bench(const std::vector<std::string>& args) {
  const Options opt("cifar bench", args, {"steps", "batch", "seed", "python"});
  const int64_t steps = opt.integer("steps", 5, 1);
  const int64_t batch = opt.integer("batch", 256, 1);
  const int64_t seed = opt.integer("seed", 0, 0);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  const int64_t n = batch;
  tg::data::CifarBatch b;
  b.n = n;
  b.pixels.resize(static_cast<size_t>(n * 3072));
  b.labels.resize(static_cast<size_t>(n));
  std::uniform_int_distribution<int> pixel(0, 255), label(0, 9);
  for (uint8_t& p : b.pixels) p = static_cast<uint8_t>(pixel(rng));
  for (uint8_t& l : b.labels) l = static_cast<uint8_t>(label(rng));
  const std::vector<float> images = normalise(b);
  HlbConfig cfg;
  cfg.steps = steps + 2;
  cfg.batch = batch;
  cfg.seed = static_cast<uint64_t>(seed);
  cfg.ema = false;
  cfg.cutmix = false; // the PyTorch step beside it has none
  HlbTrainer trainer(cfg, reflect_pad(images, n, 2), b.labels, n, whitening_filter(images, n));
  trainer.step(0);
  trainer.step(1);
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i) trainer.step(i + 2);
  const double ms = 1000 * seconds_since(t0) / static_cast<double>(steps);
  std::printf("tinygrad-cpp hlb_cifar10 training step, batch %lld, %lld steps after 2 warm-up\n",
              static_cast<long long>(batch), static_cast<long long>(steps));
  std::printf("ms/step: %.1f\n", ms);
  std::printf("images/s: %.1f\n", static_cast<double>(batch) * 1000 / ms);
  run_torch_beside(opt.str("python", "/usr/bin/python3"), "cifar_torch.py",
                   "--steps " + std::to_string(steps) + " --batch " + std::to_string(batch), ms);
  return 0;
}

void usage(FILE* to) {
  std::fprintf(
      to, "usage: tinyrun cifar train [--steps 200] [--batch 256] [--seed 201] [--data DIR]\n"
          "                           [--holdout 500] [--eval-every 0] [--ema 1] [--cutmix 1]\n"
          "                           [--save FILE.safetensors]\n"
          "       tinyrun cifar eval [--model FILE.safetensors] [--graph FILE.graph.json]\n"
          "                          [--data DIR] [--test NAME] [--show N]\n"
          "       tinyrun cifar bench [--steps 5] [--batch 256] [--python /usr/bin/python3]\n"
          "DIR defaults to the data folder's cifar/ ($TG_DATA_DIR, else ../shared/data);\n"
          "it holds data_batch_*.bin and test_batch.bin (without it, --holdout images of\n"
          "the training batches are the test set).\n");
}

} // namespace

int cifar_command(const std::vector<std::string>& args) {
  return dispatch_subcommand("tinyrun cifar", args,
                             {{"train", train}, {"eval", eval}, {"bench", bench}}, usage);
}

} // namespace tinyrun
