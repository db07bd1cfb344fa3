// Copies to, from and between CUDA devices on a GPU (skipped without one): host memory is read
// and written in place, and a copy between two CUDA devices stays on the GPUs (DtoD on one
// GPU, peer to peer between two). `scripts/device-check-cuda.sh` runs it on a GPU machine.
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <numeric>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/realize.hpp"

using namespace tg;

namespace {

// Why no CUDA device opens here ("" when one does).
std::string no_gpu() {
  try {
    DeviceRegistry::global().open("CUDA");
    return "";
  } catch (const Error& e) {
    return e.what();
  }
}

bool opens(const std::string& device) {
  try {
    DeviceRegistry::global().open(device);
    return true;
  } catch (const Error&) {
    return false;
  }
}

} // namespace

TEST_SUITE("cuda.copy") {
  TEST_CASE("host memory in place, CUDA to CUDA on the GPUs") {
    if (const std::string why = no_gpu(); !why.empty()) {
      std::printf("cuda test skipped: no GPU: %s\n", why.c_str());
      return;
    }
    const int64_t n = (int64_t{32} << 20) / 4 + 3; // 32 MiB and a few: several staging pieces
    std::vector<float> data(static_cast<size_t>(n));
    std::iota(data.begin(), data.end(), 0.25f);
    Buffer host("CPU", dtypes::float32, n), gpu("CUDA", dtypes::float32, n),
        same_gpu("CUDA:0", dtypes::float32, n), back("CPU", dtypes::float32, n);
    host.copy_in(data.data(), host.nbytes());
    CHECK(copy_buffer(gpu, host) == CopyRoute::FromHostMemory);
    // "CUDA" and "CUDA:0" are two devices on one GPU's context: a copy on the GPU.
    CHECK(copy_buffer(same_gpu, gpu) == CopyRoute::Device);
    Buffer* last = &same_gpu;
    std::unique_ptr<Buffer> other;
    if (opens("CUDA:1")) { // peer to peer
      other = std::make_unique<Buffer>("CUDA:1", dtypes::float32, n);
      CHECK(copy_buffer(*other, same_gpu) == CopyRoute::Device);
      last = other.get();
    }
    CHECK(copy_buffer(back, *last) == CopyRoute::IntoHostMemory);
    std::vector<float> out(static_cast<size_t>(n));
    back.copy_out(out.data(), back.nbytes());
    CHECK(out == data);
  }
}
