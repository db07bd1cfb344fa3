#pragma once
// The pure parse of a safetensors file's header: from the file's bytes to its tensor table,
// every field checked, without creating a tensor or touching a device. `safe_load`
// (tg/safetensors.hpp) maps a file, parses it here and creates the tensors; the fuzz target
// calls this directly.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"

namespace tg {

struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; // byte range in the data section (after the header)
};

struct SafetensorsHeader {
  uint64_t data_offset = 0; // where the data section starts in the file: 8 + header length
  uint64_t data_size = 0;   // bytes from there to the end of the file
  std::vector<SafetensorsEntry> tensors; // in data order (by begin, then name)
  std::map<std::string, std::string> metadata;
};

// The largest JSON header accepted, as the reference implementation (100 MB): a header beyond
// it is a malformed or hostile file, not a model.
inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

// Parses the header of a safetensors file given all its bytes. Raises tg::Error naming `origin`,
// the tensor and the field for: a file shorter than 8 bytes, a header length beyond the file or the
// limit, a header that is not a JSON object, an unknown dtype, a dimension that is not an integer
// in [0, 2^63), an element or byte count that overflows, data_offsets that are not integers with
// begin <= end <= the data size, a byte range that differs from the shape's size, and tensors
// whose bytes overlap.
SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> file,
                                           const std::string& origin);

// The safetensors name of a dtype ("F32", "BF16", ...) and back (tg::Error when unknown).
std::string safetensors_dtype_name(DType d);
DType safetensors_dtype(const std::string& name);

} // namespace tg
