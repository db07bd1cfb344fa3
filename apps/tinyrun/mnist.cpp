// `tinyrun mnist train|eval|bench`: tinygrad's beautiful_mnist on real digits (see mnist.hpp).
#include "mnist.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mnist_model.hpp"
#include "options.hpp"
#include "tg/data.hpp"
#include "tg/error.hpp"
#include "tg/jit.hpp"
#include "tg/optim.hpp"
#include "tg/safetensors.hpp"
#include "tg/tensor.hpp"

namespace tinyrun {

namespace {

namespace fs = std::filesystem;
using tg::Error;
using tg::Tensor;

constexpr int64_t kSide = 28, kPixels = kSide * kSide, kClasses = 10;

// ---- data -------------------------------------------------------------------------------

// The images as float pixels 0..255 (N*784) and the labels as int32 (N).
struct Digits {
  int64_t n = 0;
  std::vector<float> images;
  std::vector<int32_t> labels;
};

const char* kWhere = "the data folder is $TG_DATA_DIR, else ../shared/data next to the "
                     "repository (or the current directory), else ~/.cache/tg; MNIST lives in "
                     "its mnist/ subfolder";

fs::path default_data_dir() {
  std::optional<fs::path> d = tg::data::data_dir(TG_SOURCE_DIR);
  if (!d) d = tg::data::data_dir(fs::current_path());
  if (!d)
    throw Error(std::string("mnist: no data folder found and no --data DIR given (") + kWhere +
                ")");
  return *d / "mnist";
}

// The file `name` in `dir`, or for a default name the first of `candidates` that exists.
fs::path find_file(const fs::path& dir, const Options& opt, const std::string& option,
                   const std::vector<std::string>& candidates) {
  if (opt.has(option)) {
    const fs::path p = dir / opt.str(option, "");
    if (!fs::exists(p)) throw Error("mnist: " + p.string() + " (--" + option + ") does not exist");
    return p;
  }
  for (const std::string& c : candidates)
    if (fs::exists(dir / c)) return dir / c;
  std::string names;
  for (const std::string& c : candidates) names += (names.empty() ? "" : ", ") + c;
  throw Error("mnist: no " + option + " file in " + dir.string() + " (looked for " + names +
              "). Put the MNIST IDX files there (train8k-images-idx3-ubyte.gz, "
              "train8k-labels-idx1-ubyte.gz, test2k-images-idx3-ubyte.gz, "
              "test2k-labels-idx1-ubyte.gz, or the official train-*/t10k-* files, gzipped or "
              "not), or pass --data DIR; " +
              kWhere);
}

std::vector<std::string> with_gz(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& n : names) {
    out.push_back(n + ".gz");
    out.push_back(n);
  }
  return out;
}

Digits load_digits(const fs::path& images_path, const fs::path& labels_path) {
  const tg::data::IdxArray images = tg::data::read_idx(images_path);
  const tg::data::IdxArray labels = tg::data::read_idx(labels_path);
  if (images.dtype != tg::dtypes::uint8 || images.shape.size() != 3 || images.shape[1] != kSide ||
      images.shape[2] != kSide) {
    std::string shape;
    for (int64_t d : images.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    throw Error("mnist: " + images_path.string() +
                " must hold uint8 images of 28x28 (N, 28, 28); it holds " + images.dtype.name() +
                " of shape (" + shape + ")");
  }
  if (labels.dtype != tg::dtypes::uint8 || labels.shape.size() != 1)
    throw Error("mnist: " + labels_path.string() +
                " must hold one uint8 label per image (rank 1); it has rank " +
                std::to_string(labels.shape.size()) + " of " + labels.dtype.name());
  if (images.shape[0] != labels.shape[0])
    throw Error("mnist: mislabelled data: " + images_path.string() + " holds " +
                std::to_string(images.shape[0]) + " images but " + labels_path.string() +
                " holds " + std::to_string(labels.shape[0]) +
                " labels; the two files must be a pair");
  Digits d;
  d.n = images.shape[0];
  if (d.n == 0) throw Error("mnist: " + images_path.string() + " holds no images");
  d.images.assign(images.bytes.begin(), images.bytes.end());
  d.labels.resize(static_cast<size_t>(d.n));
  for (int64_t i = 0; i < d.n; ++i) {
    const uint8_t l = labels.bytes[static_cast<size_t>(i)];
    if (l >= kClasses)
      throw Error("mnist: " + labels_path.string() + ": label " + std::to_string(i) + " is " +
                  std::to_string(l) + "; digits are 0..9");
    d.labels[static_cast<size_t>(i)] = l;
  }
  return d;
}

// The test set as device tensors in chunks of at most `chunk` images, uploaded once.
struct TestChunks {
  std::vector<Tensor> images;
  std::vector<std::vector<int32_t>> labels;
  int64_t n = 0;
};

TestChunks upload_chunks(const Digits& d, int64_t chunk) {
  TestChunks t;
  t.n = d.n;
  for (int64_t s = 0; s < d.n; s += chunk) {
    const int64_t m = std::min(chunk, d.n - s);
    std::vector<float> px(d.images.begin() + s * kPixels, d.images.begin() + (s + m) * kPixels);
    t.images.push_back(Tensor::from_vector(px, tg::Shape{m, 1, kSide, kSide}).realize());
    t.labels.emplace_back(d.labels.begin() + s, d.labels.begin() + s + m);
  }
  return t;
}

// Test accuracy in percent, the model in evaluation mode (BatchNorm's running statistics).
double accuracy(const MnistModel& model, const TestChunks& test) {
  tg::Train eval(false);
  int64_t correct = 0;
  for (size_t c = 0; c < test.images.size(); ++c) {
    const std::vector<int32_t> pred = model(test.images[c]).argmax(1).to_vector<int32_t>();
    for (size_t i = 0; i < pred.size(); ++i) correct += pred[i] == test.labels[c][i];
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(test.n);
}

// Chunks of at most 500 test images that split `n` evenly where possible (one kernel set).
int64_t eval_chunk(int64_t n) {
  for (int64_t c = 500; c >= 100; --c)
    if (n % c == 0) return c;
  return std::min<int64_t>(n, 500);
}

std::unique_ptr<tg::optim::Optimizer> make_optimizer(const std::string& name,
                                                     std::vector<Tensor> params, double lr) {
  if (name == "adam") return std::make_unique<tg::optim::Adam>(std::move(params), lr);
  if (name == "adamw") return std::make_unique<tg::optim::AdamW>(std::move(params), lr);
  if (name == "sgd") return std::make_unique<tg::optim::SGD>(std::move(params), lr);
  throw Error("mnist: --optimizer must be adam, adamw or sgd, got '" + name + "'");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A batch of `batch` random training digits (with replacement, as tinygrad's
// Tensor.randint), gathered on the host.
std::pair<Tensor, Tensor> random_batch(const Digits& d, int64_t batch, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> pick(0, d.n - 1);
  std::vector<float> px(static_cast<size_t>(batch * kPixels));
  std::vector<int32_t> lab(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t i = pick(rng);
    std::copy(d.images.begin() + i * kPixels, d.images.begin() + (i + 1) * kPixels,
              px.begin() + b * kPixels);
    lab[static_cast<size_t>(b)] = d.labels[static_cast<size_t>(i)];
  }
  return {Tensor::from_vector(px, tg::Shape{batch, 1, kSide, kSide}),
          Tensor::from_vector(lab, tg::Shape{batch})};
}

// One training step as a single callable (tg::TinyJit wraps it): zero_grad, forward in
// training mode, loss, backward, the optimizer's update and the BatchNorm statistics, all
// realized together. Returns the loss.
auto make_train_step(MnistModel& model, tg::optim::Optimizer& opt) {
  return [&model, &opt, buffers = model.buffers()](const Tensor& x, const Tensor& y) -> Tensor {
    tg::Train train;
    opt.zero_grad();
    Tensor loss = model(x).sparse_categorical_crossentropy(y);
    loss.backward();
    // Each gradient is read by several updates (Adam's m, v and the parameter): made contiguous
    // it is computed once into its own buffer instead of once per reader.
    for (Tensor p : opt.params())
      if (p.grad().defined()) p.set_grad(p.grad().contiguous());
    std::vector<Tensor> out{loss};
    for (const Tensor& t : opt.schedule_step()) out.push_back(t);
    for (const Tensor& t : buffers) out.push_back(t);
    Tensor::realize_all(out);
    return loss;
  };
}

// ---- commands ---------------------------------------------------------------------------

int train(const std::vector<std::string>& args) {
  const Options opt("mnist train", args,
                    {"steps", "batch", "lr", "optimizer", "seed", "data", "save", "eval-every",
                     "train-images", "train-labels", "test-images", "test-labels"});
  const int64_t steps = opt.integer("steps", 70, 1);
  const int64_t batch = opt.integer("batch", 512, 1);
  const double lr = opt.real("lr", 1e-3);
  const std::string optimizer = opt.str("optimizer", "adam");
  const int64_t seed = opt.integer("seed", 0, 0);
  const int64_t eval_every = opt.integer("eval-every", 10, 1);
  const fs::path dir = opt.has("data") ? fs::path(opt.str("data", "")) : default_data_dir();
  if (!fs::is_directory(dir))
    throw Error("mnist: the data folder " + dir.string() +
                " does not exist. Put the MNIST IDX files (train8k-*, test2k-* or the official "
                "train-*/t10k-* files) there or pass --data DIR; " +
                kWhere);

  // Found in this order (images before labels, training before test), so the first missing
  // file is the one reported.
  const fs::path train_images = find_file(
      dir, opt, "train-images", with_gz({"train8k-images-idx3-ubyte", "train-images-idx3-ubyte"}));
  const fs::path train_labels = find_file(
      dir, opt, "train-labels", with_gz({"train8k-labels-idx1-ubyte", "train-labels-idx1-ubyte"}));
  const fs::path test_images = find_file(
      dir, opt, "test-images", with_gz({"test2k-images-idx3-ubyte", "t10k-images-idx3-ubyte"}));
  const fs::path test_labels = find_file(
      dir, opt, "test-labels", with_gz({"test2k-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"}));
  const Digits train_set = load_digits(train_images, train_labels);
  const Digits test_set = load_digits(test_images, test_labels);
  std::printf("mnist: %lld training and %lld test digits from %s\n",
              static_cast<long long>(train_set.n), static_cast<long long>(test_set.n),
              dir.string().c_str());

  Tensor::manual_seed(static_cast<uint64_t>(seed));
  MnistModel model;
  std::unique_ptr<tg::optim::Optimizer> o = make_optimizer(optimizer, model.get_parameters(), lr);
  // The whole step jitted: recorded on its second call, replayed after (JIT=0: never).
  tg::TinyJit train_step(make_train_step(model, *o));
  const TestChunks test = upload_chunks(test_set, eval_chunk(test_set.n));
  std::printf("training %lld steps, batch %lld, %s lr %g, seed %lld\n",
              static_cast<long long>(steps), static_cast<long long>(batch), optimizer.c_str(), lr,
              static_cast<long long>(seed));
  std::fflush(stdout);

  const bool tty = isatty(fileno(stdout)) != 0;
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  double train_s = 0, acc = -1;
  for (int64_t i = 1; i <= steps; ++i) {
    auto [x, y] = random_batch(train_set, batch, rng);
    const auto t0 = std::chrono::steady_clock::now();
    Tensor loss = train_step(x, y);
    train_s += seconds_since(t0);
    const bool eval_now = i % eval_every == 0 || i == steps;
    if (eval_now) acc = accuracy(model, test);
    if (tty || eval_now) {
      char accs[16] = "-", line[160];
      if (acc >= 0) std::snprintf(accs, sizeof accs, "%.2f%%", acc);
      std::snprintf(line, sizeof line, "step %lld/%lld  loss %.4f  test accuracy %s  %.2f steps/s",
                    static_cast<long long>(i), static_cast<long long>(steps),
                    static_cast<double>(loss.item<float>()), accs,
                    static_cast<double>(i) / train_s);
      if (tty)
        std::printf("\r%s\033[K", line);
      else
        std::printf("%s\n", line);
      std::fflush(stdout);
    }
  }
  if (tty) std::printf("\n");
  std::printf("test accuracy: %.2f%%\n", acc);
  if (opt.has("save")) {
    const fs::path out = opt.str("save", "");
    tg::safe_save(model.get_state_dict(), out,
                  {{"model", "beautiful_mnist"},
                   {"steps", std::to_string(steps)},
                   {"test_accuracy", std::to_string(acc)}});
    std::printf("saved the model to %s\n", out.string().c_str());
  }
  return 0;
}

int eval(const std::vector<std::string>& args) {
  const Options opt("mnist eval", args, {"weights", "data", "images", "labels"});
  if (!opt.has("weights")) throw Error("mnist eval: --weights FILE.safetensors is required");
  const fs::path weights = opt.str("weights", "");
  if (!fs::is_regular_file(weights))
    throw Error("mnist eval: the weights file " + weights.string() +
                " does not exist (write one with `tinyrun mnist train --save FILE`)");
  const fs::path dir = opt.has("data") ? fs::path(opt.str("data", "")) : default_data_dir();
  const fs::path images = find_file(
      dir, opt, "images", with_gz({"test2k-images-idx3-ubyte", "t10k-images-idx3-ubyte"}));
  const fs::path labels = find_file(
      dir, opt, "labels", with_gz({"test2k-labels-idx1-ubyte", "t10k-labels-idx1-ubyte"}));
  const Digits d = load_digits(images, labels);
  MnistModel model;
  const tg::SafetensorsFile file = tg::safe_load(weights);
  std::map<std::string, Tensor> state(file.tensors.begin(), file.tensors.end());
  try {
    model.load_state_dict(state, /*strict=*/true);
  } catch (const Error& e) {
    throw Error("mnist eval: " + weights.string() + " is not a beautiful_mnist state: " + e.what());
  }
  const double acc = accuracy(model, upload_chunks(d, eval_chunk(d.n)));
  std::printf("%lld digits\n", static_cast<long long>(d.n));
  std::printf("test accuracy: %.2f%%\n", acc);
  return 0;
}

// Training steps on random digits of MNIST's shape (pixels 0..255, labels 0..9): 3 warm-up
// steps (compiling every kernel), then `steps` timed ones.
int bench(const std::vector<std::string>& args) {
  const Options opt("mnist bench", args, {"steps", "batch", "seed"});
  const int64_t steps = opt.integer("steps", 10, 1);
  const int64_t batch = opt.integer("batch", 512, 1);
  const int64_t seed = opt.integer("seed", 0, 0);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  Digits d;
  d.n = 4096;
  d.images.resize(static_cast<size_t>(d.n * kPixels));
  d.labels.resize(static_cast<size_t>(d.n));
  std::uniform_int_distribution<int> pixel(0, 255), label(0, kClasses - 1);
  for (float& p : d.images) p = static_cast<float>(pixel(rng));
  for (int32_t& l : d.labels) l = label(rng);

  Tensor::manual_seed(static_cast<uint64_t>(seed));
  MnistModel model;
  tg::optim::Adam adam(model.get_parameters(), 1e-3);
  tg::TinyJit train_step(make_train_step(model, adam));
  for (int w = 0; w < 3; ++w) {
    auto [x, y] = random_batch(d, batch, rng);
    train_step(x, y).item<float>();
  }
  double total = 0;
  for (int64_t i = 0; i < steps; ++i) {
    auto [x, y] = random_batch(d, batch, rng); // built outside the timing
    const auto t0 = std::chrono::steady_clock::now();
    train_step(x, y).item<float>();
    total += seconds_since(t0);
  }
  const double ms = 1000 * total / static_cast<double>(steps);
  std::printf("tinygrad-cpp beautiful_mnist training step, batch %lld, %lld steps after 3 "
              "warm-up\n",
              static_cast<long long>(batch), static_cast<long long>(steps));
  std::printf("ms/step: %.1f\n", ms);
  std::printf("images/s: %.1f\n", static_cast<double>(batch) * 1000 / ms);
  return 0;
}

void usage(FILE* to) {
  std::fprintf(to,
               "usage: tinyrun mnist train [--steps 70] [--batch 512] [--lr 1e-3]\n"
               "                           [--optimizer adam|adamw|sgd] [--seed 0] [--data DIR]\n"
               "                           [--save FILE.safetensors] [--eval-every 10]\n"
               "                           [--train-images NAME --train-labels NAME\n"
               "                            --test-images NAME --test-labels NAME]\n"
               "       tinyrun mnist eval --weights FILE [--data DIR] [--images NAME --labels "
               "NAME]\n"
               "       tinyrun mnist bench [--steps 10] [--batch 512] [--seed 0]\n"
               "DIR defaults to the data folder's mnist/ ($TG_DATA_DIR, else ../shared/data).\n");
}

} // namespace

int mnist_command(const std::vector<std::string>& args) {
  return dispatch_subcommand("tinyrun mnist", args,
                             {{"train", train}, {"eval", eval}, {"bench", bench}}, usage);
}

} // namespace tinyrun
