#pragma once
// The plugin handshake. A plugin exports one C symbol, tg_plugin_query_v1, returning plain
// data the loader can check before any C++ object crosses the library boundary: a magic
// number, the struct's size, the ABI version and an ABI tag (compiler family and major
// version, C++ standard library ABI, build type). Only when all of them agree does the
// loader call probe() and create(). Both are noexcept and report errors as text.
//
// ABI 1.1 (minor 1) appends create_arch (DEV=DEVICE:RENDERER:ARCH reaches the plugin) and, in
// tg/plugin/device.hpp, virtuals appended to Device (host_visible, arch) and fields appended to
// RendererCaps (tensor cores, extra rules, decompositions). A 1.0 plugin still loads: the
// loader reads its handshake only up to struct_size and serves its devices through an adapter
// that answers the 1.1 questions with the 1.0 behaviour (not host-visible, no architecture,
// no tensor cores or extra rules), so the core never calls what a 1.0 binary does not have.
//
// ABI 1.2 (minor 2) appends RendererCaps::vector_lanes (how many float32 lanes the target's
// vector registers hold). The handshake itself is unchanged; a 1.1 plugin's renderers are
// served through the same adapter, which answers vector_lanes with RendererCaps' default.
//
// ABI 1.3 (minor 3) appends Ops::DOT4 (tg/ir/ops.hpp) and RendererCaps::has_dot4 (whether the
// renderer spells it). A 1.2 plugin's renderers are served through the adapter, which answers
// has_dot4 with false, so codegen decomposes DOT4 before such a renderer sees it.
//
// ABI 1.4 (minor 4) appends Device::copy_from (a copy between two buffers of one plugin's
// devices without the host). A 1.3 plugin's devices are served through the adapter, which
// answers that they cannot, so the core copies through the host as before.
#include <cstddef>
#include <cstdint>

// clang-format off
#define TG_PLUGIN_STR2(x) #x
#define TG_PLUGIN_STR(x) TG_PLUGIN_STR2(x)
#if defined(__clang__)
#define TG_PLUGIN_COMPILER "clang" TG_PLUGIN_STR(__clang_major__)
#elif defined(__GNUC__)
#define TG_PLUGIN_COMPILER "gcc" TG_PLUGIN_STR(__GNUC__)
#else
#define TG_PLUGIN_COMPILER "unknown"
#endif
#if defined(_GLIBCXX_USE_CXX11_ABI)
#define TG_PLUGIN_STDLIB "libstdc++-cxx11abi" TG_PLUGIN_STR(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define TG_PLUGIN_STDLIB "libc++"
#else
#define TG_PLUGIN_STDLIB "unknown-stdlib"
#endif
#if defined(NDEBUG)
#define TG_PLUGIN_BUILD "release"
#else
#define TG_PLUGIN_BUILD "debug"
#endif
// The tag of the translation unit that expands it: "gcc12/libstdc++-cxx11abi1/release".
#define TG_PLUGIN_ABI_TAG TG_PLUGIN_COMPILER "/" TG_PLUGIN_STDLIB "/" TG_PLUGIN_BUILD
// clang-format on

namespace tg {
class Device;
}

extern "C" {

// Version 1 of the handshake. Fields are only ever appended (ABI minor bumps); the loader
// reads no further than struct_size.
struct tg_plugin_info_v1 {
  uint32_t magic;            // TG_PLUGIN_MAGIC
  uint32_t struct_size;      // sizeof(tg_plugin_info_v1) as the plugin saw it
  uint32_t abi_major;        // must equal the core's
  uint32_t abi_minor;        // must not be newer than the core's
  const char* abi_tag;       // TG_PLUGIN_ABI_TAG of the plugin's build
  const char* name;          // "cpu", "null", ...
  const char* version;       // the plugin's own version
  const char* manifest_json; // the manifest it was built with (compared with the file's)
  // 1: a device can be created here; 0: not, with the reason written to `why` (NUL-ended).
  int (*probe)(char* why, size_t why_len) noexcept;
  // A new device for `device_name` (one of the manifest's devices), or nullptr with the
  // reason in `why`. Ownership passes to the caller, who deletes it through the virtual
  // destructor while the library stays loaded.
  tg::Device* (*create)(const char* device_name, char* why, size_t why_len) noexcept;
  // ABI 1.1: create() for architecture `arch` ("" for the device's default), or nullptr with
  // the reason (e.g. an architecture the plugin cannot serve) in `why`.
  tg::Device* (*create_arch)(const char* device_name, const char* arch, char* why,
                             size_t why_len) noexcept;
};

typedef const tg_plugin_info_v1* (*tg_plugin_query_v1_fn)();
}

#define TG_PLUGIN_MAGIC 0x31505447u // "TGP1"
#define TG_PLUGIN_ABI_MAJOR 1u
#define TG_PLUGIN_ABI_MINOR 4u
// The handshake of ABI 1.0 ends before create_arch: the smallest struct the loader accepts.
#define TG_PLUGIN_INFO_V1_0_SIZE 64u
#define TG_PLUGIN_QUERY_SYMBOL "tg_plugin_query_v1"

// Pin the layout: a plugin and the core must agree on it field by field.
static_assert(offsetof(tg_plugin_info_v1, magic) == 0);
static_assert(offsetof(tg_plugin_info_v1, struct_size) == 4);
static_assert(offsetof(tg_plugin_info_v1, abi_major) == 8);
static_assert(offsetof(tg_plugin_info_v1, abi_minor) == 12);
static_assert(offsetof(tg_plugin_info_v1, abi_tag) == 16);
static_assert(offsetof(tg_plugin_info_v1, name) == 24);
static_assert(offsetof(tg_plugin_info_v1, version) == 32);
static_assert(offsetof(tg_plugin_info_v1, manifest_json) == 40);
static_assert(offsetof(tg_plugin_info_v1, probe) == 48);
static_assert(offsetof(tg_plugin_info_v1, create) == 56);
static_assert(offsetof(tg_plugin_info_v1, create_arch) == TG_PLUGIN_INFO_V1_0_SIZE);
static_assert(sizeof(tg_plugin_info_v1) == 72);
