// Reference quantizers of GGML's block formats; see tg/ggml_quants.hpp. Each follows the
// arithmetic of llama.cpp's `quantize_row_*_ref` step for step (same float operations in the
// same order, no fused multiply-add: this file is compiled with -ffp-contract=off), because
// the blocks must be bit-identical to what llama-quantize writes for the same input.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "ggml_blocks.hpp"
#include "tg/error.hpp"
#include "tg/ggml_quants.hpp"
#include "tg/ir/float_formats.hpp"

namespace tg {

namespace {

using namespace ggml_blocks;

uint16_t fp16(float f) { return float_to_half(static_cast<double>(f)); }
float fp32(uint16_t h) { return static_cast<float>(half_to_float(h)); }

uint16_t bf16(float s) { // ggml_compute_fp32_to_bf16: NaN made quiet, else round to nearest even
  uint32_t u = 0;
  std::memcpy(&u, &s, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 64);
  return static_cast<uint16_t>((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

// Round to nearest by the magic-number trick (ggml's nearest_int): ties to even.
int nearest_int(float fval) {
  float val = fval + 12582912.f;
  int i = 0;
  std::memcpy(&i, &val, sizeof(int));
  return (i & 0x007fffff) - 0x00400000;
}

constexpr float kGroupMaxEps = 1e-15f;

void q4_0(const float* x, BlockQ4_0& y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; j++) {
    const float v = x[j];
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  const float d = max / -8;
  const float id = d ? 1.0f / d : 0.0f;
  y.d = fp16(d);
  for (int j = 0; j < 16; ++j) {
    const float x0 = x[0 + j] * id;
    const float x1 = x[16 + j] * id;
    const auto xi0 =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 8.5f))));
    const auto xi1 =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 8.5f))));
    y.qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
  }
}

void q4_1(const float* x, BlockQ4_1& y) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < 32; j++) {
    const float v = x[j];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const float d = (max - min) / ((1 << 4) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  y.d = fp16(d);
  y.m = fp16(min);
  for (int j = 0; j < 16; ++j) {
    const float x0 = (x[0 + j] - min) * id;
    const float x1 = (x[16 + j] - min) * id;
    const auto xi0 =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x0 + 0.5f))));
    const auto xi1 =
        static_cast<uint8_t>(std::min(15, static_cast<int>(static_cast<int8_t>(x1 + 0.5f))));
    y.qs[j] = static_cast<uint8_t>(xi0 | (xi1 << 4));
  }
}

void q5_0(const float* x, BlockQ5_0& y) {
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < 32; j++) {
    const float v = x[j];
    if (amax < std::fabs(v)) {
      amax = std::fabs(v);
      max = v;
    }
  }
  const float d = max / -16;
  const float id = d ? 1.0f / d : 0.0f;
  y.d = fp16(d);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const float x0 = x[0 + j] * id;
    const float x1 = x[16 + j] * id;
    const auto xi0 =
        static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x0 + 16.5f))));
    const auto xi1 =
        static_cast<uint8_t>(std::min(31, static_cast<int>(static_cast<int8_t>(x1 + 16.5f))));
    y.qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
    qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
    qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
  }
  std::memcpy(y.qh, &qh, sizeof(qh));
}

