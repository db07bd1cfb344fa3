// torch_load: PyTorch checkpoints as tensors; see tg/torch_checkpoint.hpp.
#include "tg/torch_checkpoint.hpp"

#include <cstring>
#include <new>

#include "file_map.hpp"
#include "tg/buffer.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

// The elements of a strided view, gathered into row-major order.
std::vector<uint8_t> gather(const uint8_t* storage, const TorchTensorEntry& e) {
  const auto item = static_cast<size_t>(e.dtype.itemsize());
  size_t numel = 1;
  for (int64_t d : e.shape) numel *= static_cast<size_t>(d);
  std::vector<uint8_t> out(numel * item);
  std::vector<int64_t> idx(e.shape.size(), 0);
  for (size_t n = 0; n < numel; ++n) {
    int64_t at = e.storage_offset;
    for (size_t i = 0; i < idx.size(); ++i) at += idx[i] * e.strides[i];
    std::memcpy(out.data() + n * item, storage + static_cast<size_t>(at) * item, item);
    for (size_t i = idx.size(); i-- > 0;) { // odometer over the shape, last axis fastest
      if (++idx[i] < e.shape[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

} // namespace

const Tensor& TorchCheckpointFile::at(const std::string& name) const {
  for (const auto& [n, t] : tensors)
    if (n == name) return t;
  std::string names;
  for (const auto& [n, t] : tensors) names += (names.empty() ? "" : ", ") + n;
  throw Error("torch checkpoint: no tensor '" + name + "' (the file has: " + names + ")");
}

TorchCheckpointFile torch_load(const std::filesystem::path& path, const std::string& device) {
  std::shared_ptr<data::FileMapping> m = data::map_file(path);
  const TorchCheckpoint ck = parse_torch_checkpoint(m->bytes(), path.string());
  const auto* bytes = static_cast<const uint8_t*>(m->addr);
  const std::string dev = canonical_device(device);
  const bool host_memory = Buffer::host_visible(dev);

  TorchCheckpointFile out;
  for (const TorchTensorEntry& e : ck.tensors) {
    Shape shape;
    int64_t numel = 1;
    for (int64_t d : e.shape) {
      shape.push_back(d);
      numel *= d;
    }
    const uint8_t* storage = bytes + e.storage_begin;
    const auto item = static_cast<size_t>(e.dtype.itemsize());
    Tensor t;
    if (e.contiguous()) {
      const uint8_t* at = storage + static_cast<size_t>(e.storage_offset) * item;
      // Kernels load elements aligned to their size (torch aligns its entries to 64 bytes;
      // an offset view may still start anywhere): misaligned data is copied, not borrowed.
      const bool aligned = reinterpret_cast<uintptr_t>(at) % item == 0;
      if (host_memory && aligned && numel > 0) {
        auto buf = Buffer::borrow_host(dev, e.dtype, numel, const_cast<uint8_t*>(at), m);
        UOpPtr u = buf->uop();
        if (shape != Shape{numel}) u = UOp::make(Ops::RESHAPE, e.dtype, {u}, shape);
        t = Tensor(u, {buf});
      } else {
        t = Tensor::from_bytes(at, static_cast<size_t>(numel) * item, shape, e.dtype, dev);
      }
    } else {
      std::vector<uint8_t> dense;
      try {
        dense = gather(storage, e);
      } catch (const std::bad_alloc&) {
        throw Error(path.string() + ": out of memory gathering the strided tensor " + e.name);
      }
      t = Tensor::from_bytes(dense.data(), dense.size(), shape, e.dtype, dev);
    }
    out.tensors.emplace_back(e.name, std::move(t));
  }
  return out;
}

} // namespace tg
