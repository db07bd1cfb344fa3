#pragma once
// CIFAR-10's binary batches (data_batch_1.bin ... data_batch_5.bin, test_batch.bin): records of
// one label byte (0..9) and 3072 pixel bytes, the 32x32 red plane, then green, then blue. The
// parse of a file's bytes is pure (no tensor, no device: the fuzz target calls it); reading a
// file and concatenating batches sit on top. Every malformed input raises tg::Error naming the
// file, the record and what is wrong.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tg::data {

inline constexpr int64_t kCifarSide = 32;
inline constexpr int64_t kCifarChannels = 3;
inline constexpr int64_t kCifarImageBytes = kCifarChannels * kCifarSide * kCifarSide; // 3072
inline constexpr int64_t kCifarRecordBytes = 1 + kCifarImageBytes;                    // 3073
inline constexpr int64_t kCifarClasses = 10;

struct CifarBatch {
  int64_t n = 0;
  std::vector<uint8_t> labels; // n, each 0..9
  std::vector<uint8_t> pixels; // n * 3072, per image the R, G and B planes (CHW)
};

// The records of a CIFAR-10 binary batch. Raises for an empty file, a size that is not a whole
// number of 3073-byte records (truncated), and a label above 9 (mislabelled, or a CIFAR-100
// file, whose records carry two label bytes).
CifarBatch parse_cifar_batch(std::span<const uint8_t> file, const std::string& origin);

// Reads and parses one file; errors name it.
CifarBatch read_cifar_batch(const std::filesystem::path& path);

// Reads the files in order and concatenates their records.
CifarBatch read_cifar_batches(const std::vector<std::filesystem::path>& paths);

} // namespace tg::data
