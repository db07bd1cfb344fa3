#pragma once
// Every environment knob, declared once with its type, default, accepted values and a one-line
// doc (tinygrad's ContextVar), and the scoped override tests use instead of setenv (tinygrad's
// Context). Nothing else in the project reads the environment: a knob is read the first time
// it is asked for, checked, and kept; a value it does not accept raises tg::Error naming the
// knob and what it takes.
//
//   if (tg::knobs::DEBUG >= 2) ...
//   tg::Context scope{{"JIT", 0}, {"DEV", "CPU:C"}}; // restored when the scope ends
//
// The README's knob table is checked against this list by a test (knobs.readme).
//
// The knobs live in libtg and are exported, so plugins (which link libtg and see this header
// through the plugin API) read the same values and the same overrides as the core.
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tg {

// What a knob is, for the registry, the README check and error messages.
class Knob {
public:
  enum class Type : uint8_t { Int, String };
  constexpr Knob(Type type, const char* name, const char* accepts, const char* doc)
      : type_(type), name_(name), accepts_(accepts), doc_(doc) {}
  Type type() const { return type_; }
  std::string_view name() const { return name_; }
  std::string_view accepts() const { return accepts_; } // "0..7", "a path", ...
  std::string_view doc() const { return doc_; }
  // The current value as text (the default when unset).
  std::string text() const;

protected:
  // The raw environment value (nullptr when unset or empty): the one getenv in the project.
  const char* env() const;

private:
  Type type_;
  const char* name_;
  const char* accepts_;
  const char* doc_;
};

// An integer knob, valid in [min, max]. Booleans are 0..1.
class IntKnob : public Knob {
public:
  constexpr IntKnob(const char* name, int64_t fallback, int64_t min, int64_t max,
                    const char* accepts, const char* doc)
      : Knob(Type::Int, name, accepts, doc), default_(fallback), min_(min), max_(max) {}

  int64_t get() const {
    if (set_.load(std::memory_order_acquire)) return value_.load(std::memory_order_relaxed);
    return load();
  }
  operator int64_t() const { return get(); } // NOLINT: reads like tinygrad's `DEBUG >= 2`
  int64_t fallback() const { return default_; }
  // `text` checked as this knob's value; raises tg::Error naming the knob (`origin` says where
  // the text came from: "environment variable", "Context").
  int64_t parse(std::string_view text, std::string_view origin) const;

private:
  friend class Context;
  int64_t load() const;
  int64_t default_, min_, max_;
  mutable std::atomic<int64_t> value_{0};
  mutable std::atomic<bool> set_{false};
};

// A string knob (a path, a device spec). Empty means unset.
class StringKnob : public Knob {
public:
  constexpr StringKnob(const char* name, const char* fallback, const char* accepts, const char* doc)
      : Knob(Type::String, name, accepts, doc), default_(fallback) {}

  std::string get() const {
    if (const std::string* v = value_.load(std::memory_order_acquire)) return *v;
    return load();
  }
  operator std::string() const { return get(); } // NOLINT
  bool empty() const { return get().empty(); }

private:
  friend class Context;
  std::string load() const;
  const char* default_;
  // Leaked on purpose when replaced: a reader on another thread may still hold the old one.
  mutable std::atomic<const std::string*> value_{nullptr};
};

// Every knob: name, default, accepted values, doc. Integers: INT(name, default, min, max,
// accepts, doc); strings: STR(name, default, accepts, doc).
// clang-format off
#define TG_FOR_EACH_KNOB(INT, STR)                                                                 \
  INT(DEBUG, 0, 0, 7, "0..7",                                                                      \
      "verbosity: 1 schedule sizes, 2 kernel launches, 3 kernel ASTs, 4 source, 5 linearized uops, 7 assembly") \
  STR(DEV, "", "DEVICE[:N][:RENDERER[:ARCH]]",                                                     \
      "the device (N: the N-th of its kind), renderer and architecture to use (CPU, CPU:C, CL:1, CUDA:PTX:sm_90); unset: the best available") \
  INT(SPEC, 0, 0, 1, "0 or 1",                                                                     \
      "check every node built, and every pass's result, against the IR spec")                     \
  INT(TRACK_MATCH_STATS, 0, 0, 2, "0..2",                                                          \
      "1 counts pattern-rule attempts, matches and time, and time per pass; 2 also prints them at exit") \
  INT(REWRITE_LIMIT, 1000000, 1, std::numeric_limits<int64_t>::max(), "a positive integer",         \
      "successive rewrites of one node before graph_rewrite reports non-termination")              \
  INT(REWRITE_CHECK_FINAL, 0, 0, 1, "0 or 1",                                                      \
      "1: graph_rewrite checks each result a rule claims final (symbolic's sums) instead of trusting it") \
  STR(PRINT_AFTER, "", "pass names, comma-separated, or all",                                      \
      "print the graph after each named pass (expand or codegen/expand; TRACK_MATCH_STATS=2 lists them)") \
  INT(NOOPT, 0, 0, 1, "0 or 1", "turn the kernel optimizer's heuristic off (no UPCAST/UNROLL/LOCAL/GROUP)")    \
  INT(CUDA_INDEX64, 0, 0, 1, "0 or 1",                                                             \
      "1: CUDA kernels keep 64-bit index arithmetic even where every index fits in 32 bits")     \
  INT(TC, 1, 0, 2, "0..2",                                                                         \
      "tensor cores in the heuristic (tinygrad's USE_TC): 0 off, 1 WMMA, 2 the tensor-core shape without WMMA") \
  INT(MV_THREADS_PER_ROW, 8, 1, 1024, "a positive integer",                                           \
      "GPU matrix-vector products: work items that share one row's sum (tinygrad's)")            \
  INT(MV_ROWS_PER_THREAD, 4, 1, 64, "a positive integer",                                            \
      "GPU matrix-vector products: rows each work item computes (tinygrad's)")                   \
  INT(MV_BLOCKSIZE, 4, 1, 1024, "a positive integer",                                            \
      "GPU matrix-vector products: rows of a work group (tinygrad's)")                           \
  INT(TC_OPT, 0, 0, 2, "0..2",                                                                     \
      "which kernels the heuristic gives tensor cores: 0 one reduce axis, 1 more reduce axes, 2 also shapes padded to the tile") \
  INT(TC_SELECT, -1, -1, 64, "-1..64",                                                             \
      "the heuristic's tensor core: -1 the first that fits, else its index in the renderer's list") \
  INT(BEAM, 0, 0, 64, "0..64",                                                                     \
      "search each kernel's Opts with a beam of this width, timing candidates on the device (0: the heuristic)") \
  INT(BEAM_UOPS_MAX, 3000, 1, std::numeric_limits<int64_t>::max(), "a positive integer",           \
      "BEAM drops candidates whose linearized kernel has more uops than this")                     \
  INT(BEAM_TIMEOUT, 1000, 1, std::numeric_limits<int64_t>::max(), "milliseconds",                  \
      "BEAM drops candidates whose first run takes longer than this")                              \
  INT(BEAM_UPCAST_MAX, 256, 1, 4096, "a positive integer",                                         \
      "BEAM: at most this many upcast and unrolled lanes per candidate")                           \
  INT(BEAM_LOCAL_MAX, 1024, 1, 65536, "a positive integer",                                        \
      "BEAM: at most this many work items per work group")                                         \
  INT(IGNORE_BEAM_CACHE, 0, 0, 1, "0 or 1",                                                        \
      "1: BEAM searches even when the disk cache has a result (and replaces it)")                  \
  INT(TRANSCENDENTAL, 1, 0, 2, "0..2",                                                             \
      "2 decomposes exp2/log2/sin into polynomials even where the renderer has them")             \
  INT(DISABLE_FAST_IDIV, 0, 0, 1, "0 or 1",                                                        \
      "keep integer division by constants as division (no multiply + shift)")                     \
  INT(FP_CONTRACT, 1, 0, 1, "0 or 1",                                                              \
      "1 lets the LLVM IR and C renderers fuse a float multiply and add into one rounding (FMA); 0 rounds each") \
  INT(JIT, 1, 0, 1, "0 or 1", "0 turns TinyJit off: every call runs the step function")           \
  INT(CPU_NT_STORE_MB, 16, 0, 1 << 20, "MiB, 0 for never",                                       \
      "CPU: elementwise kernels write outputs of at least this many MiB with non-temporal stores (past the caches)") \
  INT(CPU_MATMUL_PACK, 1, 0, 1, "0 or 1",                                                           \
      "CPU: a float32 a @ b with at least 64 rows first copies b into column panels its register tile reads whole (tg/codegen_opt.hpp matmul_panel_width); 0: b is read in place") \
  INT(CPU_DOT4, 1, 0, 1, "0 or 1",                                                                  \
      "CPU: DOT4 (the int8 dot product of quantized matmuls) as vpdpbusd where the host has AVX512-VNNI; 0: decomposed, and the LLM's quantized matmuls dequantize to float32 instead") \
  INT(CPU_THREADS, 0, 0, 4096, "0..4096", "at most this many threads per CPU kernel launch; 0: all cores") \
  INT(CPU_PERF_MAP, 0, 0, 1, "0 or 1",                                                              \
      "CPU: 1 appends each JIT-loaded kernel's address, size and name to /tmp/perf-PID.map, so perf report names the kernels") \
  STR(TG_PLUGIN_PATH, "", "folders or files, colon-separated",                                     \
      "searched for device plugins before the standard places")                                   \
  STR(TG_CACHE_DIR, "", "a folder", "where compiled kernels are cached (default ~/.cache/tg)")      \
  INT(TG_COMPILER_CACHE, 1, 0, 1, "0 or 1", "0 turns the compiled-kernel cache off")               \
  STR(TG_DATA_DIR, "", "a folder",                                                                 \
      "the data folder (default ../shared/data beside the repository, else ~/.cache/tg)")         \
  INT(TG_SYMBOLIC_PROPERTY_N, 8000, 1, 100000000, "a positive integer",                            \
      "tests: random expressions ir.symbolic_property checks")                                    \
  STR(XDG_CACHE_HOME, "", "a folder", "standard: the user's cache folder (the compile cache's default parent)") \
  STR(HOME, "", "a folder", "standard: the user's home (~/.cache/tg)")                             \
  STR(TMPDIR, "", "a folder", "standard: where the CPU plugin writes temporary shared objects (default /tmp)") \
  STR(CUDA_PATH, "", "a folder", "standard: the CUDA toolkit (NVRTC, nvJitLink) the cuda plugin loads (default /usr/local/cuda, then the loader's path)")
// clang-format on

namespace knobs {
#define TG_DECLARE_INT_KNOB(name, ...) extern IntKnob name;
#define TG_DECLARE_STRING_KNOB(name, ...) extern StringKnob name;
TG_FOR_EACH_KNOB(TG_DECLARE_INT_KNOB, TG_DECLARE_STRING_KNOB)
#undef TG_DECLARE_INT_KNOB
#undef TG_DECLARE_STRING_KNOB
} // namespace knobs

// Every knob, in the order of TG_FOR_EACH_KNOB.
std::span<Knob* const> all_knobs();
// The knob called `name`; raises tg::Error listing the knobs when there is none.
Knob& find_knob(std::string_view name);

// Overrides knobs for a scope and restores them after (tinygrad's `with Context(DEBUG=2):`).
// Values are checked as the environment's would be. An empty string resets a knob to its
// default, as if its variable were unset. Overrides are process-wide, not per thread.
class Context {
public:
  struct Setting {
    template <class I>
    requires std::is_integral_v<I> Setting(std::string_view n, I v)
        : name(n), text(std::to_string(v)) {}
    Setting(std::string_view n, std::string v) : name(n), text(std::move(v)) {}
    Setting(std::string_view n, const char* v) : name(n), text(v) {}
    std::string_view name;
    std::string text;
  };
  Context(std::initializer_list<Setting> settings);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

private:
  struct Saved {
    Knob* knob;
    bool int_set;
    int64_t int_value;
    const std::string* string_value;
  };
  std::vector<Saved> saved_;
};

} // namespace tg
