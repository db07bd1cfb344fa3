#pragma once
// Vector ALU split into lanes, for RendererCaps::extra_matcher of C dialects whose kernels keep
// vectors only as loads, stores and their lanes (CUDA C, OpenCL C here).
#include "tg/ir/pattern_matcher.hpp"

namespace tg {

// Vector ALU ops, casts and bitcasts become one scalar op per lane put together with VECTORIZE;
// lanes taken from a VECTORIZE, a GEP or a vector constant fold; VECTORIZE(GEP(x, 0..n-1)) of
// an n-lane x is x. After it no vector wider than a load or store survives.
const PatternMatcher& split_vector_alu();

} // namespace tg
