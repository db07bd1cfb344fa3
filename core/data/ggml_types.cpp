// The table of GGML tensor types; see tg/ggml_types.hpp.
#include "tg/ggml_types.hpp"

#include <algorithm>
#include <cctype>

#include "tg/checked.hpp"
#include "tg/error.hpp"

namespace tg {

const std::vector<GgmlTypeInfo>& ggml_types() {
  // Block layouts as ggml-common.h declares them: the sizes are those of the C structs.
  static const std::vector<GgmlTypeInfo> types{
      {GgmlType::F32, "F32", 1, 4, true},        {GgmlType::F16, "F16", 1, 2, true},
      {GgmlType::BF16, "BF16", 1, 2, true},      {GgmlType::Q4_0, "Q4_0", 32, 18, true},
      {GgmlType::Q4_1, "Q4_1", 32, 20, true},    {GgmlType::Q5_0, "Q5_0", 32, 22, true},
      {GgmlType::Q5_1, "Q5_1", 32, 24, true},    {GgmlType::Q8_0, "Q8_0", 32, 34, true},
      {GgmlType::Q8_1, "Q8_1", 32, 36, false},   {GgmlType::Q2_K, "Q2_K", 256, 84, true},
      {GgmlType::Q3_K, "Q3_K", 256, 110, true},  {GgmlType::Q4_K, "Q4_K", 256, 144, true},
      {GgmlType::Q5_K, "Q5_K", 256, 176, true},  {GgmlType::Q6_K, "Q6_K", 256, 210, true},
      {GgmlType::Q8_K, "Q8_K", 256, 292, false},
  };
  return types;
}

const GgmlTypeInfo* ggml_type_info(uint32_t number) {
  for (const GgmlTypeInfo& t : ggml_types())
    if (static_cast<uint32_t>(t.type) == number) return &t;
  return nullptr;
}

const GgmlTypeInfo& ggml_type_info(GgmlType type) {
  if (const GgmlTypeInfo* t = ggml_type_info(static_cast<uint32_t>(type))) return *t;
  throw Error("unknown GGML type number " + std::to_string(static_cast<uint32_t>(type)));
}

std::string_view ggml_type_name(GgmlType type) { return ggml_type_info(type).name; }

std::optional<GgmlType> ggml_type_from_name(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const GgmlTypeInfo& t : ggml_types())
    if (upper == t.name) return t.type;
  return std::nullopt;
}

std::string ggml_loadable_type_names() {
  std::string out;
  for (const GgmlTypeInfo& t : ggml_types())
    if (t.loadable) out += (out.empty() ? "" : " ") + std::string(t.name);
  return out;
}

std::optional<uint64_t> ggml_nbytes(GgmlType type, uint64_t n) {
  const GgmlTypeInfo& t = ggml_type_info(type);
  if (n % t.block_elems != 0) return std::nullopt;
  return checked_mul(n / t.block_elems, t.block_bytes);
}

} // namespace tg
