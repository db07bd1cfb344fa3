#pragma once
// The bytes of GGUF files, without tensors (tg/gguf.hpp loads them as tensors). GGUF files
// (llama.cpp's model format, versions 2 and 3): a header, typed key/value metadata, a table of
// tensor infos, then the tensor data at `general.alignment` (default 32).
//
// `parse_gguf` is a pure function of the file's bytes (no tensor, no device, no file system;
// the fuzz target calls it) that checks every count, size and offset against the file;
// `gguf_serialize`/`gguf_write` are its inverse.
//
// Errors are tg::Error "FILE: FIELD (at byte N) = VALUE: WHY".
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tg/ggml_types.hpp"

namespace tg {

// Metadata value types, numbered as the format stores them.
enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};
const char* gguf_value_type_name(GgufValueType t);

// One metadata value. Scalars keep the stored type; an array keeps its element type and its
// elements (numbers and bools widened into `ints`/`uints`/`floats`, strings in `strings`,
// nested arrays in `arrays`).
struct GgufValue {
  GgufValueType type = GgufValueType::UINT32;
  GgufValueType elem = GgufValueType::UINT8; // ARRAY only
  uint64_t u = 0;                            // UINT*, BOOL
  int64_t i = 0;                             // INT*
  double f = 0;                              // FLOAT*
  std::string str;                           // STRING
  std::vector<uint64_t> uints;               // ARRAY of UINT* or BOOL
  std::vector<int64_t> ints;                 // ARRAY of INT*
  std::vector<double> floats;                // ARRAY of FLOAT*
  std::vector<std::string> strings;          // ARRAY of STRING
  std::vector<GgufValue> arrays;             // ARRAY of ARRAY

  bool is_array() const { return type == GgufValueType::ARRAY; }
  bool is_string() const { return type == GgufValueType::STRING; }
  bool is_number() const; // an integer, float or bool scalar
  size_t array_size() const;
  // Conversions that check the kind (tg::Error naming `key` otherwise): an integer of any
  // width or sign that fits, a float or integer as double, a bool.
  int64_t as_int(const std::string& key) const;
  double as_float(const std::string& key) const;
  bool as_bool(const std::string& key) const;
  const std::string& as_string(const std::string& key) const;

  static GgufValue of_string(std::string s);
  static GgufValue of_u32(uint32_t v);
  static GgufValue of_i32(int32_t v);
  static GgufValue of_u64(uint64_t v);
  static GgufValue of_f32(float v);
  static GgufValue of_bool(bool v);
  static GgufValue of_strings(std::vector<std::string> v);
  static GgufValue of_f32s(const std::vector<float>& v);
  static GgufValue of_i32s(const std::vector<int32_t>& v);
};

// The metadata in file order, with lookup by key.
class GgufMetadata {
public:
  void set(const std::string& key, GgufValue v); // replaces an existing key in place
  const GgufValue* find(const std::string& key) const;
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  const GgufValue& at(const std::string& key) const; // tg::Error naming the key when absent
  // Typed reads with a default for absent keys (a present key of the wrong kind is an error).
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_float(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }

private:
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t> index_;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> ne; // GGML's order: ne[0] is the row length (fastest-moving)
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0; // from the start of the data section
  uint64_t nbytes = 0;
  uint64_t numel = 0;
  // The row-major shape (ne reversed), as Tensor shapes are.
  std::vector<int64_t> shape() const;
};

struct GgufHeader {
  uint32_t version = 3;
  uint32_t alignment = 32;
  uint64_t data_offset = 0; // where the data section starts in the file
  uint64_t data_size = 0;   // bytes from there to the end of the file
  GgufMetadata metadata;
  std::vector<GgufTensorInfo> tensors; // in the file's order
};

// The most dimensions a tensor may have (GGML_MAX_DIMS) and the deepest array nesting accepted.
inline constexpr uint32_t kGgufMaxDims = 4;
inline constexpr int kGgufMaxArrayDepth = 8;
// The largest general.alignment accepted: files use 32; a hostile one could otherwise ask a
// writer to pad by gigabytes.
inline constexpr uint32_t kGgufMaxAlignment = 1u << 20;

// Parses a GGUF file given all its bytes. Raises tg::Error naming `origin`, the field and its
// byte offset for: a bad magic, an unsupported version (1, or a big-endian file), counts or
// lengths that run past the end of the file, an unknown value type, arrays nested deeper than
// kGgufMaxArrayDepth, a general.alignment that is not a power of two up to kGgufMaxAlignment,
// duplicate keys or tensor names, more than kGgufMaxDims dimensions, a dimension >= 2^63, an
// element count that overflows, an unknown or unsupported tensor type, a row that is not whole
// blocks, an offset off the alignment, and tensor data past the end of the file. Nothing is
// allocated that the file's own bytes do not back.
GgufHeader parse_gguf(std::span<const uint8_t> file, const std::string& origin);

// One tensor to write: GGML's dimension order and the exact bytes of `type`.
struct GgufWriteTensor {
  std::string name;
  std::vector<uint64_t> ne;
  GgmlType type = GgmlType::F32;
  std::vector<uint8_t> bytes;
};

// Writes a GGUF v3 file: the metadata in order (general.alignment set to `alignment` when the
// metadata lacks it), the tensor infos, then the data, each tensor at a multiple of the
// alignment. tg::Error for a tensor whose bytes do not match its type and dimensions, or an
// unwritable path.
void gguf_write(const std::filesystem::path& path, const GgufMetadata& metadata,
                const std::vector<GgufWriteTensor>& tensors, uint32_t alignment = 32);
// The same into memory (what gguf_write writes).
std::vector<uint8_t> gguf_serialize(const GgufMetadata& metadata,
                                    const std::vector<GgufWriteTensor>& tensors,
                                    uint32_t alignment = 32);

} // namespace tg
