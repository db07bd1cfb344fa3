// Finding and loading NVRTC and nvJitLink.
#include "toolkit.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <system_error>
#include <vector>

#include "tg/knobs.hpp"

namespace tg::cuda {

namespace {

namespace fs = std::filesystem;

// The toolkit folders to look in, in order: CUDA_PATH, then the standard prefix.
std::vector<fs::path> toolkit_roots() {
  std::vector<fs::path> roots;
  if (const std::string p = knobs::CUDA_PATH.get(); !p.empty()) roots.emplace_back(p);
  roots.emplace_back("/usr/local/cuda");
  return roots;
}

// `lib<stem>.so.<major>` files in `dir`, newest major first (not the .alt or builtins copies).
std::vector<fs::path> versioned_libraries(const fs::path& dir, const std::string& stem) {
  std::vector<std::pair<int, fs::path>> found;
  std::error_code ec;
  const std::string prefix = "lib" + stem + ".so.";
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos) continue;
    found.emplace_back(std::stoi(rest), entry.path());
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

// dlopen of the first candidate that loads: files under the roots, then sonames on the
// loader's path. `tried` lists what was attempted, for the error message.
void* open_library(const std::string& stem, std::string& opened, std::string& tried) {
  std::vector<std::string> candidates;
  for (const fs::path& root : toolkit_roots())
    for (const char* sub : {"lib64", "lib", "targets/x86_64-linux/lib"})
      for (const fs::path& p : versioned_libraries(root / sub, stem)) candidates.push_back(p);
  for (int major = 14; major >= 11; --major)
    candidates.push_back("lib" + stem + ".so." + std::to_string(major));
  candidates.push_back("lib" + stem + ".so");
  for (const std::string& c : candidates) {
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = c;
      return lib;
    }
  }
  tried = "CUDA_PATH (" +
          (knobs::CUDA_PATH.get().empty() ? std::string("unset") : knobs::CUDA_PATH.get()) +
          "), /usr/local/cuda and the loader's path (lib" + stem + ".so.11 .. .14)";
  return nullptr;
}

struct LoadedNvrtc {
  Nvrtc api;
  std::string why;
};

LoadedNvrtc load_nvrtc_once() {
  LoadedNvrtc out;
  std::string tried;
  void* lib = open_library("nvrtc", out.api.library, tried);
  if (lib == nullptr) {
    out.why = "NVRTC (libnvrtc.so) not found in " + tried +
              "; install the CUDA toolkit or set CUDA_PATH to it";
    return out;
  }
#define TG_CUDA_LOAD(fn, type)                                                                     \
  out.api.fn = reinterpret_cast<std::add_pointer_t<type>>(dlsym(lib, #fn));                        \
  if (out.api.fn == nullptr && out.why.empty())                                                    \
    out.why = out.api.library + " lacks " #fn "; install a CUDA toolkit of version 11.2 or newer";
  TG_NVRTC_FUNCTIONS(TG_CUDA_LOAD)
#undef TG_CUDA_LOAD
  if (!out.why.empty()) return out;
  out.api.nvrtcVersion(&out.api.major, &out.api.minor);
  // The headers beside the library (cuda_fp16.h, cuda_bf16.h), for toolkits whose NVRTC does
  // not carry them built in.
  std::error_code ec;
  std::vector<fs::path> includes;
  if (const fs::path dir = fs::path(out.api.library).parent_path(); !dir.empty())
    includes.push_back(dir / ".." / "include");
  for (const fs::path& root : toolkit_roots()) includes.push_back(root / "include");
  for (const fs::path& inc : includes)
    if (fs::exists(inc / "cuda_fp16.h", ec)) {
      out.api.include_dir = fs::weakly_canonical(inc, ec).string();
      break;
    }
  return out;
}

struct LoadedJitLink {
  NvJitLink api;
  std::string why;
};

LoadedJitLink load_nvjitlink_once() {
  LoadedJitLink out;
  std::string tried;
  void* lib = open_library("nvJitLink", out.api.library, tried);
  if (lib == nullptr) {
    out.why = "nvJitLink (libnvJitLink.so) not found in " + tried +
              "; install the CUDA toolkit (12.0 or newer) or set CUDA_PATH to it";
    return out;
  }
#define TG_CUDA_LOAD(fn, type)                                                                     \
  out.api.fn = reinterpret_cast<std::add_pointer_t<type>>(dlsym(lib, #fn));                        \
  if (out.api.fn == nullptr && out.why.empty())                                                    \
    out.why = out.api.library + " lacks " #fn "; install a CUDA toolkit of version 12.0 or newer";
  TG_NVJITLINK_FUNCTIONS(TG_CUDA_LOAD)
#undef TG_CUDA_LOAD
  if (out.why.empty()) out.api.nvJitLinkVersion(&out.api.major, &out.api.minor);
  return out;
}

} // namespace

std::string toolkit_program(const std::string& name) {
  std::error_code ec;
  for (const fs::path& root : toolkit_roots())
    if (fs::exists(root / "bin" / name, ec)) return (root / "bin" / name).string();
  return "";
}

const Nvrtc* load_nvrtc(std::string& why) {
  static const LoadedNvrtc l = load_nvrtc_once();
  if (!l.why.empty()) {
    why = l.why;
    return nullptr;
  }
  return &l.api;
}

const NvJitLink* load_nvjitlink(std::string& why) {
  static const LoadedJitLink l = load_nvjitlink_once();
  if (!l.why.empty()) {
    why = l.why;
    return nullptr;
  }
  return &l.api;
}

} // namespace tg::cuda
