// libFuzzer target: the PyTorch checkpoint parse (tg/torch_checkpoint_header.hpp: the ZIP
// directory, the restricted unpickler, the tensor table) on arbitrary bytes. A tg::Error is the
// expected answer to a malformed file; anything else (a crash, a sanitizer report, a leak, a
// hang, another exception, an accepted table whose views leave their storage or the file) is a
// finding.
#include <cstdint>
#include <cstdlib>

#include "tg/error.hpp"
#include "tg/torch_checkpoint_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const tg::TorchCheckpoint ck = tg::parse_torch_checkpoint({data, size}, "fuzz.bin");
    volatile uint8_t sink = 0;
    for (const tg::TorchTensorEntry& t : ck.tensors) {
      const auto item = static_cast<unsigned __int128>(t.dtype.itemsize());
      const unsigned __int128 bytes = t.storage_numel * item;
      if (t.storage_begin > size || bytes > size - t.storage_begin) std::abort();
      if (t.shape.size() != t.strides.size()) std::abort();
      // The last element the view reaches, in 128 bits: inside the storage, or an empty view.
      bool empty = false;
      unsigned __int128 last = static_cast<uint64_t>(t.storage_offset);
      for (size_t i = 0; i < t.shape.size(); ++i) {
        if (t.shape[i] < 0 || t.strides[i] < 0) std::abort();
        empty |= t.shape[i] == 0;
        if (t.shape[i] > 0)
          last +=
              static_cast<unsigned __int128>(t.shape[i] - 1) * static_cast<uint64_t>(t.strides[i]);
      }
      if (!empty && last >= t.storage_numel) std::abort();
      // Every accepted storage lies inside the input: ASan reports it otherwise.
      for (uint64_t i = 0; i < static_cast<uint64_t>(bytes); ++i)
        sink = sink + data[t.storage_begin + i];
    }
  } catch (const tg::Error&) {
  }
  return 0;
}
