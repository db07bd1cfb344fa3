#pragma once
// A read-only memory mapping of a whole file, shared by the loaders that create tensors over a
// file in place (safetensors, GGUF): the tensors hold the mapping, so it is unmapped when the
// last of them goes.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace tg::data {

struct FileMapping {
  void* addr = nullptr;
  size_t size = 0;
  FileMapping() = default;
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();
  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(addr), size}; }
};

// Maps `path` read-only. tg::Error naming the file when it cannot be opened, stat'ed or mapped.
std::shared_ptr<FileMapping> map_file(const std::filesystem::path& path);

} // namespace tg::data
