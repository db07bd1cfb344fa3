// The pure parse of a safetensors header; see tg/safetensors_header.hpp. Every integer of the
// JSON is read as unsigned and range-checked before use, and every size is multiplied with an
// overflow check, so no offset can point outside the data section and no shape can claim more
// elements than its bytes hold.
#include "tg/safetensors_header.hpp"

#include <algorithm>
#include <boost/json.hpp>
#include <cstring>

#include "tg/checked.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

namespace json = boost::json;

const std::vector<std::pair<std::string, DType>>& dtype_names() {
  static const std::vector<std::pair<std::string, DType>> names{
      {"F64", dtypes::float64},   {"F32", dtypes::float32},     {"F16", dtypes::float16},
      {"BF16", dtypes::bfloat16}, {"F8_E4M3", dtypes::fp8e4m3}, {"F8_E5M2", dtypes::fp8e5m2},
      {"I64", dtypes::int64},     {"I32", dtypes::int32},       {"I16", dtypes::int16},
      {"I8", dtypes::int8},       {"U64", dtypes::uint64},      {"U32", dtypes::uint32},
      {"U16", dtypes::uint16},    {"U8", dtypes::uint8},        {"BOOL", dtypes::bool_}};
  return names;
}

// A JSON number that must be a non-negative integer: Boost.JSON gives int64 up to 2^63-1,
// uint64 above, and double beyond 2^64 or with a fraction or exponent.
uint64_t as_unsigned(const json::value& v, const std::string& origin, const std::string& field) {
  if (v.is_int64() && v.as_int64() >= 0) return static_cast<uint64_t>(v.as_int64());
  if (v.is_uint64()) return v.as_uint64();
  throw_parse_error(origin, field, json::serialize(v), "must be a non-negative integer");
}

std::string quote(const std::string& name) { return "tensor '" + name + "': "; }

} // namespace

std::string safetensors_dtype_name(DType d) {
  for (const auto& [n, t] : dtype_names())
    if (t == d) return n;
  throw Error("safetensors has no dtype for " + d.name());
}

DType safetensors_dtype(const std::string& name) {
  for (const auto& [n, t] : dtype_names())
    if (n == name) return t;
  throw Error("unknown safetensors dtype '" + name +
              "' (known: F64 F32 F16 BF16 F8_E4M3 F8_E5M2 I64 I32 I16 I8 U64 U32 U16 U8 BOOL)");
}

SafetensorsHeader parse_safetensors_header(std::span<const uint8_t> file,
                                           const std::string& origin) {
  if (file.size() < 8)
    throw Error(origin + ": too short for a safetensors header (" + std::to_string(file.size()) +
                " bytes; the file starts with an 8-byte header length)");
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8); // little-endian, as is the host
  if (n > file.size() - 8)
    throw_parse_error(origin, "the header length (bytes 0-7)", std::to_string(n),
                      "exceeds the file (" + std::to_string(file.size()) +
                          " bytes); the file is truncated or not safetensors");
  if (n > kSafetensorsMaxHeader)
    throw_parse_error(origin, "the header length (bytes 0-7)", std::to_string(n),
                      "exceeds the format's limit of " + std::to_string(kSafetensorsMaxHeader) +
                          " bytes");
  const std::string_view text(reinterpret_cast<const char*>(file.data() + 8), n);
  if (text.empty() || text.front() != '{')
    throw Error(origin + ": the header must be a JSON object (it starts with '{')");
  boost::system::error_code ec;
  json::value root = json::parse(text, ec); // nesting is bounded (depth 32) by default
  if (ec) throw Error(origin + ": the header is not valid JSON (" + ec.message() + ")");
  if (!root.is_object()) throw Error(origin + ": the header must be a JSON object");

  SafetensorsHeader h;
  h.data_offset = 8 + n;
  h.data_size = file.size() - h.data_offset;
  for (const auto& [key, v] : root.as_object()) {
    const std::string name(key);
    if (name == "__metadata__") {
      if (!v.is_object()) throw Error(origin + ": __metadata__ must be an object of strings");
      for (const auto& [mk, mv] : v.as_object()) {
        if (!mv.is_string())
          throw Error(origin + ": __metadata__['" + std::string(mk) + "'] is not a string");
        h.metadata[std::string(mk)] = std::string(mv.as_string());
      }
      continue;
    }
    const std::string what = quote(name);
    if (!v.is_object()) throw Error(origin + ": " + what + "its entry must be an object");
    const json::object& e = v.as_object();
    const json::value* dt = e.if_contains("dtype");
    const json::value* sh = e.if_contains("shape");
    const json::value* off = e.if_contains("data_offsets");
    if (!dt || !dt->is_string() || !sh || !sh->is_array() || !off || !off->is_array() ||
        off->as_array().size() != 2)
      throw Error(origin + ": " + what +
                  "needs \"dtype\" (string), \"shape\" (array) and \"data_offsets\" "
                  "([begin, end])");
    SafetensorsEntry t;
    t.name = name;
    try {
      t.dtype = safetensors_dtype(std::string(dt->as_string()));
    } catch (const Error& err) {
      throw Error(origin + ": " + what + err.what());
    }
    std::vector<uint64_t> dims;
    for (size_t i = 0; i < sh->as_array().size(); ++i) {
      const std::string field = what + "shape[" + std::to_string(i) + "]";
      const uint64_t d = as_unsigned(sh->as_array()[i], origin, field);
      t.shape.push_back(parse_narrow<int64_t>(d, origin, field));
      dims.push_back(d);
    }
    const uint64_t numel = parse_numel(dims, origin, what + "shape");
    const uint64_t nbytes = parse_mul(numel, static_cast<uint64_t>(t.dtype.itemsize()), origin,
                                      what + "the byte size (elements * element size)");
    t.begin = as_unsigned(off->as_array()[0], origin, what + "data_offsets[0]");
    t.end = as_unsigned(off->as_array()[1], origin, what + "data_offsets[1]");
    const std::string range = "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + ")";
    if (t.begin > t.end || t.end > h.data_size)
      throw_parse_error(origin, what + "data_offsets", range,
                        "outside the " + std::to_string(h.data_size) +
                            " data bytes (begin <= end <= the data size)");
    if (t.end - t.begin != nbytes)
      throw_parse_error(origin, what + "data_offsets", range,
                        "holds " + std::to_string(t.end - t.begin) + " bytes but the shape " +
                            json::serialize(*sh) + " of " + t.dtype.name() + " needs " +
                            std::to_string(nbytes));
    h.tensors.push_back(std::move(t));
  }
  std::sort(h.tensors.begin(), h.tensors.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.name < b.name;
  });
  // Two tensors over the same bytes would alias: one weight written through another's name.
  const SafetensorsEntry* prev = nullptr;
  for (const SafetensorsEntry& t : h.tensors) {
    if (t.begin == t.end) continue;
    if (prev && t.begin < prev->end)
      throw Error(origin + ": " + quote(t.name) + "its bytes [" + std::to_string(t.begin) + ", " +
                  std::to_string(t.end) + ") overlap those of tensor '" + prev->name + "' [" +
                  std::to_string(prev->begin) + ", " + std::to_string(prev->end) + ")");
    prev = &t;
  }
  return h;
}

} // namespace tg
