#pragma once
// The tensor types of GGML (the element formats of GGUF files): their numbers as the files
// store them, names, block sizes and byte sizes. A quantized type packs `block_elems` elements
// of a row into `block_bytes` bytes; rows are whole blocks.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tg {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

struct GgmlTypeInfo {
  GgmlType type;
  const char* name;     // llama.cpp's spelling: "F32", "Q4_0", "Q6_K"
  uint32_t block_elems; // elements per block (1 for the float types)
  uint32_t block_bytes; // bytes per block
  bool loadable;        // this project reads it (dequantizes it in the graph)
};

// Every type this project knows by number, loadable or not (the i-quants and Q8_1/Q8_K are
// named so that an error can say what a file holds).
const std::vector<GgmlTypeInfo>& ggml_types();

// The info of a type number read from a file; nullptr when the number is not a GGML type.
const GgmlTypeInfo* ggml_type_info(uint32_t number);
const GgmlTypeInfo& ggml_type_info(GgmlType type);
std::string_view ggml_type_name(GgmlType type);
// By name, case-insensitive ("q4_0", "Q4_K"); nullopt when unknown.
std::optional<GgmlType> ggml_type_from_name(std::string_view name);
// The names of the loadable types, space-separated (for messages).
std::string ggml_loadable_type_names();

// Bytes of `n` elements of `type` (a multiple of the block size), or nullopt when `n` is not
// a whole number of blocks or the size overflows.
std::optional<uint64_t> ggml_nbytes(GgmlType type, uint64_t n);

} // namespace tg
