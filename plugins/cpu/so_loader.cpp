// Shared objects through dlopen.
#include <dlfcn.h>

#include "loaders.hpp"
#include "temp_files.hpp"
#include "tg/error.hpp"

namespace tg::cpu {

std::shared_ptr<Program> load_shared_object(std::shared_ptr<CpuRuntime> rt,
                                            const std::string& kernel_name,
                                            std::span<const uint8_t> so) {
  void* handle = nullptr;
  {
    // dlopen needs a file; it can go as soon as the library is mapped.
    TempDir dir;
    const std::string path = dir.file(kernel_name + ".so");
    write_file(path, so);
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
      throw Error("CPU plugin: cannot load the compiled kernel " + kernel_name + ": " + dlerror());
  }
  auto fn = reinterpret_cast<KernelFn>(dlsym(handle, kernel_name.c_str()));
  if (fn == nullptr) {
    dlclose(handle);
    throw Error("CPU plugin: kernel " + kernel_name +
                " not found in its shared object; was it compiled under another name?");
  }
  std::shared_ptr<void> code(handle, [](void* h) { dlclose(h); });
  return std::make_shared<CpuProgram>(std::move(rt), fn, std::move(code));
}

} // namespace tg::cpu
