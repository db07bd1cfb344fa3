// libFuzzer target: the gzip path of the IDX parse. Mutated compressed bytes are mostly
// rejected by zlib's checksums before they reach the IDX reader, so this harness compresses
// the fuzzer's input itself: the IDX reader sees every header and body the fuzzer makes
// through real gzip streams, including ones that decompress to more (or less) than their
// header announces. The first input byte picks how: a single member, two concatenated members
// split at a point the input chooses, or the stream truncated.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tg/data.hpp"
#include "tg/error.hpp"

namespace {

std::vector<uint8_t> gzip(const uint8_t* data, size_t size) {
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  std::vector<uint8_t> out(deflateBound(&zs, size) + 64);
  zs.next_in = const_cast<uint8_t*>(data);
  zs.avail_in = static_cast<uInt>(size);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t mode = data[0] % 3, split_byte = data[1];
  data += 2, size -= 2;
  std::vector<uint8_t> file;
  if (mode == 0) {
    file = gzip(data, size);
  } else if (mode == 1) {
    const size_t cut = size * split_byte / 255;
    file = gzip(data, cut);
    const std::vector<uint8_t> second = gzip(data + cut, size - cut);
    file.insert(file.end(), second.begin(), second.end());
  } else {
    file = gzip(data, size);
    file.resize(file.size() * split_byte / 255);
  }
  tg::data::IdxArray a;
  try {
    a = tg::data::parse_idx(file, "fuzz.idx.gz");
  } catch (const tg::Error&) {
    return 0;
  }
  // Accepted: whole, and (when the stream was complete) exactly the bytes that went in.
  try {
    const auto n = static_cast<uint64_t>(a.numel());
    if (n * static_cast<uint64_t>(a.dtype.itemsize()) != a.bytes.size()) std::abort();
  } catch (const tg::Error&) {
    std::abort();
  }
  if (mode != 2 && a.bytes.size() + 4 + 4 * a.shape.size() != size) std::abort();
  return 0;
}
