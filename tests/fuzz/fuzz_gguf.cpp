// libFuzzer target: the GGUF parse (tg/gguf_header.hpp) on arbitrary bytes. A tg::Error is the
// expected answer to a malformed file; anything else (a crash, a sanitizer report, another
// exception, an accepted table that breaks its invariants) is a finding. An accepted file is
// also written back and parsed again: the writer must reproduce what the reader accepted.
#include <cstdint>
#include <cstdlib>

#include "tg/error.hpp"
#include "tg/gguf_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tg::GgufHeader h = tg::parse_gguf({data, size}, "fuzz.gguf");
    if (h.data_offset + h.data_size != size) std::abort();
    if (h.alignment == 0 || (h.alignment & (h.alignment - 1)) != 0) std::abort();
    volatile uint8_t sink = 0;
    std::vector<tg::GgufWriteTensor> back;
    for (const tg::GgufTensorInfo& t : h.tensors) {
      if (t.ne.empty() || t.ne.size() > tg::kGgufMaxDims) std::abort();
      // The element count in 128 bits, saturated (a zero dimension empties the tensor).
      unsigned __int128 n = 1;
      bool empty = false;
      for (uint64_t d : t.ne) {
        empty |= d == 0;
        n = n > (static_cast<unsigned __int128>(1) << 64) ? n : n * d;
      }
      if ((empty ? 0 : n) != t.numel) std::abort();
      const std::optional<uint64_t> bytes = tg::ggml_nbytes(t.type, t.numel);
      if (!bytes || *bytes != t.nbytes) std::abort();
      if (t.offset % h.alignment != 0 || t.offset + t.nbytes > h.data_size) std::abort();
      // Every accepted byte range lies inside the input: ASan reports it otherwise.
      for (uint64_t i = 0; i < t.nbytes; ++i) sink = sink + data[h.data_offset + t.offset + i];
      if (t.nbytes <= 4096)
        back.push_back({t.name, t.ne, t.type,
                        std::vector<uint8_t>(data + h.data_offset + t.offset,
                                             data + h.data_offset + t.offset + t.nbytes)});
    }
    // The round trip pads every tensor to the alignment: bounded so a legal 1 MiB alignment
    // over many tensors does not make the harness write gigabytes.
    if (back.size() == h.tensors.size() && size < (1 << 16) && h.alignment <= 4096) {
      const std::vector<uint8_t> again = tg::gguf_serialize(h.metadata, back, h.alignment);
      const tg::GgufHeader h2 = tg::parse_gguf(again, "fuzz.gguf (rewritten)");
      if (h2.tensors.size() != h.tensors.size() ||
          h2.metadata.entries().size() != h.metadata.entries().size())
        std::abort();
      for (size_t i = 0; i < h.tensors.size(); ++i)
        if (h2.tensors[i].name != h.tensors[i].name || h2.tensors[i].ne != h.tensors[i].ne ||
            h2.tensors[i].type != h.tensors[i].type)
          std::abort();
    }
  } catch (const tg::Error&) {
  }
  return 0;
}
