#pragma once
// The CIFAR-10 images `tinyrun cifar` trains and evaluates on, from a folder of binary batches:
// training records from every `data_batch_*.bin` (the official data_batch_1..5.bin, or the
// shared data's data_batch_1_0000-0999.bin ...), in name order; test records from
// `test_batch.bin`, or when it is absent, the last `holdout` training records held out.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "tg/cifar.hpp"
#include "tg/tensor.hpp"

namespace tinyrun {

struct CifarSplit {
  tg::data::CifarBatch train, test;
  std::string train_from, test_from; // for the progress display
};

// The data folder's cifar/ ($TG_DATA_DIR, else ../shared/data beside the repository, else
// ~/.cache/tg), or tg::Error saying where it looked.
std::filesystem::path default_cifar_dir();

// `test_name`: a file in `dir` to test on instead of test_batch.bin ("" for the default).
CifarSplit load_cifar(const std::filesystem::path& dir, int64_t holdout,
                      const std::string& test_name = "");

// Pixels 0..255 as float, normalised by CIFAR-10's channel mean and std (the recipe's
// transform), (n, 3, 32, 32) row-major.
std::vector<float> normalise(const tg::data::CifarBatch& b);

// Each normalised image reflect-padded by `pad` pixels on every side (hlb's pad_reflect), so
// random 32x32 crops can be taken on the device: (n, 3, 32 + 2 pad, 32 + 2 pad).
std::vector<float> reflect_pad(const std::vector<float>& images, int64_t n, int64_t pad);

} // namespace tinyrun
