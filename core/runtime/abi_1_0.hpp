#pragma once
// Serving plugins built against ABI 1.0. Their C++ objects lack what 1.1 appended (Device's
// host_visible and arch virtuals, RendererCaps' tensor cores, extra rules and decompositions),
// so the core must not call or read those on them. The adapter forwards every 1.0 call and
// answers the 1.1 ones with 1.0's behaviour: not host-visible, the default architecture, and
// renderer caps copied from the 1.0 fields only.
#include <memory>

#include "tg/plugin/device.hpp"

namespace tg {

std::shared_ptr<Device> serve_abi_1_0(std::shared_ptr<Device> device);

} // namespace tg
