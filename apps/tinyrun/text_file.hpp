#pragma once
// Reading a small text file (a vocabulary, a config) whole, refusing one larger than a limit
// before reading it, with errors naming the file.
#include <cstdint>
#include <filesystem>
#include <string>

namespace tinyrun {

// `what` names the kind of file in messages ("vocabulary").
std::string read_text_file(const std::filesystem::path& path, uint64_t max_bytes,
                           const std::string& what);

} // namespace tinyrun
