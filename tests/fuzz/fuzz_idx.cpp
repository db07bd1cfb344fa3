// libFuzzer target: the IDX parse (tg/data.hpp parse_idx) on arbitrary bytes, raw or (when they
// start with the gzip magic) gzipped. A tg::Error is the expected answer to a malformed file;
// anything else is a finding, as is an accepted array whose bytes differ from its shape.
#include <cstdint>
#include <cstdlib>

#include "tg/data.hpp"
#include "tg/error.hpp"

namespace {

// An accepted array is whole: its shape's element count fits (numel() does not throw) and its
// bytes are exactly that many elements.
void check_accepted(const tg::data::IdxArray& a) {
  try {
    const auto n = static_cast<uint64_t>(a.numel());
    if (n * static_cast<uint64_t>(a.dtype.itemsize()) != a.bytes.size()) std::abort();
  } catch (const tg::Error&) {
    std::abort();
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tg::data::IdxArray a;
  try {
    a = tg::data::parse_idx({data, size}, "fuzz.idx");
  } catch (const tg::Error&) {
    return 0;
  }
  check_accepted(a);
  return 0;
}
