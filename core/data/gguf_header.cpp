// The pure parse of a GGUF file; see tg/gguf.hpp. A cursor reads little-endian fields and
// names each by its byte offset; every count is checked against the bytes left before anything
// is sized from it, so a header cannot ask for more memory than the file itself backs.
#include <algorithm>
#include <cstring>
#include <set>

#include "tg/checked.hpp"
#include "tg/error.hpp"
#include "tg/gguf_header.hpp"

namespace tg {

namespace {

constexpr uint32_t kMagic = 0x46554747; // "GGUF" read as a little-endian uint32

// The smallest encoding of one value of each type, which bounds how many a count can claim.
uint64_t min_value_bytes(GgufValueType t) {
  switch (t) {
  case GgufValueType::UINT8:
  case GgufValueType::INT8:
  case GgufValueType::BOOL:
    return 1;
  case GgufValueType::UINT16:
  case GgufValueType::INT16:
    return 2;
  case GgufValueType::UINT32:
  case GgufValueType::INT32:
  case GgufValueType::FLOAT32:
    return 4;
  case GgufValueType::UINT64:
  case GgufValueType::INT64:
  case GgufValueType::FLOAT64:
  case GgufValueType::STRING:
    return 8; // a string is at least its length
  case GgufValueType::ARRAY:
    return 12; // element type + count
  }
  return 1;
}

bool known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::FLOAT64); }

class Cursor {
public:
  Cursor(std::span<const uint8_t> file, const std::string& origin) : file_(file), origin_(origin) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return file_.size() - pos_; }
  const std::string& origin() const { return origin_; }

  // "FIELD (at byte N)", the way every error names a place.
  std::string at(const std::string& field, uint64_t offset) const {
    return field + " (at byte " + std::to_string(offset) + ")";
  }

  [[noreturn]] void fail(const std::string& field, uint64_t offset, const std::string& value,
                         const std::string& why) const {
    throw_parse_error(origin_, at(field, offset), value, why);
  }

  void need(uint64_t n, const std::string& field) const {
    if (n > left())
      fail(field, pos_, "",
           "needs " + std::to_string(n) + " bytes but the file ends after " +
               std::to_string(left()) + " (the file is truncated or not GGUF)");
  }

  template <class T> T read(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, file_.data() + pos_, sizeof(T)); // little-endian, as is the host
    pos_ += sizeof(T);
    return v;
  }

  std::string string(const std::string& field) {
    const uint64_t start = pos_;
    const auto n = read<uint64_t>(field + " length");
    if (n > left())
      fail(field + " length", start, std::to_string(n),
           "runs past the end of the file (" + std::to_string(left()) + " bytes left)");
    std::string s(reinterpret_cast<const char*>(file_.data() + pos_), n);
    pos_ += n;
    return s;
  }

  // A count of items each at least `min_bytes` long: refused when the rest of the file could
  // not hold them, so no container is sized beyond what the file backs.
  uint64_t count(const std::string& field, uint64_t min_bytes) {
    const uint64_t start = pos_;
    const auto n = read<uint64_t>(field);
    const std::optional<uint64_t> bytes = checked_mul(n, min_bytes);
    if (!bytes || *bytes > left())
      fail(field, start, std::to_string(n),
           "more than the " + std::to_string(left()) + " bytes left in the file can hold");
    return n;
  }

  void seek(uint64_t p) { pos_ = p; }

private:
  std::span<const uint8_t> file_;
  const std::string& origin_;
  uint64_t pos_ = 0;
};

GgufValueType read_value_type(Cursor& c, const std::string& field) {
  const uint64_t at = c.pos();
  const auto t = c.read<uint32_t>(field);
  if (!known_value_type(t))
    c.fail(field, at, std::to_string(t), "is not a GGUF value type (0..12)");
  return static_cast<GgufValueType>(t);
}

void read_value(Cursor& c, GgufValue& v, GgufValueType type, const std::string& field, int depth);

