#pragma once
// Reading typed fields of untrusted JSON (Boost.JSON) for the file parsers (core/data, the
// model configs of tinyrun): every integer must be a non-negative integer that fits the range
// the field allows, every missing or mistyped field raises tg::Error "ORIGIN: FIELD = VALUE:
// WHY" (tg/checked.hpp).
#include <boost/json.hpp>
#include <cstdint>
#include <string>

#include "tg/checked.hpp"

namespace tg::data::json_fields {

namespace json = boost::json;

// A whole document: at most `max_bytes` long, valid JSON, nesting bounded by Boost.JSON's
// default depth (32).
inline json::value parse_document(std::string_view text, const std::string& origin,
                                  uint64_t max_bytes) {
  if (text.size() > max_bytes)
    throw_parse_error(origin, "size", std::to_string(text.size()) + " bytes",
                      "larger than the " + std::to_string(max_bytes) +
                          " bytes such a file may have");
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) throw Error(origin + ": not valid JSON (" + ec.message() + ")");
  return v;
}

// v as an unsigned integer in [0, max]: Boost.JSON gives int64 up to 2^63-1, uint64 above, and
// double beyond 2^64 or with a fraction or exponent (refused).
inline uint64_t as_count(const json::value& v, uint64_t max, const std::string& origin,
                         const std::string& field) {
  uint64_t u = 0;
  if (v.is_int64() && v.as_int64() >= 0)
    u = static_cast<uint64_t>(v.as_int64());
  else if (v.is_uint64())
    u = v.as_uint64();
  else
    throw_parse_error(origin, field, json::serialize(v), "must be a non-negative integer");
  if (u > max)
    throw_parse_error(origin, field, std::to_string(u),
                      "out of range (must be between 0 and " + std::to_string(max) + ")");
  return u;
}

inline const json::object& as_object(const json::value& v, const std::string& origin,
                                     const std::string& field) {
  if (!v.is_object()) throw_parse_error(origin, field, json::serialize(v), "must be an object");
  return v.as_object();
}

inline const json::array& as_array(const json::value& v, const std::string& origin,
                                   const std::string& field) {
  if (!v.is_array()) throw_parse_error(origin, field, json::serialize(v), "must be an array");
  return v.as_array();
}

inline std::string as_string(const json::value& v, const std::string& origin,
                             const std::string& field) {
  if (!v.is_string()) throw_parse_error(origin, field, json::serialize(v), "must be a string");
  return std::string(v.as_string());
}

// A finite number (integer or not).
inline double as_number(const json::value& v, const std::string& origin, const std::string& field) {
  if (v.is_double()) return v.as_double();
  if (v.is_int64()) return static_cast<double>(v.as_int64());
  if (v.is_uint64()) return static_cast<double>(v.as_uint64());
  throw_parse_error(origin, field, json::serialize(v), "must be a number");
}

// The member `key` of `o`, or a "missing" error.
inline const json::value& member(const json::object& o, std::string_view key,
                                 const std::string& origin, const std::string& where) {
  const json::value* v = o.if_contains(key);
  if (!v) throw_parse_error(origin, where + std::string(key), "", "missing");
  return *v;
}

} // namespace tg::data::json_fields
