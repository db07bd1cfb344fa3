#include "cifar_data.hpp"

#include <algorithm>
#include <optional>

#include "tg/data.hpp"
#include "tg/error.hpp"

namespace tinyrun {

namespace fs = std::filesystem;
using tg::Error;
using tg::data::CifarBatch;
using tg::data::kCifarImageBytes;
using tg::data::kCifarSide;

namespace {

constexpr double kMean[3] = {0.4913997551666284, 0.48215855929893703, 0.4465309133731618};
constexpr double kStd[3] = {0.24703225141799082, 0.24348516474564, 0.26158783926049628};

const char* kGetIt = "CIFAR-10's binary version (cifar-10-binary.tar.gz from "
                     "https://www.cs.toronto.edu/~kriz/cifar.html) unpacks to data_batch_1.bin ... "
                     "data_batch_5.bin and test_batch.bin; put them in one folder and pass "
                     "--data DIR";

CifarBatch slice(const CifarBatch& b, int64_t begin, int64_t end) {
  CifarBatch out;
  out.n = end - begin;
  out.labels.assign(b.labels.begin() + begin, b.labels.begin() + end);
  out.pixels.assign(b.pixels.begin() + begin * kCifarImageBytes,
                    b.pixels.begin() + end * kCifarImageBytes);
  return out;
}

} // namespace

fs::path default_cifar_dir() {
  std::optional<fs::path> d = tg::data::data_dir(TG_SOURCE_DIR);
  if (!d) d = tg::data::data_dir(fs::current_path());
  if (!d)
    throw Error("cifar: no data folder found and no --data DIR given (the data folder is "
                "$TG_DATA_DIR, else ../shared/data next to the repository, else ~/.cache/tg; "
                "CIFAR-10 lives in its cifar/ subfolder). " +
                std::string(kGetIt));
  return *d / "cifar";
}

CifarSplit load_cifar(const fs::path& dir, int64_t holdout, const std::string& test_name) {
  if (!fs::is_directory(dir))
    throw Error("cifar: the data folder " + dir.string() + " does not exist. " + kGetIt);
  std::vector<fs::path> train_files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("data_batch_", 0) == 0 && e.path().extension() == ".bin")
      train_files.push_back(e.path());
  }
  std::sort(train_files.begin(), train_files.end());
  if (train_files.empty())
    throw Error("cifar: no training batches (data_batch_*.bin) in " + dir.string() + ". " + kGetIt);
  CifarSplit s;
  s.train = tg::data::read_cifar_batches(train_files);
  s.train_from = std::to_string(train_files.size()) + " data_batch files";
  const fs::path test = dir / (test_name.empty() ? "test_batch.bin" : test_name);
  if (!test_name.empty() || fs::exists(test)) {
    s.test = tg::data::read_cifar_batch(test);
    s.test_from = test.filename().string();
    return s;
  }
  if (holdout >= s.train.n)
    throw Error("cifar: " + std::to_string(s.train.n) + " training images in " + dir.string() +
                " and no test_batch.bin: holding out " + std::to_string(holdout) +
                " leaves nothing to train on (use a smaller --holdout)");
  s.test = slice(s.train, s.train.n - holdout, s.train.n);
  s.train = slice(s.train, 0, s.train.n - holdout);
  s.test_from = "the last " + std::to_string(holdout) + " training images (held out)";
  return s;
}

std::vector<float> normalise(const CifarBatch& b) {
  std::vector<float> out(b.pixels.size());
  constexpr int64_t plane = kCifarSide * kCifarSide;
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t c = (i / plane) % 3;
    out[i] = static_cast<float>((b.pixels[i] / 255.0 - kMean[c]) / kStd[c]);
  }
  return out;
}

std::vector<float> reflect_pad(const std::vector<float>& images, int64_t n, int64_t pad) {
  const int64_t s = kCifarSide, p = s + 2 * pad;
  std::vector<float> out(static_cast<size_t>(n * 3 * p * p));
  auto reflect = [s](int64_t i) { return i < 0 ? -i : (i >= s ? 2 * (s - 1) - i : i); };
  for (int64_t k = 0; k < n * 3; ++k)
    for (int64_t y = 0; y < p; ++y)
      for (int64_t x = 0; x < p; ++x)
        out[static_cast<size_t>((k * p + y) * p + x)] =
            images[static_cast<size_t>((k * s + reflect(y - pad)) * s + reflect(x - pad))];
  return out;
}

} // namespace tinyrun
