// Copies between buffers take the shortest route the two devices allow (copy_buffer): the
// device's own copy between devices of one plugin (ABI 1.4's Device::copy_from), straight from
// or into a host-visible device's memory, else through a host buffer; a plugin of an older
// ABI is never asked for the device route. MEMA, MEMB and ABI13 are test plugins whose
// memory holds data (tests/plugins/CMakeLists.txt).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <numeric>

#include "plugin_test_util.hpp"
#include "tg/buffer.hpp"
#include "tg/device_registry.hpp"
#include "tg/knobs.hpp"
#include "tg/realize.hpp"
#include "tg/tensor.hpp"

using namespace tg;
using tg::test::case_dir;

namespace {

void add_memory_plugins() {
  for (const char* dir : {"mema", "memb", "abi13"})
    DeviceRegistry::global().add_search_path(case_dir(dir));
}

std::vector<float> iota_floats(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.5f);
  return v;
}

// A float32 buffer on `device` holding `data`.
std::unique_ptr<Buffer> filled(const std::string& device, const std::vector<float>& data) {
  auto b = std::make_unique<Buffer>(device, dtypes::float32, static_cast<int64_t>(data.size()));
  b->copy_in(data.data(), data.size() * sizeof(float));
  return b;
}

std::vector<float> contents(Buffer& b) {
  std::vector<float> out(b.nbytes() / sizeof(float));
  b.copy_out(out.data(), b.nbytes());
  return out;
}

// Copies a 1000-float buffer from `from` to `to` and checks the bytes and the route.
void check_copy(const std::string& from, const std::string& to, CopyRoute expected) {
  CAPTURE(from);
  CAPTURE(to);
  const std::vector<float> data = iota_floats(1000);
  std::unique_ptr<Buffer> src = filled(from, data);
  Buffer dst(to, dtypes::float32, 1000);
  CHECK(copy_route_name(copy_buffer(dst, *src)) == copy_route_name(expected));
  CHECK(contents(dst) == data);
}

} // namespace

TEST_SUITE("plugins.copy") {
  TEST_CASE("between two devices of one plugin, the device copies without the host") {
    add_memory_plugins();
    check_copy("MEMA", "MEMA:1", CopyRoute::Device);
    check_copy("MEMA:1", "MEMA", CopyRoute::Device);
    check_copy("MEMA", "MEMA", CopyRoute::Device); // within one device
  }

  TEST_CASE("between two plugins' devices, through a host buffer") {
    add_memory_plugins();
    check_copy("MEMA", "MEMB", CopyRoute::ThroughHost);
    check_copy("MEMB", "MEMA:1", CopyRoute::ThroughHost);
  }

  TEST_CASE("a host-visible side is read or written in place") {
    add_memory_plugins();
    check_copy("CPU", "MEMA", CopyRoute::FromHostMemory);
    check_copy("MEMB", "CPU", CopyRoute::IntoHostMemory);
    // The CPU's own copy_from is Device's default (it serves one device): CPU to CPU is a
    // copy_in from the source's memory.
    check_copy("CPU", "CPU", CopyRoute::FromHostMemory);
  }

  TEST_CASE("a plugin built against ABI 1.3 is not asked to copy: through the host") {
    add_memory_plugins();
    // A 1.3 binary has no copy_from to call: the stand-in's claims copies it does not make.
    check_copy("ABI13", "ABI13:1", CopyRoute::ThroughHost);
  }

  TEST_CASE("a smaller destination takes what fits; an empty buffer copies nothing") {
    add_memory_plugins();
    const std::vector<float> data = iota_floats(100);
    std::unique_ptr<Buffer> src = filled("MEMA", data);
    Buffer small("MEMA:1", dtypes::float32, 10);
    CHECK(copy_buffer(small, *src) == CopyRoute::Device);
    CHECK(contents(small) == std::vector<float>(data.begin(), data.begin() + 10));
    Buffer empty_src("MEMA", dtypes::float32, 0), empty_dst("MEMB", dtypes::float32, 0);
    CHECK(copy_buffer(empty_dst, empty_src) == CopyRoute::Nothing);
  }

  TEST_CASE("Tensor.to moves data over every route and back") {
    add_memory_plugins();
    const std::vector<float> data = iota_floats(257);
    Tensor t = Tensor::from_vector(data, {257}, "CPU");
    // CPU -> MEMA (from host memory) -> MEMA:1 (device) -> MEMB (through host) -> CPU (into
    // host memory).
    Tensor back = t.to("MEMA").realize().to("MEMA:1").realize().to("MEMB").realize().to("CPU");
    CHECK(back.to_vector<float>() == data);
  }

  TEST_CASE("DEBUG=2 prints each copy with its route") {
    add_memory_plugins();
    std::unique_ptr<Buffer> src = filled("MEMA", iota_floats(16));
    Buffer dst("MEMB", dtypes::float32, 16);
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    {
      tg::Context debug{{"DEBUG", 2}};
      copy_buffer(dst, *src, out);
    }
    tg::Context quiet{{"DEBUG", 0}};
    copy_buffer(dst, *src, out); // prints nothing
    std::rewind(out);
    std::string text(256, '\0');
    text.resize(std::fread(text.data(), 1, text.size(), out));
    std::fclose(out);
    CHECK(text.rfind("*** MEMB    copy           64 bytes, MEMB <- MEMA (through host) tm ", 0) ==
          0);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  }
}