void q5_1(const float* x, BlockQ5_1& y) {
  float min = FLT_MAX, max = -FLT_MAX;
  for (int j = 0; j < 32; j++) {
    const float v = x[j];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const float d = (max - min) / ((1 << 5) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  y.d = fp16(d);
  y.m = fp16(min);
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const float x0 = (x[0 + j] - min) * id;
    const float x1 = (x[16 + j] - min) * id;
    const auto xi0 = static_cast<uint8_t>(x0 + 0.5f);
    const auto xi1 = static_cast<uint8_t>(x1 + 0.5f);
    y.qs[j] = static_cast<uint8_t>((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
    qh |= ((xi0 & 0x10u) >> 4) << (j + 0);
    qh |= ((xi1 & 0x10u) >> 4) << (j + 16);
  }
  std::memcpy(y.qh, &qh, sizeof(qh));
}

void q8_0(const float* x, BlockQ8_0& y) {
  float amax = 0.0f;
  for (int j = 0; j < 32; j++) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / ((1 << 7) - 1);
  const float id = d ? 1.0f / d : 0.0f;
  y.d = fp16(d);
  for (int j = 0; j < 32; ++j) y.qs[j] = static_cast<int8_t>(std::round(x[j] * id));
}

float make_qx_quants(int n, int nmax, const float* x, int8_t* L, int rmse_type) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  float iscale = -nmax / max;
  if (rmse_type == 0) {
    for (int i = 0; i < n; ++i) {
      const int l = nearest_int(iscale * x[i]);
      L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
    }
    return 1 / iscale;
  }
  // Only rmse_type 1 (weights x^2) is used by the reference quantizers (Q6_K).
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(iscale * x[i]);
    l = std::max(-nmax, std::min(nmax - 1, l));
    L[i] = static_cast<int8_t>(l + nmax);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  float scale = suml2 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumlx = suml2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * x[i]);
      l = std::max(-nmax, std::min(nmax - 1, l));
      const float w = x[i] * x[i];
      sumlx += w * x[i] * l;
      suml2 += w * l * l;
    }
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      for (int i = 0; i < n; ++i) {
        const int l = nearest_int(iscale * x[i]);
        L[i] = static_cast<int8_t>(nmax + std::max(-nmax, std::min(nmax - 1, l)));
      }
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

float make_q3_quants(int n, int nmax, const float* x, int8_t* L) { // do_rmse = true
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupMaxEps) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    return 0.f;
  }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearest_int(iscale * x[i]);
    l = std::max(-nmax, std::min(nmax - 1, l));
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    sumlx += w * x[i] * l;
    suml2 += w * l * l;
  }
  for (int itry = 0; itry < 5; ++itry) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      float slx = sumlx - w * x[i] * L[i];
      if (slx > 0) {
        float sl2 = suml2 - w * L[i] * L[i];
        int new_l = nearest_int(x[i] * sl2 / slx);
        new_l = std::max(-nmax, std::min(nmax - 1, new_l));
        if (new_l != L[i]) {
          slx += w * x[i] * new_l;
          sl2 += w * new_l * new_l;
          if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
            L[i] = static_cast<int8_t>(new_l);
            sumlx = slx;
            suml2 = sl2;
            ++n_changed;
          }
        }
      }
    }
    if (!n_changed) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                       float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                       bool use_mad) {
  float min = x[0], max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *the_min = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = nearest_int(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::max(0, std::min(nmax, l)));
    float diff = scale * L[i] + min - x[i];
    diff = use_mad ? std::fabs(diff) : diff * diff;
    const float w = weights[i];
    best_error += w * diff;
  }
  if (nstep < 1) {
    *the_min = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearest_int(iscale * (x[i] - min));
      l = std::max(0, std::min(nmax, l));
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      sum_l += w * l;
      sum_l2 += w * l * l;
      sum_xl += w * l * x[i];
    }
    const float D = sum_w * sum_l2 - sum_l * sum_l;
    if (D > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        float diff = this_scale * Laux[i] + this_min - x[i];
        diff = use_mad ? std::fabs(diff) : diff * diff;
        const float w = weights[i];
        cur_error += w * diff;
      }
      if (cur_error < best_error) {
        for (int i = 0; i < n; ++i) L[i] = Laux[i];
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

void q2_k(const float* x, BlockQ2_K& y) {
  uint8_t L[256], Laux[16];
  float weights[16], mins[16], scales[16];
  const float q4scale = 15.f;
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 16; ++j) {
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(x[16 * j + l]);
    scales[j] = make_qkx2_quants(16, 3, x + 16 * j, weights, L + 16 * j, &mins[j], Laux, -0.5f,
                                 0.1f, 15, true);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  if (max_scale > 0) {
    const float iscale = q4scale / max_scale;
    for (int j = 0; j < 16; ++j)
      y.scales[j] = static_cast<uint8_t>(nearest_int(iscale * scales[j]));
    y.d = fp16(max_scale / q4scale);
  } else {
    for (int j = 0; j < 16; ++j) y.scales[j] = 0;
    y.d = fp16(0.f);
  }
  if (max_min > 0) {
    const float iscale = q4scale / max_min;
    for (int j = 0; j < 16; ++j) {
      const int l = nearest_int(iscale * mins[j]);
      y.scales[j] = static_cast<uint8_t>(y.scales[j] | (l << 4));
    }
    y.dmin = fp16(max_min / q4scale);
  } else {
    y.dmin = fp16(0.f);
  }
  for (int j = 0; j < 16; ++j) {
    const float d = fp32(y.d) * (y.scales[j] & 0xF);
    if (!d) continue;
    const float dm = fp32(y.dmin) * (y.scales[j] >> 4);
    for (int ii = 0; ii < 16; ++ii) {
      int l = nearest_int((x[16 * j + ii] + dm) / d);
      l = std::max(0, std::min(3, l));
      L[16 * j + ii] = static_cast<uint8_t>(l);
    }
  }
  for (int j = 0; j < 256; j += 128)
    for (int l = 0; l < 32; ++l)
      y.qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                             (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

void q3_k(const float* x, BlockQ3_K& y) {
  int8_t L[256];
  float scales[16];
  float max_scale = 0, amax = 0;
  for (int j = 0; j < 16; ++j) {
    scales[j] = make_q3_quants(16, 4, x + 16 * j, L + 16 * j);
    const float scale = std::fabs(scales[j]);
    if (scale > amax) {
      amax = scale;
      max_scale = scales[j];
    }
  }
  std::memset(y.scales, 0, 12);
  if (max_scale) {
    const float iscale = -32.f / max_scale;
    for (int j = 0; j < 16; ++j) {
      auto l = static_cast<int8_t>(nearest_int(iscale * scales[j]));
      l = static_cast<int8_t>(std::max<int>(-32, std::min<int>(31, l)) + 32);
      if (j < 8)
        y.scales[j] = static_cast<uint8_t>(l & 0xF);
      else
        y.scales[j - 8] = static_cast<uint8_t>(y.scales[j - 8] | ((l & 0xF) << 4));
      l = static_cast<int8_t>(l >> 4);
      y.scales[j % 4 + 8] = static_cast<uint8_t>(y.scales[j % 4 + 8] | (l << (2 * (j / 4))));
    }
    y.d = fp16(1 / iscale);
  } else {
    y.d = fp16(0.f);
  }
  for (int j = 0; j < 16; ++j) {
    auto sc = static_cast<int8_t>(j < 8 ? y.scales[j] & 0xF : y.scales[j - 8] >> 4);
    sc = static_cast<int8_t>((sc | (((y.scales[8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32);
    const float d = fp32(y.d) * sc;
    if (!d) continue;
    for (int ii = 0; ii < 16; ++ii) {
      int l = nearest_int(x[16 * j + ii] / d);
      l = std::max(-4, std::min(3, l));
      L[16 * j + ii] = static_cast<int8_t>(l + 4);
    }
  }
  std::memset(y.hmask, 0, 32);
  int m = 0;
  uint8_t hm = 1;
  for (int j = 0; j < 256; ++j) {
    if (L[j] > 3) {
      y.hmask[m] = static_cast<uint8_t>(y.hmask[m] | hm);
      L[j] = static_cast<int8_t>(L[j] - 4);
    }
    if (++m == 32) {
      m = 0;
      hm = static_cast<uint8_t>(hm << 1);
    }
  }
  for (int j = 0; j < 256; j += 128)
    for (int l = 0; l < 32; ++l)
      y.qs[j / 4 + l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 2) |
                                             (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
}

void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

// The shared scale/min search of Q4_K and Q5_K (nmax 15 or 31); fills L and the packed scales.
template <class Block>
void qk_scales_mins(const float* x, Block& y, uint8_t* L, int nmax, float rmin, int nstep) {
  uint8_t Laux[32];
  float weights[32], mins[8], scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += x[32 * j + l] * x[32 * j + l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(x[32 * j + l]);
    scales[j] = make_qkx2_quants(32, nmax, x + 32 * j, weights, L + 32 * j, &mins[j], Laux, rmin,
                                 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; ++j) {
    auto ls = static_cast<uint8_t>(nearest_int(inv_scale * scales[j]));
    auto lm = static_cast<uint8_t>(nearest_int(inv_min * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    if (j < 4) {
      y.scales[j] = ls;
      y.scales[j + 4] = lm;
    } else {
      y.scales[j + 4] = static_cast<uint8_t>((ls & 0xF) | ((lm & 0xF) << 4));
      y.scales[j - 4] = static_cast<uint8_t>(y.scales[j - 4] | ((ls >> 4) << 6));
      y.scales[j - 0] = static_cast<uint8_t>(y.scales[j - 0] | ((lm >> 4) << 6));
    }
  }
  y.d = fp16(max_scale / 63.f);
  y.dmin = fp16(max_min / 63.f);
  uint8_t sc = 0, m = 0;
  for (int j = 0; j < 8; ++j) {
    get_scale_min_k4(j, y.scales, &sc, &m);
    const float d = fp32(y.d) * sc;
    if (!d) continue;
    const float dm = fp32(y.dmin) * m;
    for (int ii = 0; ii < 32; ++ii) {
      int l = nearest_int((x[32 * j + ii] + dm) / d);
      l = std::max(0, std::min(nmax, l));
      L[32 * j + ii] = static_cast<uint8_t>(l);
    }
  }
}

void q4_k(const float* x, BlockQ4_K& y) {
  uint8_t L[256];
  qk_scales_mins(x, y, L, 15, -1.f, 20);
  uint8_t* q = y.qs;
  for (int j = 0; j < 256; j += 64) {
    for (int l = 0; l < 32; ++l) q[l] = static_cast<uint8_t>(L[j + l] | (L[j + l + 32] << 4));
    q += 32;
  }
}

void q5_k(const float* x, BlockQ5_K& y) {
  uint8_t L[256];
  qk_scales_mins(x, y, L, 31, -0.5f, 15);
  uint8_t* qh = y.qh;
  uint8_t* ql = y.qs;
  std::memset(qh, 0, 32);
  uint8_t m1 = 1, m2 = 2;
  for (int n = 0; n < 256; n += 64) {
    for (int j = 0; j < 32; ++j) {
      int l1 = L[n + j];
      if (l1 > 15) {
        l1 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | m1);
      }
      int l2 = L[n + j + 32];
      if (l2 > 15) {
        l2 -= 16;
        qh[j] = static_cast<uint8_t>(qh[j] | m2);
      }
      ql[j] = static_cast<uint8_t>(l1 | (l2 << 4));
    }
    m1 = static_cast<uint8_t>(m1 << 2);
    m2 = static_cast<uint8_t>(m2 << 2);
    ql += 32;
  }
}

void q6_k(const float* x, BlockQ6_K& y) {
  int8_t L[256];
  float scales[16];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 16; ++ib) {
    const float scale = make_qx_quants(16, 32, x + 16 * ib, L + 16 * ib, 1);
    scales[ib] = scale;
    const float abs_scale = std::fabs(scale);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scale;
    }
  }
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(&y, 0, sizeof(y));
    y.d = fp16(0.f);
    return;
  }
  const float iscale = -128.f / max_scale;
  y.d = fp16(1 / iscale);
  for (int ib = 0; ib < 16; ++ib)
    y.scales[ib] = static_cast<int8_t>(std::min(127, nearest_int(iscale * scales[ib])));
  for (int j = 0; j < 16; ++j) {
    const float d = fp32(y.d) * y.scales[j];
    if (!d) continue;
    for (int ii = 0; ii < 16; ++ii) {
      int l = nearest_int(x[16 * j + ii] / d);
      l = std::max(-32, std::min(31, l));
      L[16 * j + ii] = static_cast<int8_t>(l + 32);
    }
  }
  uint8_t* ql = y.ql;
  uint8_t* qh = y.qh;
  for (int j = 0; j < 256; j += 128) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t q1 = L[j + l + 0] & 0xF;
      const uint8_t q2 = L[j + l + 32] & 0xF;
      const uint8_t q3 = L[j + l + 64] & 0xF;
      const uint8_t q4 = L[j + l + 96] & 0xF;
      ql[l + 0] = static_cast<uint8_t>(q1 | (q3 << 4));
      ql[l + 32] = static_cast<uint8_t>(q2 | (q4 << 4));
      qh[l] = static_cast<uint8_t>((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                                   ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
    }
    ql += 64;
    qh += 32;
  }
}

template <class Block, void (*F)(const float*, Block&)>
void blocks(std::span<const float> x, uint8_t* out, size_t elems) {
  static_assert(std::is_trivially_copyable_v<Block>);
  for (size_t b = 0; b < x.size() / elems; ++b) {
    Block y{};
    F(x.data() + b * elems, y);
    std::memcpy(out + b * sizeof(Block), &y, sizeof(Block));
  }
}

} // namespace

bool ggml_can_quantize(GgmlType type) {
  const GgmlTypeInfo& t = ggml_type_info(type);
  return t.loadable;
}

std::vector<uint8_t> ggml_quantize(GgmlType type, std::span<const float> x, int64_t n_per_row) {
  const GgmlTypeInfo& t = ggml_type_info(type);
  if (!t.loadable)
    throw Error("cannot quantize to " + std::string(t.name) +
                " (can: " + ggml_loadable_type_names() + ")");
  if (n_per_row <= 0 || n_per_row % t.block_elems != 0 ||
      x.size() % static_cast<size_t>(n_per_row) != 0)
    throw Error("cannot quantize rows of " + std::to_string(n_per_row) + " elements to " + t.name +
                ": a row must be a multiple of " + std::to_string(t.block_elems) + " elements");
  std::vector<uint8_t> out(x.size() / t.block_elems * t.block_bytes);
  uint8_t* o = out.data();
  switch (type) {
  case GgmlType::F32:
    std::memcpy(o, x.data(), x.size() * 4);
    break;
  case GgmlType::F16:
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t h = fp16(x[i]);
      std::memcpy(o + 2 * i, &h, 2);
    }
    break;
  case GgmlType::BF16:
    for (size_t i = 0; i < x.size(); ++i) {
      const uint16_t h = bf16(x[i]);
      std::memcpy(o + 2 * i, &h, 2);
    }
    break;
  case GgmlType::Q4_0:
    blocks<BlockQ4_0, q4_0>(x, o, 32);
    break;
  case GgmlType::Q4_1:
    blocks<BlockQ4_1, q4_1>(x, o, 32);
    break;
  case GgmlType::Q5_0:
    blocks<BlockQ5_0, q5_0>(x, o, 32);
    break;
  case GgmlType::Q5_1:
    blocks<BlockQ5_1, q5_1>(x, o, 32);
    break;
  case GgmlType::Q8_0:
    blocks<BlockQ8_0, q8_0>(x, o, 32);
    break;
  case GgmlType::Q2_K:
    blocks<BlockQ2_K, q2_k>(x, o, 256);
    break;
  case GgmlType::Q3_K:
    blocks<BlockQ3_K, q3_k>(x, o, 256);
    break;
  case GgmlType::Q4_K:
    blocks<BlockQ4_K, q4_k>(x, o, 256);
    break;
  case GgmlType::Q5_K:
    blocks<BlockQ5_K, q5_k>(x, o, 256);
    break;
  case GgmlType::Q6_K:
    blocks<BlockQ6_K, q6_k>(x, o, 256);
    break;
  default:
    throw Error("cannot quantize to " + std::string(t.name));
  }
  return out;
}

} // namespace tg
