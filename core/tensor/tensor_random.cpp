// Random numbers as tinygrad makes them: threefry2x32 (Salmon et al., "Parallel random numbers:
// as easy as 1, 2, 3") over a counter, keyed by the seed and a per-call counter. The key lives
// in a small buffer on each device, so that every call compiles to the same kernel, and each
// call advances its call counter on the device (tinygrad's _device_rng_counters): a TinyJit
// replay of a step that draws numbers draws new ones. The bits
// depend only on (seed, call number, element index), so runs and devices agree.
#include <atomic>
#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

std::mutex g_rng_mu;
uint64_t g_seed = 0;
// Per device: (seed word, calls so far), uint32; made on first use after a manual_seed.
std::map<std::string, Tensor>& rng_keys() {
  static auto& keys = *new std::map<std::string, Tensor>();
  return keys;
}

Tensor rotl(const Tensor& x, int r) {
  return x.lshift(x.scalar_like(int64_t{r})).bitwise_or(x.rshift(x.scalar_like(int64_t{32 - r})));
}

// threefry2x32-20 of counters (x0, x1) under key (k0, k1), all uint32 tensors; returns x0.
Tensor threefry2x32(Tensor x0, Tensor x1, const Tensor& k0, const Tensor& k1) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const Tensor k2 = k0.bitwise_xor(k1).bitwise_xor(k0.scalar_like(int64_t{0x1BD11BDA}));
  const Tensor ks[3] = {k0, k1, k2};
  x0 = x0.add(ks[0]);
  x1 = x1.add(ks[1]);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) {
      x0 = x0.add(x1);
      x1 = rotl(x1, kRot[(i % 2) * 4 + j]).bitwise_xor(x0);
    }
    x0 = x0.add(ks[(i + 1) % 3]);
    x1 = x1.add(ks[(i + 2) % 3]).add(x1.scalar_like(int64_t{i + 1}));
  }
  return x0;
}

// `n` random uint32 words for the next call.
Tensor random_bits(int64_t n, const std::string& device) {
  Tensor k;
  {
    std::lock_guard lock(g_rng_mu);
    auto it = rng_keys().find(device);
    if (it == rng_keys().end()) {
      const std::vector<uint32_t> key{static_cast<uint32_t>(g_seed ^ (g_seed >> 32)), 0};
      it = rng_keys().emplace(device, Tensor::from_vector(key, Shape{2}, device).realize()).first;
    }
    // This call draws with the count before key += (0, 1). The incremented key is stored in a
    // buffer of its own, which the draw reads however late it is realized, then copied back:
    // two launches, both inside a jitted step when drawn there, so its replays draw anew.
    Tensor step = Tensor::from_vector(std::vector<uint32_t>{0, 1}, Shape{2}, device);
    Tensor next = (it->second + step).realize();
    it->second.assign(next).realize();
    k = next - step;
  }
  Tensor k0 = k.index(0).reshape({1}).expand({n});
  Tensor k1 = k.index(1).reshape({1}).expand({n});
  Tensor counter = Tensor::arange(n, dtypes::uint32, device);
  return threefry2x32(counter, counter.mul(0).add(int64_t{0x6a09e667}), k0, k1);
}

int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw Error("random: negative dimension in shape " + shape_str(s));
    n *= d;
  }
  return n;
}

} // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard lock(g_rng_mu);
  g_seed = seed;
  rng_keys().clear(); // the next draw on each device starts a new key
}

Tensor Tensor::rand(const Shape& shape, DType dtype, const std::string& device) {
  if (!dtype.is_float()) throw Error("rand: dtype must be a float type, got " + dtype.name());
  const std::string dev = canonical_device(device);
  const int64_t n = numel_of(shape);
  if (n == 0) return Tensor::zeros(shape, dtype, dev);
  // 23 random mantissa bits under exponent 0 give [1, 2); minus one is uniform in [0, 1).
  Tensor bits = random_bits(n, dev);
  Tensor one =
      bits.rshift(bits.scalar_like(int64_t{9})).bitwise_or(bits.scalar_like(int64_t{0x3F800000}));
  Tensor u = one.bitcast(dtypes::float32).sub(1.0);
  return u.cast(dtype).reshape(shape);
}

Tensor Tensor::randn(const Shape& shape, DType dtype, const std::string& device) {
  if (!dtype.is_float()) throw Error("randn: dtype must be a float type, got " + dtype.name());
  // Box-Muller from two uniform draws.
  Shape two = shape;
  two.insert(two.begin(), 2);
  Tensor u = rand(two, dtypes::float32, device);
  Tensor r = u.index(1).mul(-1).add(1).log().mul(-2.0).sqrt();
  return u.index(0).mul(2 * std::numbers::pi).cos().mul(r).cast(dtype);
}

Tensor Tensor::randint(const Shape& shape, int64_t low, int64_t high, DType dtype,
                       const std::string& device) {
  if (!(dtype.is_int() || dtype.is_bool()) || dtype.is_bool())
    throw Error("randint: dtype must be an integer type, got " + dtype.name());
  if (high <= low)
    throw Error("randint: empty range [" + std::to_string(low) + ", " + std::to_string(high) + ")");
  Tensor u = rand(shape, dtypes::float64, device);
  Tensor v = u.mul(static_cast<double>(high - low)).floor().add(static_cast<double>(low));
  return v.minimum(static_cast<double>(high - 1)).cast(dtype);
}

} // namespace tg
