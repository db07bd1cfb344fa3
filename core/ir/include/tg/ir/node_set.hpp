#pragma once
// Sets and maps keyed by node address, for the graph walks that run on every kernel
// (toposort, linearize): open addressing with linear probing, at most half full, in flat
// arrays. std::unordered_set and std::unordered_map allocate a list node per insert, which
// made those walks malloc-bound. Entries are never removed. A table sized for nothing
// allocates at its first insert, so one that stays empty (graph_rewrite's overflow map, in
// almost every rewrite) costs nothing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tg {

struct UOp;

namespace node_set_detail {
inline size_t capacity_for(size_t n) {
  if (n == 0) return 0;
  size_t c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}
// Node blocks are 16-byte aligned: the low bits carry nothing, and a multiplicative hash
// spreads the rest over the table.
inline size_t home(const UOp* u, size_t mask) {
  return static_cast<size_t>((reinterpret_cast<uintptr_t>(u) >> 4) * 0x9E3779B97F4A7C15ULL >> 32) &
         mask;
}
// The slot holding `u`, or the empty slot where it would go (`keys` is not empty).
inline size_t probe(const std::vector<const UOp*>& keys, const UOp* u) {
  const size_t mask = keys.size() - 1;
  size_t i = home(u, mask);
  while (keys[i] != nullptr && keys[i] != u) i = (i + 1) & mask;
  return i;
}
} // namespace node_set_detail

class NodeSet {
public:
  // Room for `expected` nodes before the first growth.
  explicit NodeSet(size_t expected = 0) : keys_(node_set_detail::capacity_for(expected), nullptr) {}

  // True when `u` was not in the set yet.
  bool insert(const UOp* u) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    const size_t i = node_set_detail::probe(keys_, u);
    if (keys_[i] == u) return false;
    keys_[i] = u;
    ++used_;
    return true;
  }
  bool contains(const UOp* u) const {
    return !keys_.empty() && keys_[node_set_detail::probe(keys_, u)] == u;
  }
  size_t size() const { return used_; }

private:
  void grow() {
    std::vector<const UOp*> old(std::max<size_t>(16, keys_.size() * 2), nullptr);
    old.swap(keys_);
    for (const UOp* u : old)
      if (u != nullptr) keys_[node_set_detail::probe(keys_, u)] = u;
  }

  std::vector<const UOp*> keys_;
  size_t used_ = 0;
};

// Node -> V. References to values stay valid until the next insert of a new key.
template <class V> class NodeMap {
public:
  explicit NodeMap(size_t expected = 0)
      : keys_(node_set_detail::capacity_for(expected), nullptr), values_(keys_.size()) {}

  // The value of `u`, default-constructed when absent.
  V& operator[](const UOp* u) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    const size_t i = node_set_detail::probe(keys_, u);
    if (keys_[i] != u) {
      keys_[i] = u;
      ++used_;
    }
    return values_[i];
  }
  // The value of `u`, or null when absent.
  V* find(const UOp* u) {
    if (keys_.empty()) return nullptr;
    const size_t i = node_set_detail::probe(keys_, u);
    return keys_[i] == u ? &values_[i] : nullptr;
  }
  const V* find(const UOp* u) const {
    if (keys_.empty()) return nullptr;
    const size_t i = node_set_detail::probe(keys_, u);
    return keys_[i] == u ? &values_[i] : nullptr;
  }
  // The value of `u`, which must be present.
  const V& at(const UOp* u) const {
    if (const V* v = find(u)) return *v;
    throw std::out_of_range("NodeMap::at: the node is not in the map");
  }
  bool contains(const UOp* u) const { return find(u) != nullptr; }
  size_t size() const { return used_; }

private:
  void grow() {
    std::vector<const UOp*> old_keys(std::max<size_t>(16, keys_.size() * 2), nullptr);
    std::vector<V> old_values(old_keys.size());
    old_keys.swap(keys_);
    old_values.swap(values_);
    for (size_t j = 0; j < old_keys.size(); ++j) {
      if (old_keys[j] == nullptr) continue;
      const size_t i = node_set_detail::probe(keys_, old_keys[j]);
      keys_[i] = old_keys[j];
      values_[i] = std::move(old_values[j]);
    }
  }

  std::vector<const UOp*> keys_;
  std::vector<V> values_;
  size_t used_ = 0;
};

} // namespace tg
