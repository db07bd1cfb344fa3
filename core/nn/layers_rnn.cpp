// tg::nn recurrent cells: LSTMCell (see tg/nn.hpp), as torch.nn.LSTMCell.
#include <cmath>
#include <string>

#include "tg/error.hpp"
#include "tg/ir/shape.hpp"
#include "tg/nn.hpp"

namespace tg::nn {

LSTMCell::LSTMCell(int64_t input_size_, int64_t hidden_size_, bool has_bias)
    : input_size(input_size_), hidden_size(hidden_size_) {
  if (input_size <= 0 || hidden_size <= 0)
    throw Error("LSTMCell: input_size and hidden_size must be positive, got " +
                std::to_string(input_size) + " and " + std::to_string(hidden_size));
  const double k = 1 / std::sqrt(static_cast<double>(hidden_size));
  weight_ih = param("weight_ih", Tensor::uniform({4 * hidden_size, input_size}, -k, k));
  weight_hh = param("weight_hh", Tensor::uniform({4 * hidden_size, hidden_size}, -k, k));
  if (has_bias) {
    bias_ih = param("bias_ih", Tensor::uniform({4 * hidden_size}, -k, k));
    bias_hh = param("bias_hh", Tensor::uniform({4 * hidden_size}, -k, k));
  }
}

std::pair<Tensor, Tensor>
LSTMCell::operator()(const Tensor& input,
                     const std::optional<std::pair<Tensor, Tensor>>& hx) const {
  const std::string op = "LSTMCell";
  if ((input.ndim() != 1 && input.ndim() != 2) || input.shape().back() != input_size)
    throw Error(op + ": input must be (N, " + std::to_string(input_size) + ") or (" +
                std::to_string(input_size) + ") for input_size=" + std::to_string(input_size) +
                ", got shape " + shape_str(input.shape()));
  const bool unbatched = input.ndim() == 1;
  const Tensor x = unbatched ? input.unsqueeze(0) : input;
  const int64_t n = x.shape()[0];
  const Shape want{n, hidden_size};
  Tensor h, c;
  if (hx) {
    for (const auto& [t, name] : {std::pair{hx->first, "h"}, std::pair{hx->second, "c"}}) {
      const Tensor tt = unbatched && t.ndim() == 1 ? t.unsqueeze(0) : t;
      if (tt.shape() != want)
        throw Error(op + ": hidden state " + name + " must be " +
                    shape_str(unbatched ? Shape{hidden_size} : want) + " for input " +
                    shape_str(input.shape()) + ", got shape " + shape_str(t.shape()));
    }
    h = unbatched ? hx->first.unsqueeze(0) : hx->first;
    c = unbatched ? hx->second.unsqueeze(0) : hx->second;
  } else {
    h = Tensor::zeros(want, x.dtype(), x.device());
    c = Tensor::zeros(want, x.dtype(), x.device());
  }
  Tensor gates = x.linear(weight_ih, bias_ih).add(h.linear(weight_hh, bias_hh));
  const std::vector<Tensor> g = gates.chunk(4, 1); // input, forget, cell, output
  Tensor c2 = g[1].sigmoid().mul(c).add(g[0].sigmoid().mul(g[2].tanh()));
  Tensor h2 = g[3].sigmoid().mul(c2.tanh());
  if (unbatched) return {h2.squeeze(0), c2.squeeze(0)};
  return {h2, c2};
}

} // namespace tg::nn