void read_scalar(Cursor& c, GgufValue& v, GgufValueType type, const std::string& field) {
  v.type = type;
  switch (type) {
  case GgufValueType::UINT8:
    v.u = c.read<uint8_t>(field);
    break;
  case GgufValueType::INT8:
    v.i = c.read<int8_t>(field);
    break;
  case GgufValueType::UINT16:
    v.u = c.read<uint16_t>(field);
    break;
  case GgufValueType::INT16:
    v.i = c.read<int16_t>(field);
    break;
  case GgufValueType::UINT32:
    v.u = c.read<uint32_t>(field);
    break;
  case GgufValueType::INT32:
    v.i = c.read<int32_t>(field);
    break;
  case GgufValueType::UINT64:
    v.u = c.read<uint64_t>(field);
    break;
  case GgufValueType::INT64:
    v.i = c.read<int64_t>(field);
    break;
  case GgufValueType::FLOAT32:
    v.f = c.read<float>(field);
    break;
  case GgufValueType::FLOAT64:
    v.f = c.read<double>(field);
    break;
  case GgufValueType::BOOL: {
    const uint64_t at = c.pos();
    const auto b = c.read<uint8_t>(field);
    if (b > 1) c.fail(field, at, std::to_string(b), "a bool must be 0 or 1");
    v.u = b;
    break;
  }
  case GgufValueType::STRING:
    v.str = c.string(field);
    break;
  case GgufValueType::ARRAY:
    break; // not a scalar
  }
}

void read_array(Cursor& c, GgufValue& v, const std::string& field, int depth) {
  if (depth >= kGgufMaxArrayDepth)
    c.fail(field, c.pos(), "", "arrays nested deeper than " + std::to_string(kGgufMaxArrayDepth));
  v.type = GgufValueType::ARRAY;
  v.elem = read_value_type(c, field + " element type");
  const uint64_t n = c.count(field + " element count", min_value_bytes(v.elem));
  GgufValue e;
  for (uint64_t k = 0; k < n; ++k) {
    const std::string ef = field + "[" + std::to_string(k) + "]";
    switch (v.elem) {
    case GgufValueType::STRING:
      v.strings.push_back(c.string(ef));
      break;
    case GgufValueType::ARRAY:
      e = GgufValue{};
      read_array(c, e, ef, depth + 1);
      v.arrays.push_back(std::move(e));
      break;
    case GgufValueType::FLOAT32:
    case GgufValueType::FLOAT64:
      read_scalar(c, e, v.elem, ef);
      v.floats.push_back(e.f);
      break;
    case GgufValueType::INT8:
    case GgufValueType::INT16:
    case GgufValueType::INT32:
    case GgufValueType::INT64:
      read_scalar(c, e, v.elem, ef);
      v.ints.push_back(e.i);
      break;
    default:
      read_scalar(c, e, v.elem, ef);
      v.uints.push_back(e.u);
      break;
    }
  }
}

void read_value(Cursor& c, GgufValue& v, GgufValueType type, const std::string& field, int depth) {
  if (type == GgufValueType::ARRAY)
    read_array(c, v, field, depth);
  else
    read_scalar(c, v, type, field);
}

// Returns the byte offset of the info's data offset field, for later errors about it.
uint64_t read_tensor_info(Cursor& c, GgufTensorInfo& t, uint64_t index) {
  const std::string base = "tensor info " + std::to_string(index);
  t.name = c.string(base + " name");
  const std::string what = "tensor '" + t.name + "'";
  const uint64_t dims_at = c.pos();
  const auto n_dims = c.read<uint32_t>(what + " n_dims");
  if (n_dims == 0 || n_dims > kGgufMaxDims)
    c.fail(what + " n_dims", dims_at, std::to_string(n_dims),
           "must be 1.." + std::to_string(kGgufMaxDims));
  for (uint32_t d = 0; d < n_dims; ++d) {
    const uint64_t at = c.pos();
    const std::string field = what + " ne[" + std::to_string(d) + "]";
    const auto ne = c.read<uint64_t>(field);
    if (!checked_narrow<int64_t>(ne)) c.fail(field, at, std::to_string(ne), "must be below 2^63");
    t.ne.push_back(ne);
  }
  const std::optional<uint64_t> numel = checked_numel(t.ne);
  if (!numel || !checked_narrow<int64_t>(*numel))
    c.fail(what + " dimensions", dims_at, "", "the element count does not fit in 63 bits");
  t.numel = *numel;
  const uint64_t type_at = c.pos();
  const auto type = c.read<uint32_t>(what + " type");
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (!info)
    c.fail(what + " type", type_at, std::to_string(type),
           "is not a GGML tensor type this reader knows (it reads: " + ggml_loadable_type_names() +
               ")");
  if (!info->loadable)
    c.fail(what + " type", type_at, info->name,
           std::string("is not supported (supported: ") + ggml_loadable_type_names() + ")");
  t.type = info->type;
  if (t.ne[0] % info->block_elems != 0)
    c.fail(what + " ne[0]", dims_at + 4, std::to_string(t.ne[0]),
           std::string("a row of ") + info->name + " must be a multiple of " +
               std::to_string(info->block_elems) + " elements");
  const std::optional<uint64_t> nbytes = ggml_nbytes(t.type, t.numel);
  if (!nbytes) c.fail(what + " dimensions", dims_at, "", "the byte size does not fit in 64 bits");
  t.nbytes = *nbytes;
  const uint64_t off_at = c.pos();
  t.offset = c.read<uint64_t>(what + " offset");
  return off_at;
}

} // namespace

