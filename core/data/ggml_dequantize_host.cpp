// Reference dequantizers of GGML's block formats on the host; see tg/ggml_quants.hpp. The
// arithmetic follows llama.cpp's `dequantize_row_*` (same operations, same order; compiled
// with -ffp-contract=off), so the floats are bit-identical. The graph form
// (ggml_dequantize_graph.cpp) is tested against these.
#include <cstring>

#include "ggml_blocks.hpp"
#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"
#include "tg/ir/float_formats.hpp"

namespace tg {

namespace {

using namespace ggml_blocks;

float fp32(uint16_t h) { return static_cast<float>(half_to_float(h)); }

void q4_0(const BlockQ4_0& x, float* y) {
  const float d = fp32(x.d);
  for (int j = 0; j < 16; ++j) {
    const int x0 = (x.qs[j] & 0x0F) - 8;
    const int x1 = (x.qs[j] >> 4) - 8;
    y[j] = x0 * d;
    y[j + 16] = x1 * d;
  }
}

void q4_1(const BlockQ4_1& x, float* y) {
  const float d = fp32(x.d), m = fp32(x.m);
  for (int j = 0; j < 16; ++j) {
    y[j] = (x.qs[j] & 0x0F) * d + m;
    y[j + 16] = (x.qs[j] >> 4) * d + m;
  }
}

void q5_0(const BlockQ5_0& x, float* y) {
  const float d = fp32(x.d);
  uint32_t qh = 0;
  std::memcpy(&qh, x.qh, 4);
  for (int j = 0; j < 16; ++j) {
    const auto xh_0 = static_cast<uint8_t>(((qh >> (j + 0)) << 4) & 0x10);
    const auto xh_1 = static_cast<uint8_t>(((qh >> (j + 12))) & 0x10);
    const int32_t x0 = ((x.qs[j] & 0x0F) | xh_0) - 16;
    const int32_t x1 = ((x.qs[j] >> 4) | xh_1) - 16;
    y[j] = x0 * d;
    y[j + 16] = x1 * d;
  }
}

void q5_1(const BlockQ5_1& x, float* y) {
  const float d = fp32(x.d), m = fp32(x.m);
  uint32_t qh = 0;
  std::memcpy(&qh, x.qh, 4);
  for (int j = 0; j < 16; ++j) {
    const auto xh_0 = static_cast<uint8_t>(((qh >> (j + 0)) << 4) & 0x10);
    const auto xh_1 = static_cast<uint8_t>(((qh >> (j + 12))) & 0x10);
    const int x0 = (x.qs[j] & 0x0F) | xh_0;
    const int x1 = (x.qs[j] >> 4) | xh_1;
    y[j] = x0 * d + m;
    y[j + 16] = x1 * d + m;
  }
}

void q8_0(const BlockQ8_0& x, float* y) {
  const float d = fp32(x.d);
  for (int j = 0; j < 32; ++j) y[j] = x.qs[j] * d;
}

void q2_k(const BlockQ2_K& x, float* y) {
  const float d = fp32(x.d), min = fp32(x.dmin);
  const uint8_t* q = x.qs;
  int is = 0;
  for (int n = 0; n < 256; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      uint8_t sc = x.scales[is++];
      float dl = d * (sc & 0xF), ml = min * (sc >> 4);
      for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<int8_t>((q[l] >> shift) & 3) - ml;
      sc = x.scales[is++];
      dl = d * (sc & 0xF);
      ml = min * (sc >> 4);
      for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<int8_t>((q[l + 16] >> shift) & 3) - ml;
      shift += 2;
    }
    q += 32;
  }
}

void q3_k(const BlockQ3_K& x, float* y) {
  const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f;
  uint32_t aux[4];
  int8_t scales[16];
  const float d_all = fp32(x.d);
  const uint8_t* q = x.qs;
  const uint8_t* hm = x.hmask;
  uint8_t m = 1;
  std::memcpy(aux, x.scales, 12);
  const uint32_t tmp = aux[2];
  aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
  aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
  aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
  aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
  std::memcpy(scales, aux, 16);
  int is = 0;
  for (int n = 0; n < 256; n += 128) {
    int shift = 0;
    for (int j = 0; j < 4; ++j) {
      float dl = d_all * (scales[is++] - 32);
      for (int l = 0; l < 16; ++l)
        *y++ = dl * (static_cast<int8_t>((q[l + 0] >> shift) & 3) - ((hm[l + 0] & m) ? 0 : 4));
      dl = d_all * (scales[is++] - 32);
      for (int l = 0; l < 16; ++l)
        *y++ = dl * (static_cast<int8_t>((q[l + 16] >> shift) & 3) - ((hm[l + 16] & m) ? 0 : 4));
      shift += 2;
      m = static_cast<uint8_t>(m << 1);
    }
    q += 32;
  }
}

void scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

void q4_k(const BlockQ4_K& x, float* y) {
  const uint8_t* q = x.qs;
  const float d = fp32(x.d), min = fp32(x.dmin);
  int is = 0;
  uint8_t sc = 0, m = 0;
  for (int j = 0; j < 256; j += 64) {
    scale_min_k4(is + 0, x.scales, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, x.scales, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    q += 32;
    is += 2;
  }
}

void q5_k(const BlockQ5_K& x, float* y) {
  const uint8_t* ql = x.qs;
  const uint8_t* qh = x.qh;
  const float d = fp32(x.d), min = fp32(x.dmin);
  int is = 0;
  uint8_t sc = 0, m = 0, u1 = 1, u2 = 2;
  for (int j = 0; j < 256; j += 64) {
    scale_min_k4(is + 0, x.scales, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, x.scales, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    ql += 32;
    is += 2;
    u1 = static_cast<uint8_t>(u1 << 2);
    u2 = static_cast<uint8_t>(u2 << 2);
  }
}

void q6_k(const BlockQ6_K& x, float* y) {
  const float d = fp32(x.d);
  const uint8_t* ql = x.ql;
  const uint8_t* qh = x.qh;
  const int8_t* sc = x.scales;
  for (int n = 0; n < 256; n += 128) {
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const auto q1 = static_cast<int8_t>(((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
      const auto q2 = static_cast<int8_t>(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
      const auto q3 = static_cast<int8_t>(((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      const auto q4 = static_cast<int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
      y[l + 0] = d * sc[is + 0] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
    y += 128;
    ql += 64;
    qh += 32;
    sc += 8;
  }
}

template <class Block, void (*F)(const Block&, float*)>
std::vector<float> blocks(std::span<const uint8_t> in, size_t elems) {
  const size_t n = in.size() / sizeof(Block);
  std::vector<float> out(n * elems);
  for (size_t b = 0; b < n; ++b) {
    Block x;
    std::memcpy(&x, in.data() + b * sizeof(Block), sizeof(Block));
    F(x, out.data() + b * elems);
  }
  return out;
}

} // namespace

std::vector<float> ggml_dequantize_host(GgmlType type, std::span<const uint8_t> in) {
  const GgmlTypeInfo& t = ggml_type_info(type);
  if (in.size() % t.block_bytes != 0)
    throw Error(std::to_string(in.size()) + " bytes are not whole blocks of " + t.name);
  std::vector<float> out;
  switch (type) {
  case GgmlType::F32:
    out.resize(in.size() / 4);
    std::memcpy(out.data(), in.data(), in.size());
    return out;
  case GgmlType::F16:
  case GgmlType::BF16:
    out.resize(in.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h = 0;
      std::memcpy(&h, in.data() + 2 * i, 2);
      out[i] = static_cast<float>(type == GgmlType::F16 ? half_to_float(h) : bf16_to_float(h));
    }
    return out;
  case GgmlType::Q4_0:
    return blocks<BlockQ4_0, q4_0>(in, 32);
  case GgmlType::Q4_1:
    return blocks<BlockQ4_1, q4_1>(in, 32);
  case GgmlType::Q5_0:
    return blocks<BlockQ5_0, q5_0>(in, 32);
  case GgmlType::Q5_1:
    return blocks<BlockQ5_1, q5_1>(in, 32);
  case GgmlType::Q8_0:
    return blocks<BlockQ8_0, q8_0>(in, 32);
  case GgmlType::Q2_K:
    return blocks<BlockQ2_K, q2_k>(in, 256);
  case GgmlType::Q3_K:
    return blocks<BlockQ3_K, q3_k>(in, 256);
  case GgmlType::Q4_K:
    return blocks<BlockQ4_K, q4_k>(in, 256);
  case GgmlType::Q5_K:
    return blocks<BlockQ5_K, q5_k>(in, 256);
  case GgmlType::Q6_K:
    return blocks<BlockQ6_K, q6_k>(in, 256);
  default:
    throw Error("cannot dequantize " + std::string(t.name));
  }
}

} // namespace tg
