#pragma once
// Reading a whole file into memory for the parsers of core/data, with the errors they share:
// a file that cannot be opened or read, and a file too large for memory.
#include <cstdint>
#include <filesystem>
#include <vector>

namespace tg::data {

// The bytes of `path`. tg::Error naming the file when it cannot be opened or read, or when
// there is not the memory to hold it.
std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path);

} // namespace tg::data
