#pragma once
// UOp: the one IR node, immutable and hash-consed. Building the same (op, dtype, src, arg)
// twice returns the same node, so node identity is pointer equality. Nodes are reference
// counted and freed (iteratively, so long chains cannot overflow the stack) when the last
// UOpPtr to them goes away; interning is thread-safe.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "tg/ir/dtype.hpp"
#include "tg/ir/ops.hpp"
#include "tg/ir/sint.hpp"
#include "tg/ir/uop_ptr.hpp"

namespace tg {

// A tensor-level shape: one size per axis, each an integer or symbolic (tg/ir/sint.hpp). It
// converts from and to std::vector<int64_t> (the latter raises tg::Error on a symbolic size).
// Also the argument of PERMUTE (the axis order), FLIP (0/1 flags) and GEP (lane numbers).
struct Shape : std::vector<sint> {
  using std::vector<sint>::vector;
  Shape() = default;
  Shape(const std::vector<int64_t>& dims) // NOLINT(google-explicit-constructor)
      : std::vector<sint>(dims.begin(), dims.end()) {}
  operator std::vector<int64_t>() const { // NOLINT(google-explicit-constructor)
    return std::vector<int64_t>(begin(), end());
  }
};

// Kinds of loop a RANGE stands for (used by the kernel optimizer). A Sequential axis is a loop
// whose iterations must run one after the other in order (a scatter-add's index axis: two
// iterations may write one element): no Opt splits, upcasts, unrolls, groups or parallelizes it.
enum class AxisType : uint8_t {
  Global,
  Local,
  Loop,
  Reduce,
  Upcast,
  Unroll,
  GroupReduce,
  Thread,
  Sequential
};
std::string_view axis_type_name(AxisType t);

struct RangeArg { // RANGE: which axis of the kernel, and its kind
  int64_t id = 0;
  AxisType type = AxisType::Loop;
  bool operator==(const RangeArg&) const = default;
};
struct VarArg { // DEFINE_VAR: a named integer variable with inclusive bounds
  std::string name;
  int64_t min = 0, max = 0;
  bool operator==(const VarArg&) const = default;
};
struct ReduceArg { // REDUCE: the combining op (ADD, MUL, MAX) and, at tensor level, the axes
  Ops op = Ops::ADD;
  std::vector<int64_t> axes;
  bool operator==(const ReduceArg&) const = default;
};
// PAD (before, after) and SHRINK (begin, end), one pair per axis; converts from integer pairs.
struct PadArg : std::vector<std::pair<sint, sint>> {
  using std::vector<std::pair<sint, sint>>::vector;
  PadArg() = default;
  PadArg(const std::vector<std::pair<int64_t, int64_t>>& p) // NOLINT(google-explicit-constructor)
      : std::vector<std::pair<sint, sint>>(p.begin(), p.end()) {}
};

// The typed argument of a node. CONST holds its value as bool, int64_t or double.
using Arg = std::variant<std::monostate, bool, int64_t, double, std::string, Ops, RangeArg, VarArg,
                         ReduceArg, Shape, PadArg>;
bool arg_equal(const Arg& a, const Arg& b); // bitwise for doubles, so NaN constants intern
size_t arg_hash(const Arg& a);
std::string arg_to_string(const Arg& a);

// A node's sources: a read-only array stored in the node's own allocation, right after it (one
// allocation per node, and reading a source pointer touches the node's memory). It reads like
// a const std::vector<UOpPtr> and converts to one (a copy).
class Sources {
public:
  using value_type = UOpPtr;
  using size_type = size_t;
  using const_iterator = const UOpPtr*;
  using iterator = const UOpPtr*;
  using const_reverse_iterator = std::reverse_iterator<const UOpPtr*>;
  using reverse_iterator = const_reverse_iterator;

  const UOpPtr* begin() const noexcept { return data_; }
  const UOpPtr* end() const noexcept { return data_ + size_; }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  const UOpPtr* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  const UOpPtr& operator[](size_t i) const noexcept { return data_[i]; }
  const UOpPtr& front() const noexcept { return data_[0]; }
  const UOpPtr& back() const noexcept { return data_[size_ - 1]; }
  operator std::span<const UOpPtr>() const noexcept { // NOLINT(google-explicit-constructor)
    return {data_, size_};
  }
  explicit operator std::vector<UOpPtr>() const { // NOLINT(google-explicit-constructor)
    return std::vector<UOpPtr>(begin(), end());
  }
  friend bool operator==(const Sources& a, std::span<const UOpPtr> b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Sources& a, const std::vector<UOpPtr>& b) noexcept {
    return a == std::span<const UOpPtr>(b);
  }

private:
  friend class UOp;
  Sources(const UOpPtr* data, size_t size) : data_(data), size_(static_cast<uint32_t>(size)) {}
  const UOpPtr* data_;
  uint32_t size_;
};

class UOp {
  // False while the node is detached (make_detached), outside the node table; set once, by
  // enlist, before the node is published. Declared first so it sits in op's padding.
  bool listed_ = true;

public:
  const Ops op;
  const DType dtype;
  const Sources src;
  const Arg arg;

