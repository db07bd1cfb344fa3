#pragma once
// The pure parse of a PyTorch checkpoint (`torch.save` of a state dict since PyTorch 1.6, e.g.
// Hugging Face's pytorch_model.bin): a ZIP archive of stored entries holding `<dir>/data.pkl`
// (the pickled dict) and `<dir>/data/<key>` (one file per storage). From the file's bytes to
// its tensor table, every field checked, without creating a tensor or running any code: the
// pickle may name only the globals a state dict of tensors uses (OrderedDict, the tensor and
// parameter rebuild functions, the typed storages), as `torch.load(weights_only=True)` allows.
// `torch_load` (tg/torch_checkpoint.hpp) maps a file, parses it here and creates the tensors;
// the fuzz target calls this directly.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"

namespace tg {

struct TorchTensorEntry {
  std::string name; // the dict key; keys of nested dicts are joined with '.'
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; // in elements, as torch reports them
  int64_t storage_offset = 0;   // in elements, from the start of the storage
  std::string storage_key;      // the storage's file: `<dir>/data/<key>`
  uint64_t storage_begin = 0;   // the storage's bytes in the file
  uint64_t storage_numel = 0;
  bool contiguous() const; // row-major and dense (what can be read in place)
};

struct TorchCheckpoint {
  std::vector<TorchTensorEntry> tensors; // in the pickle's order
};

// The largest data.pkl accepted: the pickle of a state dict holds names and shapes only (a few
// hundred bytes per tensor); beyond this it is not a checkpoint.
inline constexpr uint64_t kTorchMaxPickle = 256ull << 20;

// Parses the checkpoint given all its bytes. Raises tg::Error naming `origin` and the fault for:
// a file that is not a ZIP archive (the legacy pre-1.6 format and TorchScript archives are
// named as such, with what to do), a big-endian checkpoint, a compressed or encrypted entry, a
// malformed pickle, a global outside the allowed set (named), a top level that is not a dict, a
// tensor whose storage type is unknown, whose storage file is missing or of the wrong size, or
// whose view (offset, sizes, strides) reaches outside its storage, and a dict with no tensor.
TorchCheckpoint parse_torch_checkpoint(std::span<const uint8_t> file, const std::string& origin);

} // namespace tg
