#pragma once
// UPat and PatternMatcher: rewrite rules as data, read like tinygrad's.
//
//   PatternMatcher pm({
//     {UPat::var("x") + 0, [](const Captures& c) { return c["x"]; }},
//     {UPat::var("x") * UPat::cvar("c"), [](const Captures& c) -> UOpPtr { ... }},
//   });
//
// (a list of (pattern, callback) pairs, as tinygrad's list of tuples; a rule is named by its
// table's location, its index in the table and its pattern in TRACK_MATCH_STATS output)
//
// A callback returns the replacement node, or nullptr for "no rewrite". Matching a node
// tries only the rules whose root op, source count and source ops can match it, in the order
// given.
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/uop.hpp"

namespace tg {

class UPat {
public:
  UPat(); // matches anything
  // Any node with one of `ops` (or any op when empty), optional dtype(s), arg and sources.
  explicit UPat(OpSet ops, std::vector<DType> dtypes = {}, std::optional<Arg> arg = std::nullopt,
                std::string name = "");
  UPat(Ops op, std::vector<DType> dtypes = {}, std::optional<Arg> arg = std::nullopt,
       std::string name = "")
      : UPat(OpSet{op}, std::move(dtypes), std::move(arg), std::move(name)) {}

  // Builders (each returns a modified copy).
  UPat named(std::string name) const;                  // capture the matched node under `name`
  UPat with_src(std::vector<UPat> src) const;          // sources in this order
  UPat with_src_permuted(std::vector<UPat> src) const; // sources in any order
  UPat with_src_repeated(UPat each) const;             // every source matches `each`
  UPat allow_any_len() const;                          // `src` is a prefix; more sources may follow
  UPat with_dtypes(std::vector<DType> dtypes) const;

  // tinygrad's shorthands.
  static UPat var(std::string name = "", std::vector<DType> dtypes = {});
  static UPat cvar(std::string name = "", std::vector<DType> dtypes = {}); // any CONST
  static UPat const_(double value, std::vector<DType> dtypes = {});        // CONST == value
  static UPat ops(OpSet ops, std::string name = "") {
    return UPat(ops, {}, std::nullopt, std::move(name));
  }

  // ALU shorthands; commutative ops match their sources in either order.
  UPat alu(Ops op, std::vector<UPat> others) const;
  UPat lt(const UPat& o) const { return alu(Ops::CMPLT, {o}); }
  UPat ne(const UPat& o) const { return alu(Ops::CMPNE, {o}); }
  UPat eq(const UPat& o) const { return alu(Ops::CMPEQ, {o}); }
  UPat maximum(const UPat& o) const { return alu(Ops::MAX, {o}); }
  UPat where(const UPat& a, const UPat& b) const { return alu(Ops::WHERE, {a, b}); }
  UPat cast(std::vector<DType> dtypes = {}) const;

  std::string str() const; // readable form, used to name rules in match statistics

  // Matching internals, public for the matcher and tests.
  struct Data;
  const Data& data() const { return *d_; }
  OpSet root_ops() const; // empty set: any op

private:
  explicit UPat(std::shared_ptr<Data> d) : d_(std::move(d)) {}
  std::shared_ptr<Data> d_;
};

UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b); // IDIV
UPat operator%(const UPat& a, const UPat& b);
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
UPat operator-(const UPat& a); // NEG
UPat operator+(const UPat& a, double c);
UPat operator-(const UPat& a, double c);
UPat operator*(const UPat& a, double c);
UPat operator/(const UPat& a, double c);
UPat operator%(const UPat& a, double c);

// The named nodes of one match, plus the rewrite context.
class Captures {
public:
  // The node captured as `name`; asking for a name the pattern does not capture is a bug in
  // the rule and raises tg::Error naming it.
  const UOpPtr& operator[](std::string_view name) const;
  bool has(std::string_view name) const;
  // The node the pattern's root matched (null outside a rewrite).
  const UOpPtr& root() const { return root_ != nullptr ? *root_ : kNoRoot; }

  // The context passed to graph_rewrite, as T. A rule that needs a context its rewrite was
  // not given raises tg::Error.
  template <class T> T& ctx() const {
    if (ctx_ == nullptr || ctx_type_ == nullptr || *ctx_type_ != typeid(T))
      throw Error(std::string("pattern rule needs a rewrite context of type ") + typeid(T).name() +
                  " but graph_rewrite was given " + (ctx_type_ ? ctx_type_->name() : "none"));
    return *static_cast<T*>(ctx_);
  }

  // Internals used by the matcher. A capture refers to the UOpPtr that holds the matched node
  // (the root given to the matcher, or a source slot of a node above it), which outlives the
  // match, so capturing costs no reference count.
  struct Entry {
    std::string_view name;
    const UOpPtr* ref;
    const UOpPtr& node() const { return *ref; }
  };
  std::vector<Entry> entries;
  const UOpPtr* root_ = nullptr;
  static inline const UOpPtr kNoRoot;
  void* ctx_ = nullptr;
  const std::type_info* ctx_type_ = nullptr;
};

// Captures lent from a per-thread pool for a scope, so that matching allocates nothing once a
// thread has warmed up. Leases nest (a rule may run a rewrite of its own) and must end in the
// reverse order of their start, on the thread that took them.
class CapturesLease {
public:
  CapturesLease();
  ~CapturesLease();
  CapturesLease(const CapturesLease&) = delete;
  CapturesLease& operator=(const CapturesLease&) = delete;
  Captures& get() { return *caps_; }

private:
  Captures* caps_;
};

