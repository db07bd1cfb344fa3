#pragma once
// PyTorch checkpoints (`torch.save` of a state dict, e.g. Hugging Face's pytorch_model.bin) as
// tensors, read without Python and without running any of the pickle's code (the checks are
// listed at parse_torch_checkpoint, tg/torch_checkpoint_header.hpp).
//
// Loading maps the file into memory: on CPU a dense tensor reads the mapping in place (zero
// copy, the mapping lives as long as any tensor over it); a strided view (a transpose saved
// as is) and every tensor on another device are copied once.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tg/tensor.hpp"
#include "tg/torch_checkpoint_header.hpp"

namespace tg {

struct TorchCheckpointFile {
  std::vector<std::pair<std::string, Tensor>> tensors; // in the checkpoint's order
  // The tensor named `name`; tg::Error listing the names when there is none.
  const Tensor& at(const std::string& name) const;
};

TorchCheckpointFile torch_load(const std::filesystem::path& path, const std::string& device = "");

} // namespace tg