GgufHeader parse_gguf(std::span<const uint8_t> file, const std::string& origin) {
  Cursor c(file, origin);
  GgufHeader h;
  const auto magic = c.read<uint32_t>("magic");
  if (magic != kMagic)
    c.fail("magic", 0, "", "the file does not start with \"GGUF\" (it is not a GGUF file)");
  h.version = c.read<uint32_t>("version");
  if (h.version == 1)
    c.fail("version", 4, "1",
           "GGUF v1 is not supported (re-convert the model with a current llama.cpp)");
  if (h.version != 2 && h.version != 3) {
    const bool swapped = h.version == 0x02000000 || h.version == 0x03000000;
    c.fail("version", 4, std::to_string(h.version),
           swapped ? "a big-endian GGUF file; only little-endian files are supported"
                   : "unsupported (this reader reads versions 2 and 3)");
  }
  // A tensor info is at least a name length, n_dims, one dimension, type and offset.
  const uint64_t n_tensors = c.count("tensor_count", 8 + 4 + 8 + 4 + 8);
  const uint64_t n_kv = c.count("metadata_kv_count", 8 + 4 + 1);

  for (uint64_t k = 0; k < n_kv; ++k) {
    const uint64_t key_at = c.pos();
    std::string key = c.string("metadata key " + std::to_string(k));
    if (h.metadata.contains(key))
      c.fail("metadata key " + std::to_string(k), key_at, "'" + key + "'", "appears twice");
    const std::string field = "metadata '" + key + "'";
    GgufValue v;
    const GgufValueType type = read_value_type(c, field + " type");
    read_value(c, v, type, field, 0);
    if (key == "general.alignment") {
      if (type != GgufValueType::UINT32)
        c.fail(field, key_at, gguf_value_type_name(type), "must be a UINT32");
      if (v.u == 0 || (v.u & (v.u - 1)) != 0 || v.u > kGgufMaxAlignment)
        c.fail(field, key_at, std::to_string(v.u),
               "must be a power of two up to " + std::to_string(kGgufMaxAlignment));
      h.alignment = static_cast<uint32_t>(v.u);
    }
    h.metadata.set(key, std::move(v));
  }

  std::set<std::string> names;
  h.tensors.resize(n_tensors); // backed: each info takes at least 32 of the file's bytes
  std::vector<uint64_t> offset_at(n_tensors);
  for (uint64_t t = 0; t < n_tensors; ++t) {
    const uint64_t at = c.pos();
    offset_at[t] = read_tensor_info(c, h.tensors[t], t);
    if (!names.insert(h.tensors[t].name).second)
      c.fail("tensor info " + std::to_string(t) + " name", at, "'" + h.tensors[t].name + "'",
             "two tensors have this name");
  }

  // The data section starts at the next multiple of the alignment (the file may end there when
  // it has no tensor data).
  const uint64_t pad = (h.alignment - c.pos() % h.alignment) % h.alignment;
  h.data_offset = std::min<uint64_t>(c.pos() + pad, file.size());
  h.data_size = file.size() - h.data_offset;
  for (size_t k = 0; k < h.tensors.size(); ++k) {
    const GgufTensorInfo& t = h.tensors[k];
    const std::string what = c.at("tensor '" + t.name + "' offset", offset_at[k]);
    if (t.offset % h.alignment != 0)
      throw_parse_error(origin, what, std::to_string(t.offset),
                        "is not a multiple of the alignment " + std::to_string(h.alignment));
    const std::optional<uint64_t> end = checked_add(t.offset, t.nbytes);
    if (!end || *end > h.data_size)
      throw_parse_error(origin, what, std::to_string(t.offset),
                        "its " + std::to_string(t.nbytes) + " bytes run past the end of the " +
                            std::to_string(h.data_size) +
                            " data bytes (the file is truncated or the offset is wrong)");
  }
  // Two tensors over the same bytes would alias: one weight read under another's name.
  std::vector<const GgufTensorInfo*> by_offset;
  for (const GgufTensorInfo& t : h.tensors)
    if (t.nbytes > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const auto* a, const auto* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k)
    if (by_offset[k]->offset < by_offset[k - 1]->offset + by_offset[k - 1]->nbytes)
      throw_parse_error(origin, "tensor '" + by_offset[k]->name + "' offset",
                        std::to_string(by_offset[k]->offset),
                        "its bytes overlap those of tensor '" + by_offset[k - 1]->name + "'");
  return h;
}

} // namespace tg
