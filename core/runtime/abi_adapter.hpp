#pragma once
// Serving plugins built against an older ABI minor (1.0 to 1.3). Their C++ objects lack what
// later minors appended (1.1: Device's host_visible and arch virtuals, RendererCaps' tensor
// cores, extra rules and decompositions; 1.2: RendererCaps::vector_lanes; 1.3:
// RendererCaps::has_dot4; 1.4: Device::copy_from), so the core must not call or read those on
// them. The adapter forwards every call the plugin's minor has and answers the newer ones as that
// minor behaved: a 1.0 device is not host-visible and has the default architecture, no older
// device copies to another without the host, and renderer caps are copied from the plugin's own
// fields only, the appended ones keeping RendererCaps' defaults (a 1.3 renderer's caps are
// today's, and are read as they are).
#include <cstdint>
#include <memory>

#include "tg/plugin/device.hpp"

namespace tg {

// `device` served for a plugin of ABI 1.`minor` (0 to 3).
std::shared_ptr<Device> serve_older_abi(std::shared_ptr<Device> device, uint32_t minor);

} // namespace tg
