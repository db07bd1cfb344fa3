#pragma once
// safetensors files (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length, a JSON header {name: {dtype, shape, data_offsets: [begin, end]}, optional
// "__metadata__": {string: string}}, then the raw little-endian data.
//
// Loading maps the file into memory: on CPU the tensors read it in place (zero copy, the
// mapping lives as long as any tensor over it); elsewhere the bytes are copied once. Every
// dtype of the format is supported: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U64 U32
// U16 U8 BOOL. A malformed file raises tg::Error naming the file, the tensor and the fault
// (the checks are listed at parse_safetensors_header).
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tg/safetensors_header.hpp"
#include "tg/tensor.hpp"

namespace tg {

struct SafetensorsFile {
  std::vector<std::pair<std::string, Tensor>> tensors; // in the file's data order
  std::map<std::string, std::string> metadata;
  // The tensor named `name`; tg::Error listing the names when there is none.
  const Tensor& at(const std::string& name) const;
};

SafetensorsFile safe_load(const std::filesystem::path& path, const std::string& device = "");

// Writes `tensors` (realized and copied to the host) in name order, with `metadata`.
void safe_save(const std::map<std::string, Tensor>& tensors, const std::filesystem::path& path,
               const std::map<std::string, std::string>& metadata = {});

} // namespace tg