using RewriteFn = std::function<UOpPtr(const Captures&)>;

struct Rule {
  struct Final {}; // tags a rule whose result is final (final_result)
  Rule(UPat p, RewriteFn f) : pat(std::move(p)), fn(std::move(f)) {}
  Rule(UPat p, RewriteFn f, Final) : pat(std::move(p)), fn(std::move(f)), final_result(true) {}
  UPat pat;
  RewriteFn fn;
  std::string name; // set by the PatternMatcher: "<file>:<line of the table> #<index> <pattern>"
  // The author's claim that, in the table that declares it, this rule's result on a node whose
  // sources are final is final too: no rule of that table rewrites it or any node below it.
  // A table that trusts it (PatternMatcher::FinalResults) lets graph_rewrite mark the result
  // done instead of matching every node the rule built; REWRITE_CHECK_FINAL=1 checks each claim.
  bool final_result = false;
};

// Statistics per rule, kept when TRACK_MATCH_STATS >= 1 and printed at exit when >= 2.
struct RuleStats {
  std::atomic<uint64_t> attempts{0}, matches{0}, time_ns{0};
};

class PatternMatcher {
public:
  PatternMatcher(std::vector<Rule> rules,
                 std::source_location loc = std::source_location::current());
  PatternMatcher operator+(const PatternMatcher& o) const; // o's rules after this one's
  ~PatternMatcher();

  // The first rewrite of `node` any rule produces, or nullptr. `ctx` is what Captures::ctx sees.
  // `which`, when given, receives the rule that produced the rewrite.
  UOpPtr rewrite(const UOpPtr& node, void* ctx = nullptr, const std::type_info* ctx_type = nullptr,
                 const Rule** which = nullptr) const;
  // The same with captures the caller holds across calls (graph_rewrite keeps one lease for
  // the whole rewrite): no per-thread pool is looked up per node. `scratch` must not be in use
  // further up the stack (a rule's nested rewrite takes its own lease).
  UOpPtr rewrite(const UOpPtr& node, Captures& scratch, void* ctx, const std::type_info* ctx_type,
                 const Rule** which) const;

  // Whether graph_rewrite takes the rules' claims of a final result (Rule::final_result) at
  // their word. A claim holds for the table its author wrote it for: a table joined with
  // another (operator+) ignores them, since the other table's rules may rewrite the result.
  enum class FinalResults : uint8_t { Ignored, Trusted };

  // The same rules, declared pure: each callback's answer depends on the matched nodes alone
  // (no context, no state of its own), so a node no rule rewrites never will be, and
  // graph_rewrite marks it (UOp::fixed_under) and skips it from then on. symbolic() is pure,
  // and trusts its rules' final results.
  PatternMatcher as_pure(FinalResults final_results = FinalResults::Ignored) const;
  uint64_t pure_id() const { return pure_id_; } // 0: not pure
  bool trusts_final_results() const { return trust_final_; }

  size_t size() const { return rules_.size(); }
  const std::vector<Rule>& rules() const { return rules_; }
  const std::vector<RuleStats>& stats() const { return *stats_; }

  PatternMatcher(const PatternMatcher&);
  PatternMatcher& operator=(const PatternMatcher&) = delete;

  struct Program; // a rule's pattern flattened for matching (pattern_matcher.cpp)

private:
  void index_rules();
  void index_sources();
  std::vector<Rule> rules_;
  // A rule offered to nodes of one root op, with what the matcher reads first at hand.
  struct Candidate {
    const Rule* rule;
    const Program* program;
    uint32_t index; // in rules_
    bool prefilter; // may_match decides first (a walkable pattern with sources to check)
    // Under source-op dispatch, what is left to check once the masks let the rule through:
    // may_match's dtype and constant checks (`values`, when the pattern has any), and, unless
    // the node has two sources, a permuted pattern's source ops (then all of may_match).
    bool values = true, permuted = true;
  };
  // The rules of one root op, and the masks that pick those whose pattern can match a node's
  // source count and source ops (bit i: candidates[i]), read instead of checking each
  // candidate's sources in turn.
  struct OpRules {
    static constexpr size_t kMaxSources = 4; // nodes with more sources take the plain loop
    std::vector<Candidate> candidates;
    bool dispatch = false; // the masks are set (at most 64 candidates)
    std::array<uint64_t, kMaxSources + 1> by_count{};
    std::vector<uint64_t> by_source; // [position * classes_ + class of the source's op]
    std::vector<uint64_t> by_pair;   // two sources: [class of the first * classes_ + second's]
  };
  std::vector<std::shared_ptr<const Program>> programs_; // one per rule
  std::vector<OpRules> by_op_;                           // the rules to try for each root op
  // Source op -> its class: 1 + its index among the ops some pattern names at a source of the
  // root, or 0 for every other op (no such pattern can match it there).
  std::array<uint8_t, kNumOps> op_class_{};
  size_t classes_ = 1;
  UOpPtr rewrite_tracked(const UOpPtr& node, Captures& caps, const Rule** which) const;
  std::string where_;
  std::shared_ptr<std::vector<RuleStats>> stats_;
  uint64_t pure_id_ = 0;
  bool trust_final_ = false;
};

// Enumerates every way `pat` matches `node`, calling `on_match` with the captures until it
// returns true. Exposed for tests; PatternMatcher uses it.
bool upat_match(const UPat& pat, const UOpPtr& node, Captures& caps,
                const std::function<bool(Captures&)>& on_match);

// TRACK_MATCH_STATS from the environment (0 when unset): 1 counts, 2 also prints at exit.
int track_match_stats();

} // namespace tg
