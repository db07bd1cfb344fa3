// GGUF metadata values and their typed reads; see tg/gguf.hpp.
#include <cmath>
#include <limits>

#include "tg/error.hpp"
#include "tg/gguf_header.hpp"

namespace tg {

const char* gguf_value_type_name(GgufValueType t) {
  static const char* names[] = {"UINT8",  "INT8",    "UINT16", "INT16",  "UINT32",
                                "INT32",  "FLOAT32", "BOOL",   "STRING", "ARRAY",
                                "UINT64", "INT64",   "FLOAT64"};
  const auto k = static_cast<uint32_t>(t);
  return k < std::size(names) ? names[k] : "?";
}

namespace {

bool is_unsigned(GgufValueType t) {
  return t == GgufValueType::UINT8 || t == GgufValueType::UINT16 || t == GgufValueType::UINT32 ||
         t == GgufValueType::UINT64;
}
bool is_signed(GgufValueType t) {
  return t == GgufValueType::INT8 || t == GgufValueType::INT16 || t == GgufValueType::INT32 ||
         t == GgufValueType::INT64;
}
bool is_float(GgufValueType t) {
  return t == GgufValueType::FLOAT32 || t == GgufValueType::FLOAT64;
}

[[noreturn]] void wrong_kind(const std::string& key, GgufValueType t, const char* want) {
  throw Error("GGUF metadata '" + key + "' is " + gguf_value_type_name(t) + ", expected " + want);
}

} // namespace

bool GgufValue::is_number() const {
  return is_unsigned(type) || is_signed(type) || is_float(type) || type == GgufValueType::BOOL;
}

size_t GgufValue::array_size() const {
  return uints.size() + ints.size() + floats.size() + strings.size() + arrays.size();
}

int64_t GgufValue::as_int(const std::string& key) const {
  if (is_signed(type)) return i;
  if (is_unsigned(type)) {
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw Error("GGUF metadata '" + key + "' = " + std::to_string(u) + " is out of range");
    return static_cast<int64_t>(u);
  }
  wrong_kind(key, type, "an integer");
}

double GgufValue::as_float(const std::string& key) const {
  if (is_float(type)) return f;
  if (is_signed(type)) return static_cast<double>(i);
  if (is_unsigned(type)) return static_cast<double>(u);
  wrong_kind(key, type, "a number");
}

bool GgufValue::as_bool(const std::string& key) const {
  if (type == GgufValueType::BOOL) return u != 0;
  wrong_kind(key, type, "a BOOL");
}

const std::string& GgufValue::as_string(const std::string& key) const {
  if (type == GgufValueType::STRING) return str;
  wrong_kind(key, type, "a STRING");
}

GgufValue GgufValue::of_string(std::string s) {
  GgufValue v;
  v.type = GgufValueType::STRING;
  v.str = std::move(s);
  return v;
}
GgufValue GgufValue::of_u32(uint32_t x) {
  GgufValue v;
  v.type = GgufValueType::UINT32;
  v.u = x;
  return v;
}
GgufValue GgufValue::of_i32(int32_t x) {
  GgufValue v;
  v.type = GgufValueType::INT32;
  v.i = x;
  return v;
}
GgufValue GgufValue::of_u64(uint64_t x) {
  GgufValue v;
  v.type = GgufValueType::UINT64;
  v.u = x;
  return v;
}
GgufValue GgufValue::of_f32(float x) {
  GgufValue v;
  v.type = GgufValueType::FLOAT32;
  v.f = x;
  return v;
}
GgufValue GgufValue::of_bool(bool x) {
  GgufValue v;
  v.type = GgufValueType::BOOL;
  v.u = x ? 1 : 0;
  return v;
}
GgufValue GgufValue::of_strings(std::vector<std::string> s) {
  GgufValue v;
  v.type = GgufValueType::ARRAY;
  v.elem = GgufValueType::STRING;
  v.strings = std::move(s);
  return v;
}
GgufValue GgufValue::of_f32s(const std::vector<float>& x) {
  GgufValue v;
  v.type = GgufValueType::ARRAY;
  v.elem = GgufValueType::FLOAT32;
  v.floats.assign(x.begin(), x.end());
  return v;
}
GgufValue GgufValue::of_i32s(const std::vector<int32_t>& x) {
  GgufValue v;
  v.type = GgufValueType::ARRAY;
  v.elem = GgufValueType::INT32;
  v.ints.assign(x.begin(), x.end());
  return v;
}

void GgufMetadata::set(const std::string& key, GgufValue v) {
  if (auto it = index_.find(key); it != index_.end()) {
    entries_[it->second].second = std::move(v);
    return;
  }
  index_[key] = entries_.size();
  entries_.emplace_back(key, std::move(v));
}

const GgufValue* GgufMetadata::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const GgufValue& GgufMetadata::at(const std::string& key) const {
  if (const GgufValue* v = find(key)) return *v;
  throw Error("GGUF metadata has no key '" + key + "'");
}

int64_t GgufMetadata::get_int(const std::string& key, int64_t fallback) const {
  const GgufValue* v = find(key);
  return v ? v->as_int(key) : fallback;
}
double GgufMetadata::get_float(const std::string& key, double fallback) const {
  const GgufValue* v = find(key);
  return v ? v->as_float(key) : fallback;
}
bool GgufMetadata::get_bool(const std::string& key, bool fallback) const {
  const GgufValue* v = find(key);
  return v ? v->as_bool(key) : fallback;
}
std::string GgufMetadata::get_string(const std::string& key, const std::string& fallback) const {
  const GgufValue* v = find(key);
  return v ? v->as_string(key) : fallback;
}

std::vector<int64_t> GgufTensorInfo::shape() const {
  std::vector<int64_t> s;
  for (auto it = ne.rbegin(); it != ne.rend(); ++it) s.push_back(static_cast<int64_t>(*it));
  return s;
}

} // namespace tg
