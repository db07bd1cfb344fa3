#pragma once
// GGUF files as tensors. `gguf_load` maps the file read-only, parses it (tg/gguf_header.hpp)
// and creates the tensors over the mapping (zero copy on the CPU). Quantized tensors stay
// quantized: they load as their raw blocks (uint8) and `ggml_dequantize` (tg/ggml_quants.hpp)
// expresses the dequantization as tensor ops, so it fuses into the kernel that reads the
// weight.
#include <filesystem>
#include <string>
#include <vector>

#include "tg/gguf_header.hpp"
#include "tg/tensor.hpp"

namespace tg {

// One tensor of a loaded file: its info and its data. F32, F16 and BF16 tensors have that dtype
// and the info's shape; quantized ones are their raw blocks, uint8 of shape (nbytes).
struct GgufTensor {
  GgufTensorInfo info;
  Tensor data;
  // The tensor as float32 of the info's shape: a cast for the float types, the graph form of the
  // dequantization for the quantized ones (it fuses into whatever reads it).
  Tensor dequantized() const;
};

struct GgufFile {
  std::filesystem::path path;
  uint32_t version = 3;
  uint32_t alignment = 32;
  GgufMetadata metadata;
  std::vector<GgufTensor> tensors; // in the file's order
  const GgufTensor* find(const std::string& name) const;
  const GgufTensor& at(const std::string& name) const; // tg::Error naming the tensor
};

// Maps `path` read-only, parses it and creates its tensors on `device` (zero copy on the CPU:
// the mapping lives while any tensor over it does; elsewhere copied once).
GgufFile gguf_load(const std::filesystem::path& path, const std::string& device = "");

} // namespace tg
