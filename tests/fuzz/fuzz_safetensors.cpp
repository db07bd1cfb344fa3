// libFuzzer target: the safetensors header parse (tg/safetensors_header.hpp) on arbitrary
// bytes. A tg::Error is the expected answer to a malformed file; anything else (a crash, a
// sanitizer report, another exception, an accepted table that breaks its invariants) is a
// finding.
#include <cstdint>
#include <cstdlib>

#include "tg/error.hpp"
#include "tg/safetensors_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tg::SafetensorsHeader h = tg::parse_safetensors_header({data, size}, "fuzz.safetensors");
    if (h.data_offset + h.data_size != size) std::abort();
    uint64_t prev_end = 0;
    volatile uint8_t sink = 0;
    for (const tg::SafetensorsEntry& t : h.tensors) {
      if (t.begin > t.end || t.end > h.data_size) std::abort();
      // The shape's byte size, in 128 bits and saturated: it must equal the accepted range.
      const unsigned __int128 limit = static_cast<unsigned __int128>(1) << 64;
      unsigned __int128 bytes = static_cast<unsigned>(t.dtype.itemsize());
      bool empty = false;
      for (int64_t d : t.shape) {
        if (d < 0) std::abort();
        empty |= d == 0;
        bytes = bytes > limit ? bytes : bytes * static_cast<uint64_t>(d);
      }
      if ((empty ? 0 : bytes) != t.end - t.begin) std::abort();
      if (t.begin != t.end) {
        if (t.begin < prev_end) std::abort(); // overlapping tensors were accepted
        prev_end = t.end;
      }
      // Every accepted byte range lies inside the input: ASan reports it otherwise.
      for (uint64_t i = t.begin; i < t.end; ++i) sink = sink + data[h.data_offset + i];
    }
  } catch (const tg::Error&) {
  }
  return 0;
}