  // The one way to build a node: returns the interned node for (op, dtype, src, arg).
  // With SPEC=1 (or spec checking enabled in code) a node the spec forbids raises SpecError.
  static UOpPtr make(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg = {});
  // The same from a braced list; allocates nothing when the node exists already.
  static UOpPtr make(Ops op, DType dtype, std::initializer_list<UOpPtr> src = {}, Arg arg = {});
  // The same from borrowed sources, which the caller keeps alive for the call: no reference
  // is copied, so finding a node that exists touches no count but the result's.
  static UOpPtr make_borrowed(Ops op, DType dtype, std::span<const UOp* const> src, Arg arg = {});
  // A node built like make_borrowed but left out of the node table, for a caller that will
  // most likely drop it at once: graph_rewrite matches a rebuilt node before it interns it,
  // and most rebuilt nodes are rewritten by a rule. Until enlist(), it is a private candidate:
  // equal to no other node, held by no one else, and its freeing touches no table.
  static UOpPtr make_detached(Ops op, DType dtype, std::span<const UOp* const> src, Arg arg = {});
  // The interned node equal to the detached node `u`: `u` itself, now in the table, or the
  // twin that was there already (then `u` goes with its last reference).
  static UOpPtr enlist(UOpPtr u);
  bool listed() const { return listed_; } // false for a detached node

  // Convenience constructors.
  static UOpPtr const_(DType dtype, ConstValue v); // value converted to the dtype
  // const_(dtype, v) for an integer v: without the conversion when dtype is a scalar integer
  // type whose range holds v, and without a table probe for the small values of index and
  // int32 (the strides and coefficients of index arithmetic).
  static UOpPtr int_const(DType dtype, int64_t v);
  static UOpPtr variable(const std::string& name, int64_t min, int64_t max,
                         DType dtype = dtypes::index);
  static UOpPtr range(const UOpPtr& end, int64_t id, AxisType type = AxisType::Loop);
  static UOpPtr sink(std::vector<UOpPtr> srcs);

  UOpPtr ptr() const { return UOpPtr(this); } // a new strong reference to this node
  UOpPtr replace_src(std::vector<UOpPtr> new_src) const;
  UOpPtr with_dtype(DType d) const;

  // Expression building (dtype rules of tinygrad: comparisons give bool, WHERE takes the
  // dtype of its branches, everything else keeps the dtype of the first source).
  UOpPtr alu(Ops op, std::initializer_list<UOpPtr> others = {}) const;
  UOpPtr const_like(ConstValue v) const; // a CONST of this node's dtype
  UOpPtr cast(DType d) const;
  UOpPtr bitcast(DType d) const;
  UOpPtr lt(const UOpPtr& o) const { return alu(Ops::CMPLT, {o}); }
  UOpPtr ne(const UOpPtr& o) const { return alu(Ops::CMPNE, {o}); }
  UOpPtr eq(const UOpPtr& o) const { return alu(Ops::CMPEQ, {o}); }
  UOpPtr maximum(const UOpPtr& o) const { return alu(Ops::MAX, {o}); }
  UOpPtr where(const UOpPtr& a, const UOpPtr& b) const { return alu(Ops::WHERE, {a, b}); }
  UOpPtr logical_not() const; // x != true

  // Constants.
  bool is_const() const { return op == Ops::CONST; }
  ConstValue const_value() const;      // requires op == CONST
  bool is_const_value(double v) const; // CONST whose value equals v numerically

  // Derived properties, computed once.
  size_t hash() const { return hash_; }
  const ConstValue& vmin() const { return vmin_; } // value range (interval analysis)
  const ConstValue& vmax() const { return vmax_; }
  // Integer bounds (most nodes' bounds are int64 already: no call for those).
  int64_t ivmin() const {
    const int64_t* i = std::get_if<int64_t>(&vmin_);
    return i != nullptr ? *i : as_int(vmin_);
  }
  int64_t ivmax() const {
    const int64_t* i = std::get_if<int64_t>(&vmax_);
    return i != nullptr ? *i : as_int(vmax_);
  }
  // Tensor-level shape (buffers, movement, elementwise and reduce over them); nullopt for
  // kernel-level nodes. A shape mismatch between sources raises tg::Error at make().
  const std::optional<Shape>& shape() const { return shape_ ? *shape_ : kNoShape; }
  const std::shared_ptr<const std::optional<Shape>>& shape_ptr() const { return shape_; }
  // Every node reachable from this one, sources before users, this node last.
  const std::vector<const UOp*>& toposort() const;
  // Every node reachable from this one, this node excluded.
  const std::unordered_set<const UOp*>& backward_slice() const;

