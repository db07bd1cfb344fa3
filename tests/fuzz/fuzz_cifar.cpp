// libFuzzer target: the CIFAR-10 batch parse (tg/cifar.hpp parse_cifar_batch) on arbitrary
// bytes. A tg::Error is the expected answer to a malformed file; anything else is a finding, as
// is an accepted batch whose records differ from the input (count, labels, pixels).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tg/cifar.hpp"
#include "tg/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tg::data::CifarBatch b;
  try {
    b = tg::data::parse_cifar_batch({data, size}, "fuzz.cifar");
  } catch (const tg::Error&) {
    return 0;
  }
  using tg::data::kCifarImageBytes;
  using tg::data::kCifarRecordBytes;
  const auto n = static_cast<size_t>(b.n);
  if (n == 0 || n * kCifarRecordBytes != size || b.labels.size() != n ||
      b.pixels.size() != n * kCifarImageBytes)
    std::abort();
  for (size_t i = 0; i < n; ++i) {
    if (b.labels[i] != data[i * kCifarRecordBytes] || b.labels[i] >= tg::data::kCifarClasses)
      std::abort();
    if (std::memcmp(b.pixels.data() + i * kCifarImageBytes, data + i * kCifarRecordBytes + 1,
                    kCifarImageBytes) != 0)
      std::abort();
  }
  return 0;
}
