#pragma once
// Building linearized kernels by hand and running them on the CPU device through a renderer.
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "cpu_device.hpp"
#include "tg/ir/uop.hpp"

namespace tg::cpu::test {

// The kernel list in program order. add(u) first adds any source not yet in the list (so
// constants and index arithmetic land right before their first use), then u itself.
class Linear {
public:
  const UOpPtr& add(const UOpPtr& u) {
    if (!seen_.count(u.get())) {
      for (const auto& s : u->src) add(s);
      seen_.insert(u.get());
      list_.push_back(u);
    }
    return u;
  }
  const std::vector<UOpPtr>& list() const { return list_; }

private:
  std::vector<UOpPtr> list_;
  std::unordered_set<const UOp*> seen_;
};

inline UOpPtr param(int64_t slot, DType elem, int64_t n) {
  return UOp::make(Ops::PARAM, elem.ptr(n), {}, slot);
}
inline UOpPtr cnst(DType d, ConstValue v) { return UOp::const_(d, v); }
inline UOpPtr ci(int64_t v) { return UOp::const_(dtypes::int32, v); }
inline UOpPtr special(const std::string& name, int64_t size) {
  return UOp::make(Ops::SPECIAL, dtypes::int32, {ci(size)}, name);
}
inline UOpPtr index(const UOpPtr& buf, const UOpPtr& idx, const UOpPtr& gate = nullptr) {
  if (gate) return UOp::make(Ops::INDEX, buf->dtype, {buf, idx, gate});
  return UOp::make(Ops::INDEX, buf->dtype, {buf, idx});
}
inline UOpPtr load(const UOpPtr& idx, DType d = {}, const UOpPtr& alt = nullptr) {
  const DType dt = d == DType{} ? idx->dtype.base() : d;
  if (alt) return UOp::make(Ops::LOAD, dt, {idx, alt});
  return UOp::make(Ops::LOAD, dt, {idx});
}
inline UOpPtr store(const UOpPtr& idx, const UOpPtr& v) {
  return UOp::make(Ops::STORE, dtypes::void_, {idx, v});
}
inline UOpPtr end(const UOpPtr& range, const UOpPtr& last) {
  return UOp::make(Ops::END, dtypes::void_, {range, last});
}

// Host data of one buffer.
struct HostBuf {
  std::vector<uint8_t> bytes;
  template <class T> static HostBuf of(const std::vector<T>& v) {
    HostBuf b;
    b.bytes.resize(v.size() * sizeof(T));
    std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
    return b;
  }
  template <class T> static HostBuf zeros(size_t n) { return of(std::vector<T>(n)); }
  template <class T> std::vector<T> as() const {
    std::vector<T> v(bytes.size() / sizeof(T));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  }
};

// Renders, compiles and loads `uops` with `renderer`, copies `bufs` in, runs over `global`
// work items, and copies every buffer back out.
inline void run_kernel(CpuDevice& dev, const std::string& renderer, const std::string& name,
                       const std::vector<UOpPtr>& uops, std::vector<HostBuf>& bufs,
                       std::vector<int64_t> vars = {}, std::array<int64_t, 3> global = {1, 1, 1}) {
  const std::string src = dev.renderer(renderer).render(name, uops);
  auto binary = dev.compiler(renderer).compile(src);
  auto prg = dev.load(name, binary);
  Allocator& a = dev.allocator();
  LaunchArgs args;
  for (auto& b : bufs) {
    DevicePtr p = a.alloc(b.bytes.size());
    a.copy_in(p, b.bytes.data(), b.bytes.size());
    args.buffers.push_back(p);
  }
  args.vars = std::move(vars);
  args.global = global;
  prg->run(args, false);
  for (size_t i = 0; i < bufs.size(); ++i) {
    a.copy_out(bufs[i].bytes.data(), args.buffers[i], bufs[i].bytes.size());
    a.free(args.buffers[i], bufs[i].bytes.size());
  }
}

// One device for the whole test binary (the JIT and clang are slow to start).
inline CpuDevice& device() {
  static CpuDevice dev;
  return dev;
}

inline const std::string kRenderers[] = {"LLVM", "C"};

} // namespace tg::cpu::test
