// The qcom plugin's entry point: device QCOM, Adreno GPUs through Qualcomm's KGSL kernel driver
// (tinygrad's ops_qcom). It renders with the OpenCL C dialect; its KGSL runtime (command
// streams, GPU memory mapping) is not implemented, so the probe refuses with the reason: no
// /dev/kgsl-3d0 here, and on an Adreno machine DEV=CL through Qualcomm's OpenCL driver.
#include <sys/stat.h>

#include <string>

#include "tg/plugin/define.hpp"
#include "tg_plugin_manifest.h"

namespace tg::qcom {
namespace {

constexpr const char* kKgsl = "/dev/kgsl-3d0";

int probe(char* why, size_t why_len) {
  struct stat st {};
  if (stat(kKgsl, &st) != 0) {
    plugin::set_reason(why, why_len,
                       "QCOM needs an Adreno GPU through Qualcomm's KGSL driver: /dev/kgsl-3d0 "
                       "not found on this machine; use DEV=CL for an OpenCL device");
    return 0;
  }
  plugin::set_reason(why, why_len,
                     "/dev/kgsl-3d0 is here, but the KGSL runtime is not implemented; use DEV=CL "
                     "through Qualcomm's OpenCL driver (libOpenCL.so.1) on this GPU");
  return 0;
}

Device* create(const char* /*device*/, const char* /*arch*/, char* why, size_t why_len) {
  probe(why, why_len);
  return nullptr;
}

} // namespace
} // namespace tg::qcom

TG_DEFINE_PLUGIN(tg::qcom::probe, tg::qcom::create)
