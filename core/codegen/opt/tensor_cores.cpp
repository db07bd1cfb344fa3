// Tensor cores as data: which of a renderer's tensor cores serve a kernel's input and
// accumulator dtypes, the tile's axes by name (tc_names.hpp), and where each fragment element
// of a thread lies in the tile.
#include <algorithm>

#include "tc_names.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"

namespace tg {

std::vector<TensorCore> tensor_cores_for(const RendererCaps& caps, DType dtype_in,
                                         DType dtype_out) {
  std::vector<TensorCore> out;
  for (const TensorCore& tc : caps.tensor_cores) {
    if (std::string why = tc.check(); !why.empty())
      throw Error("codegen: the renderer describes a tensor core it cannot have: " + why);
    if (tc.dtype_in == dtype_in && tc.dtype_out == dtype_out) out.push_back(tc);
  }
  return out;
}

namespace opt_detail {

int TcNames::index(const std::string& name) const {
  const auto it = std::find(base.begin(), base.end(), name);
  if (it == base.end()) throw Error("codegen: the tensor core has no axis " + name);
  return static_cast<int>(it - base.begin());
}

TcNames tc_names(const TensorCore& tc) {
  TcNames t;
  int count_l = 0, count_u = 0;
  std::array<int, 2> bits{0, 0};
  for (const std::string& o : tc.opts) {
    const int d = o[1] - '0';
    t.base.push_back(std::string(1, o[0]) + std::to_string(o[0] == 'l' ? count_l++ : count_u++));
    t.dim.push_back(d);
    t.bit.push_back(bits[static_cast<size_t>(d)]++);
  }
  const int r = static_cast<int>(tc.reduce_axes());
  for (int i = 0; i < r; ++i) {
    t.base.push_back("r" + std::to_string(i));
    t.dim.push_back(2);
    t.bit.push_back(i);
  }
  std::vector<std::string> fwd;
  for (int i = 0; i < count_l; ++i) fwd.push_back("l" + std::to_string(i));
  for (int i = 0; i < count_u; ++i) fwd.push_back("u" + std::to_string(i));
  for (int i = 0; i < r; ++i) fwd.push_back("r" + std::to_string(i));
  for (size_t op = 0; op < 2; ++op) {
    const TensorCore::Operand& s = tc.swizzle[op];
    std::vector<std::string> flat = s.local;
    flat.insert(flat.end(), s.upcast.begin(), s.upcast.end());
    flat.insert(flat.end(), s.reduce.begin(), s.reduce.end());
    for (size_t i = 0; i < flat.size() && i < fwd.size(); ++i) t.carrier[op][flat[i]] = fwd[i];
  }
  std::vector<std::string> upcast_order;
  for (int i = count_u; i-- > 0;) upcast_order.push_back("u" + std::to_string(i));
  for (int i = r; i-- > 0;) upcast_order.push_back("r" + std::to_string(i));
  for (size_t op = 0; op < 3; ++op) {
    int64_t n = 0;
    for (int64_t e = tc.elements_per_thread[op]; e > 1; e /= 2) ++n;
    t.fragment[op].assign(upcast_order.begin(),
                          upcast_order.begin() + std::min<int64_t>(n, upcast_order.size()));
  }
  return t;
}

} // namespace opt_detail

TensorCoreLayout tensor_core_layout(const TensorCore& tc, int64_t lane) {
  const opt_detail::TcNames t = opt_detail::tc_names(tc);
  // The value of axis `name` for element e of an operand whose elements run over `frag`.
  auto value = [&](const std::string& name, const std::vector<std::string>& frag, int64_t e) {
    if (name[0] == 'l') return (lane >> std::stoi(name.substr(1))) & 1;
    const auto it = std::find(frag.begin(), frag.end(), name);
    if (it == frag.end()) return int64_t{0};
    const auto from_last = static_cast<int64_t>(frag.end() - it) - 1;
    return (e >> from_last) & 1;
  };
  // The (row, column) of element e of operand `op` (0 A: (m, k), 1 B: (k, n), 2 C: (m, n)).
  auto coords = [&](size_t op, int64_t e) {
    std::array<int64_t, 3> nmk{0, 0, 0};
    for (size_t i = 0; i < t.base.size(); ++i) {
      const std::string& s = t.base[i];
      const std::string& axis = op == 2 ? s : t.carrier[op].at(s);
      nmk[static_cast<size_t>(t.dim[i])] |= value(axis, t.fragment[op], e) << t.bit[i];
    }
    if (op == 0) return std::array<int64_t, 2>{nmk[1], nmk[2]};
    if (op == 1) return std::array<int64_t, 2>{nmk[2], nmk[0]};
    return std::array<int64_t, 2>{nmk[1], nmk[0]};
  };
  TensorCoreLayout out;
  for (int64_t e = 0; e < tc.elements_per_thread[0]; ++e) out.a.push_back(coords(0, e));
  for (int64_t e = 0; e < tc.elements_per_thread[1]; ++e) out.b.push_back(coords(1, e));
  for (int64_t e = 0; e < tc.elements_per_thread[2]; ++e) out.c.push_back(coords(2, e));
  return out;
}

} // namespace tg
