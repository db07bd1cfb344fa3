// Writing GGUF v3 files; see tg/gguf.hpp.
#include <cstring>
#include <fstream>

#include "tg/error.hpp"
#include "tg/gguf_header.hpp"

namespace tg {

namespace {

class Writer {
public:
  std::vector<uint8_t> out;
  template <class T> void put(T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void pad_to(uint64_t alignment) {
    out.resize((out.size() + alignment - 1) / alignment * alignment, 0);
  }
};

void put_scalar(Writer& w, GgufValueType t, uint64_t u, int64_t i, double f) {
  switch (t) {
  case GgufValueType::UINT8:
    w.put<uint8_t>(static_cast<uint8_t>(u));
    break;
  case GgufValueType::BOOL:
    w.put<uint8_t>(u ? 1 : 0);
    break;
  case GgufValueType::INT8:
    w.put<int8_t>(static_cast<int8_t>(i));
    break;
  case GgufValueType::UINT16:
    w.put<uint16_t>(static_cast<uint16_t>(u));
    break;
  case GgufValueType::INT16:
    w.put<int16_t>(static_cast<int16_t>(i));
    break;
  case GgufValueType::UINT32:
    w.put<uint32_t>(static_cast<uint32_t>(u));
    break;
  case GgufValueType::INT32:
    w.put<int32_t>(static_cast<int32_t>(i));
    break;
  case GgufValueType::UINT64:
    w.put<uint64_t>(u);
    break;
  case GgufValueType::INT64:
    w.put<int64_t>(i);
    break;
  case GgufValueType::FLOAT32:
    w.put<float>(static_cast<float>(f));
    break;
  case GgufValueType::FLOAT64:
    w.put<double>(f);
    break;
  default:
    throw Error("gguf_write: a scalar cannot have type " + std::string(gguf_value_type_name(t)));
  }
}

void put_value(Writer& w, const GgufValue& v, bool with_type) {
  if (with_type) w.put<uint32_t>(static_cast<uint32_t>(v.type));
  if (v.type == GgufValueType::STRING) {
    w.str(v.str);
    return;
  }
  if (v.type != GgufValueType::ARRAY) {
    put_scalar(w, v.type, v.u, v.i, v.f);
    return;
  }
  w.put<uint32_t>(static_cast<uint32_t>(v.elem));
  switch (v.elem) {
  case GgufValueType::STRING:
    w.put<uint64_t>(v.strings.size());
    for (const std::string& s : v.strings) w.str(s);
    break;
  case GgufValueType::ARRAY:
    w.put<uint64_t>(v.arrays.size());
    for (const GgufValue& a : v.arrays) put_value(w, a, false);
    break;
  case GgufValueType::FLOAT32:
  case GgufValueType::FLOAT64:
    w.put<uint64_t>(v.floats.size());
    for (double f : v.floats) put_scalar(w, v.elem, 0, 0, f);
    break;
  case GgufValueType::INT8:
  case GgufValueType::INT16:
  case GgufValueType::INT32:
  case GgufValueType::INT64:
    w.put<uint64_t>(v.ints.size());
    for (int64_t i : v.ints) put_scalar(w, v.elem, 0, i, 0);
    break;
  default:
    w.put<uint64_t>(v.uints.size());
    for (uint64_t u : v.uints) put_scalar(w, v.elem, u, 0, 0);
    break;
  }
}

} // namespace

std::vector<uint8_t> gguf_serialize(const GgufMetadata& metadata,
                                    const std::vector<GgufWriteTensor>& tensors,
                                    uint32_t alignment) {
  GgufMetadata meta = metadata;
  if (const GgufValue* a = meta.find("general.alignment")) {
    if (a->type != GgufValueType::UINT32 || a->u == 0 || (a->u & (a->u - 1)) ||
        a->u > kGgufMaxAlignment)
      throw Error("gguf_write: general.alignment must be a UINT32 power of two up to " +
                  std::to_string(kGgufMaxAlignment));
    alignment = static_cast<uint32_t>(a->u);
  } else if (alignment != 32) {
    meta.set("general.alignment", GgufValue::of_u32(alignment));
  }
  if (alignment == 0 || (alignment & (alignment - 1)) || alignment > kGgufMaxAlignment)
    throw Error("gguf_write: the alignment " + std::to_string(alignment) +
                " is not a power of two up to " + std::to_string(kGgufMaxAlignment));

  Writer w;
  w.put<uint32_t>(0x46554747); // "GGUF"
  w.put<uint32_t>(3);
  w.put<uint64_t>(tensors.size());
  w.put<uint64_t>(meta.entries().size());
  for (const auto& [key, v] : meta.entries()) {
    w.str(key);
    put_value(w, v, true);
  }
  uint64_t offset = 0;
  for (const GgufWriteTensor& t : tensors) {
    if (t.ne.empty() || t.ne.size() > kGgufMaxDims)
      throw Error("gguf_write: tensor '" + t.name + "' must have 1.." +
                  std::to_string(kGgufMaxDims) + " dimensions");
    uint64_t numel = 1;
    for (uint64_t d : t.ne) numel *= d;
    const std::optional<uint64_t> nbytes = ggml_nbytes(t.type, numel);
    if (!nbytes || *nbytes != t.bytes.size())
      throw Error("gguf_write: tensor '" + t.name + "' has " + std::to_string(t.bytes.size()) +
                  " bytes, which is not " + std::to_string(numel) + " elements of " +
                  std::string(ggml_type_name(t.type)));
    w.str(t.name);
    w.put<uint32_t>(static_cast<uint32_t>(t.ne.size()));
    for (uint64_t d : t.ne) w.put<uint64_t>(d);
    w.put<uint32_t>(static_cast<uint32_t>(t.type));
    w.put<uint64_t>(offset);
    offset += (t.bytes.size() + alignment - 1) / alignment * alignment;
  }
  w.pad_to(alignment);
  for (const GgufWriteTensor& t : tensors) {
    w.out.insert(w.out.end(), t.bytes.begin(), t.bytes.end());
    w.pad_to(alignment);
  }
  return w.out;
}

void gguf_write(const std::filesystem::path& path, const GgufMetadata& metadata,
                const std::vector<GgufWriteTensor>& tensors, uint32_t alignment) {
  const std::vector<uint8_t> bytes = gguf_serialize(metadata, tensors, alignment);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(path.string() + ": cannot open the file for writing");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(path.string() + ": writing failed (disk full?)");
}

} // namespace tg
