// CIFAR-10 binary batches: a pure parse of the bytes and the read of files (tg/cifar.hpp).
// The record count comes from the file's size, never from a header, so the only allocation is
// the size of the bytes already in memory.
#include "tg/cifar.hpp"

#include <algorithm>
#include <new>

#include "file_bytes.hpp"
#include "tg/checked.hpp"
#include "tg/error.hpp"

namespace tg::data {

CifarBatch parse_cifar_batch(std::span<const uint8_t> file, const std::string& origin) {
  const uint64_t record = kCifarRecordBytes;
  if (file.empty())
    throw_parse_error(origin, "size", "0 bytes",
                      "empty: a CIFAR-10 batch holds records of 3073 bytes (a label byte and "
                      "3072 bytes of RGB planes)");
  const uint64_t size = file.size();
  if (size % record != 0) {
    const uint64_t whole = size / record;
    throw_parse_error(origin, "size", std::to_string(size) + " bytes",
                      "truncated: not a whole number of 3073-byte records (" +
                          std::to_string(whole) + " whole records and " +
                          std::to_string(size % record) +
                          " bytes of a cut-off one); copy the file again");
  }
  const uint64_t n = size / record;
  CifarBatch b;
  b.n = parse_narrow<int64_t>(n, origin, "record count");
  try {
    b.labels.resize(n);
    b.pixels.resize(parse_mul(n, static_cast<uint64_t>(kCifarImageBytes), origin, "pixel bytes"));
  } catch (const std::bad_alloc&) {
    throw Error(origin + ": out of memory for " + std::to_string(n) + " CIFAR-10 images");
  }
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t* r = file.data() + i * record;
    if (r[0] >= kCifarClasses)
      throw_parse_error(origin, "record " + std::to_string(i) + " label", std::to_string(r[0]),
                        "mislabelled: CIFAR-10 labels are 0..9 (a CIFAR-100 batch, whose records "
                        "are 3074 bytes with two labels, is not CIFAR-10)");
    b.labels[i] = r[0];
    std::copy(r + 1, r + record, b.pixels.begin() + static_cast<std::ptrdiff_t>(i * (record - 1)));
  }
  return b;
}

CifarBatch read_cifar_batch(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) throw Error(path.string() + ": no such CIFAR-10 batch file");
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  return parse_cifar_batch(bytes, path.string());
}

CifarBatch read_cifar_batches(const std::vector<std::filesystem::path>& paths) {
  CifarBatch all;
  for (const auto& p : paths) {
    CifarBatch b = read_cifar_batch(p);
    all.n += b.n;
    all.labels.insert(all.labels.end(), b.labels.begin(), b.labels.end());
    all.pixels.insert(all.pixels.end(), b.pixels.begin(), b.pixels.end());
  }
  return all;
}

} // namespace tg::data
