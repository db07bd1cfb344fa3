#pragma once
// UOpPtr: the strong, intrusive reference to an interned UOp (tg/ir/uop.hpp). Its reference
// counting bodies live in uop.hpp, after UOp, where the node type is complete.
#include <cstddef>
#include <utility>

namespace tg {

class UOp;

// Strong, intrusive reference to an interned node. Equality is identity.
class UOpPtr {
public:
  UOpPtr() noexcept = default;
  UOpPtr(std::nullptr_t) noexcept {}
  explicit UOpPtr(const UOp* p) noexcept; // takes a new reference
  UOpPtr(const UOpPtr& o) noexcept;
  UOpPtr(UOpPtr&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  UOpPtr& operator=(const UOpPtr& o) noexcept;
  UOpPtr& operator=(UOpPtr&& o) noexcept;
  ~UOpPtr();

  const UOp* get() const noexcept { return p_; }
  const UOp* operator->() const noexcept { return p_; }
  const UOp& operator*() const noexcept { return *p_; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool operator==(const UOpPtr& o) const noexcept { return p_ == o.p_; }
  bool operator==(std::nullptr_t) const noexcept { return p_ == nullptr; }

private:
  friend class UOp;
  friend struct UOpTable;
  struct Adopt {};
  UOpPtr(const UOp* p, Adopt) noexcept : p_(p) {} // takes over an existing reference
  const UOp* p_ = nullptr;
};

} // namespace tg
