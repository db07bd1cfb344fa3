// Copies between buffers (a schedule's COPY items, and their replays): the shortest route the
// two devices allow, in this order:
//   1. the destination device copies from the source itself (Device::copy_from: within one
//      device, or between two devices of one plugin, peer to peer);
//   2. the source is host-visible (its addresses are host pointers, as the CPU's): the
//      destination copies straight in from the source's memory;
//   3. the destination is host-visible: the source copies straight out into its memory;
//   4. otherwise through a host buffer: out of the source, then into the destination.
// Routes 2 and 3 spare a copy and a buffer the size of the data (weights moved from mapped
// files to a GPU), route 1 spares the host altogether.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "tg/knobs.hpp"
#include "tg/realize.hpp"
#include "tg/runner.hpp"

namespace tg {

std::string_view copy_route_name(CopyRoute r) {
  switch (r) {
  case CopyRoute::Device:
    return "device";
  case CopyRoute::FromHostMemory:
    return "from host memory";
  case CopyRoute::IntoHostMemory:
    return "into host memory";
  case CopyRoute::ThroughHost:
    return "through host";
  case CopyRoute::Nothing:
    return "nothing to copy";
  }
  return "?";
}

CopyRoute copy_buffer(Buffer& dst, Buffer& src, std::FILE* debug_out) {
  const size_t bytes = std::min(src.nbytes(), dst.nbytes());
  const auto t0 = std::chrono::steady_clock::now();
  Device& to = dst.device();
  Device& from = src.device();
  const DevicePtr d = dst.ptr(), s = src.ptr();
  CopyRoute route = CopyRoute::Nothing;
  if (bytes > 0) {
    // Kernels queued on either side may still write the source or read the destination.
    from.queue().synchronize();
    if (&to != &from) to.queue().synchronize();
    if (to.copy_from(d, from, s, bytes)) {
      route = CopyRoute::Device;
    } else if (from.host_visible()) {
      route = CopyRoute::FromHostMemory;
      to.allocator().copy_in(d, reinterpret_cast<const void*>(s), bytes);
    } else if (to.host_visible()) {
      route = CopyRoute::IntoHostMemory;
      from.allocator().copy_out(reinterpret_cast<void*>(d), s, bytes);
    } else {
      route = CopyRoute::ThroughHost;
      std::vector<uint8_t> host(bytes);
      from.allocator().copy_out(host.data(), s, bytes);
      to.allocator().copy_in(d, host.data(), bytes);
    }
  }
  if (knobs::DEBUG >= 2) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(debug_out, "*** %-7.7s copy %12zu bytes, %s <- %s (%s) tm %s (%8.2f GB/s)\n",
                 to.name().c_str(), bytes, to.name().c_str(), from.name().c_str(),
                 std::string(copy_route_name(route)).c_str(), time_to_str(t).c_str(),
                 t > 0 ? static_cast<double>(bytes) / t * 1e-9 : 0.0);
    std::fflush(debug_out);
  }
  return route;
}

} // namespace tg
