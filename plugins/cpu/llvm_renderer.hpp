#pragma once
// Renderer "LLVM": a linearized kernel -> textual LLVM IR with the CPU calling convention of
// docs/KERNEL_IR.md: define void @name(ptr %bufs, ptr %vars, i64 %gidx0_begin, i64 %gidx0_end).
// SPECIALs and RANGEs become loops (header with a phi, latch at END), gated loads and stores
// become branches, accumulators become entry-block allocas that mem2reg promotes. bfloat16 is
// kept as its i16 bits (loads, stores, casts, bitcasts, WHERE); codegen promotes its math.
#include "tg/plugin/device.hpp"

namespace tg::cpu {

class LlvmRenderer : public Renderer {
public:
  LlvmRenderer();
  std::string name() const override { return "LLVM"; }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

private:
  RendererCaps caps_;
};

} // namespace tg::cpu