  // Debugging: one-line form of this node (see tg/ir/print.hpp for whole graphs).
  std::string str() const;

  static size_t live_count(); // nodes alive now, process-wide
  // References to this node held now (a snapshot: other threads may take or drop some).
  int64_t use_count() const noexcept { return refs_.load(std::memory_order_relaxed); }

  // graph_rewrite's memo entry for this node (tg/ir/rewrite.cpp). A running rewrite claims the
  // slot by writing its id into `owner`; the slot is free again once that rewrite has ended (its
  // id leaves the registry of running rewrites), so ending a rewrite touches none of its nodes.
  // A rewrite that finds the slot taken by a running one (nested or concurrent) keeps the node
  // in a hash map instead. Keeping the entry in the node means the memo costs no lookup in a
  // large table: the rewrite reads the node anyway.
  struct MemoSlot {
    std::atomic<uint64_t> owner{0};
    const UOpPtr* value = nullptr;
  };
  MemoSlot& memo_slot() const { return memo_; }

  // The id of a pure PatternMatcher (tg/ir/pattern_matcher.hpp) that rewrites neither this node
  // nor any node below it, or 0. graph_rewrite sets it and then returns the node at once: a
  // graph simplified once is not matched again when a later rewrite meets it.
  std::atomic<uint64_t>& fixed_under() const { return fixed_under_; }

  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

private:
  friend class UOpPtr;
  friend struct UOpTable;
  // Built in place by UOpTable, in a block with room for `nsrc` sources after the node, which
  // the table has constructed there already.
  UOp(Ops op, DType dtype, size_t nsrc, Arg arg, size_t hash);
  UOpPtr* source_slots() noexcept {
    return reinterpret_cast<UOpPtr*>(reinterpret_cast<char*>(this) + sizeof(UOp));
  }
  template <class Src>
  static UOpPtr make_impl(Ops op, DType dtype, std::span<Src> src, std::vector<UOpPtr>* owned,
                          Arg&& arg);
  ~UOp();
  void retain() const noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const noexcept;
  bool try_retain() const noexcept; // fails on a node whose last reference is being dropped

  size_t hash_;
  mutable std::atomic<int64_t> refs_{0};
  mutable MemoSlot memo_;
  mutable std::atomic<uint64_t> fixed_under_{0};

  static inline const std::optional<Shape> kNoShape;
  ConstValue vmin_, vmax_;
  std::shared_ptr<const std::optional<Shape>> shape_; // null: no shape (kernel level)
  // The toposort and backward slice, built on first use. One pointer for both: few nodes
  // are ever asked for them, and every node's size counts (a rewrite's working set).
  struct Derived;
  Derived& derived() const;
  mutable std::atomic<Derived*> derived_{nullptr};
};

inline UOpPtr::UOpPtr(const UOp* p) noexcept : p_(p) {
  if (p_) p_->retain();
}
inline UOpPtr::UOpPtr(const UOpPtr& o) noexcept : p_(o.p_) {
  if (p_) p_->retain();
}
inline UOpPtr& UOpPtr::operator=(const UOpPtr& o) noexcept {
  if (o.p_) o.p_->retain();
  if (p_) p_->release();
  p_ = o.p_;
  return *this;
}
inline UOpPtr& UOpPtr::operator=(UOpPtr&& o) noexcept {
  if (this != &o) {
    if (p_) p_->release();
    p_ = std::exchange(o.p_, nullptr);
  }
  return *this;
}
inline UOpPtr::~UOpPtr() {
  if (p_) p_->release();
}

// Arithmetic on nodes builds nodes. `/` is IDIV on integers (C truncation, as tinygrad's
// IDIV) and FDIV on floats; `%` is MOD (C remainder). Scalars become constants of x's dtype.
UOpPtr operator+(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a); // NEG
UOpPtr operator+(const UOpPtr& a, int64_t b);
UOpPtr operator-(const UOpPtr& a, int64_t b);
UOpPtr operator*(const UOpPtr& a, int64_t b);
UOpPtr operator/(const UOpPtr& a, int64_t b);
UOpPtr operator%(const UOpPtr& a, int64_t b);
UOpPtr operator+(int64_t a, const UOpPtr& b);
// With a size: an integer size stays an integer constant, a symbolic one its expression.
UOpPtr operator+(const UOpPtr& a, const sint& b);
UOpPtr operator-(const UOpPtr& a, const sint& b);
UOpPtr operator*(const UOpPtr& a, const sint& b);
UOpPtr operator/(const UOpPtr& a, const sint& b);
UOpPtr operator%(const UOpPtr& a, const sint& b);
UOpPtr operator*(int64_t a, const UOpPtr& b);

} // namespace tg

template <> struct std::hash<tg::UOpPtr> {
  size_t operator()(const tg::UOpPtr& u) const noexcept {
    return std::hash<const void*>()(u.get());
  }
};
