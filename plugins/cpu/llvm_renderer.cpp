// The host's side of the LLVM IR renderer: the CPU calling convention (llvm_renderer.hpp).
#include "llvm_renderer.hpp"

#include "tg/knobs.hpp"

namespace tg::cpu {

LlvmRenderer::LlvmRenderer(int64_t vector_lanes, bool vpdpbusd) {
  caps_.vector_lanes = vector_lanes;
  caps_.has_dot4 = vpdpbusd;
  caps_.has_local = false;
  caps_.has_shared = false;
  caps_.supports_float4 = true;
  caps_.supports_half = true;
  // exp2, log2 and sin as polynomials (decompose_transcendentals), as tinygrad's CPU renderers
  // do: LLVM lowers llvm.exp2 on a vector to one libm call per lane, while the polynomial runs
  // on whole vector registers (tg_bench_unary: exp over 4M floats 2.8 -> 0.8 ms on 2 cores,
  // with elementwise kernels upcast a register wide).
  caps_.has_transcendentals = false;
  caps_.global_max = {0x7fffffff, 0x7fffffff, 0x7fffffff};
}

std::string LlvmRenderer::render_param(LLVMIRContext& c, const UOp& u) const {
  const std::string s = std::to_string(std::get<int64_t>(u.arg));
  c.entry.push_back("  %bp" + s + " = getelementptr inbounds ptr, ptr %bufs, i64 " + s);
  c.entry.push_back("  %data" + s + " = load ptr, ptr %bp" + s + ", align 8");
  return "%data" + s;
}

std::string LlvmRenderer::render_define_var(LLVMIRContext& c, const UOp& u) const {
  const std::string i = std::to_string(c.nvars++), v = "%var" + i;
  c.entry.push_back("  %vp" + i + " = getelementptr inbounds i64, ptr %vars, i64 " + i);
  c.entry.push_back("  " + v + ".64 = load i64, ptr %vp" + i + ", align 8");
  if (bits(u.dtype) == 64) return v + ".64";
  c.entry.push_back("  " + v + " = trunc i64 " + v + ".64 to " + type(u.dtype));
  return v;
}

std::string LlvmRenderer::render_special(LLVMIRContext& c, const UOp& u) const {
  const std::string name = std::get<std::string>(u.arg);
  std::string start = "0", end = c[u.src[0]];
  if (name == "gidx0") {
    start = "%gidx0_begin";
    end = "%gidx0_end";
    if (bits(u.dtype) != 64) {
      start = c.op("trunc i64 %gidx0_begin to " + type(u.dtype));
      end = c.op("trunc i64 %gidx0_end to " + type(u.dtype));
    }
  } else if (name != "gidx1" && name != "gidx2") {
    unsupported(u, "the CPU has global indices gidx0..gidx2 only (no local work groups)");
  }
  c.open_specials.push_back(open_loop(c, u.dtype, start, end));
  return c.open_specials.back().var;
}

// CPU_NT_STORE_MB (16 by default). Measured with tg_bench_tensor's add on a 2-core EPYC: a 16 MiB
// output 40 -> 64 GB/s, 32 MiB 40 -> 62, 64 MiB 35 -> 52 (OpenBLAS saxpy, which writes in place:
// 66); at 4 MiB the runs went either way. The mnist training step did not change. Unaligned
// 16-lane stores lower to 8-byte non-temporal stores: a buffer's alignment is the allocator's, or
// a borrowed array's, so nothing more is promised to LLVM.
int64_t LlvmRenderer::nontemporal_store_bytes() const {
  return knobs::CPU_NT_STORE_MB.get() * (int64_t{1} << 20);
}

// One thread per work group: nothing to wait for.
void LlvmRenderer::render_barrier(LLVMIRContext&, const UOp&) const {}

// A work group of one thread: its memory is private.
std::string LlvmRenderer::render_local(LLVMIRContext& c, const UOp& u) const {
  if (u.dtype.size <= 0) unsupported(u, "work-group memory needs a positive size");
  return alloca_array(c, u.dtype.base(), u.dtype.size);
}

namespace {
std::string vec_type(int64_t n) { return "<" + std::to_string(n) + " x i32>"; }

// Lanes [first, first + n) of the int32 vector `v` of `from` lanes (from == 1: a scalar) as a
// vector of `to` lanes, the lanes past `from` poison.
std::string lanes(LLVMIRContext& c, const std::string& v, int64_t from, int64_t first, int64_t n,
                  int64_t to) {
  if (from == 1) return c.op("insertelement " + vec_type(to) + " poison, i32 " + v + ", i32 0");
  std::string mask;
  for (int64_t i = 0; i < to; ++i)
    mask += (i ? ", i32 " : "i32 ") + (i < n ? std::to_string(first + i) : std::string("poison"));
  return c.op("shufflevector " + vec_type(from) + " " + v + ", " + vec_type(from) + " poison, " +
              vec_type(to) + " <" + mask + ">");
}
} // namespace

// DOT4 as vpdpbusd: one instruction per 4, 8 or 16 lanes; a wider vector is split into 16-lane
// pieces and joined again, a narrower or odd one padded with poison lanes.
std::string LlvmRenderer::render_dot4(LLVMIRContext& c, const UOp& u) const {
  const int64_t n = u.dtype.count;
  int64_t padded = 4;
  while (padded < n) padded *= 2;
  const int64_t piece = std::min<int64_t>(padded, 16);
  const std::string pt = vec_type(piece);
  const std::string fn = "@llvm.x86.avx512.vpdpbusd." + std::to_string(32 * piece);
  c.declares.insert("declare " + pt + " " + fn + "(" + pt + ", " + pt + ", " + pt + ")");
  std::vector<std::string> results;
  for (int64_t first = 0; first < padded; first += piece) {
    if (first >= n) { // a piece wholly past the lanes there are
      results.push_back("poison");
      continue;
    }
    const int64_t take = std::min(piece, n - first);
    std::string args;
    for (int i = 0; i < 3; ++i) {
      const std::string& v = c[u.src[i]];
      const std::string arg = n == piece ? v : lanes(c, v, n, first, take, piece);
      args += (i ? ", " : "") + pt + " " + arg;
    }
    results.push_back(c.op("call " + pt + " " + fn + "(" + args + ")"));
  }
  // Join the pieces pairwise (their count is a power of two).
  for (int64_t w = piece; results.size() > 1; w *= 2) {
    std::vector<std::string> joined;
    for (size_t i = 0; i < results.size(); i += 2) {
      std::string mask;
      for (int64_t l = 0; l < 2 * w; ++l) mask += (l ? ", i32 " : "i32 ") + std::to_string(l);
      joined.push_back(c.op("shufflevector " + vec_type(w) + " " + results[i] + ", " + vec_type(w) +
                            " " + results[i + 1] + ", " + vec_type(2 * w) + " <" + mask + ">"));
    }
    results = std::move(joined);
  }
  const std::string& r = results[0];
  if (n == padded) return r;
  if (n == 1) return c.op("extractelement " + pt + " " + r + ", i32 0");
  return lanes(c, r, padded, 0, n, n);
}

std::string LlvmRenderer::render_kernel(const std::string& name, LLVMIRContext& c) const {
  for (auto it = c.open_specials.rbegin(); it != c.open_specials.rend(); ++it) close_loop(c, *it);
  const std::string tail = module_tail(c);
  size_t bytes = 256 + name.size() + c.body.size() + tail.size();
  for (const auto& l : c.entry) bytes += l.size() + 1;
  std::string out; // one buffer, sized first: a kernel's text is tens of kilobytes
  out.reserve(bytes);
  out.append("define void @").append(name);
  out.append("(ptr noalias nocapture readonly %bufs, ptr noalias nocapture readonly %vars, "
             "i64 %gidx0_begin, i64 %gidx0_end) #0 {\nentry:\n");
  for (const auto& l : c.entry) out.append(l).push_back('\n');
  out.append(c.body);
  out.append("  ret void\n}\n").append(tail).append("attributes #0 = { nounwind }\n");
  return out;
}

} // namespace tg::cpu
