#include "bert_model.hpp"

#include <cmath>

#include "tg/error.hpp"

namespace tinyrun {

using tg::Tensor;
namespace nn = tg::nn;

Tensor bert_gelu(const Tensor& x, bool tanh_form) { return x.gelu(tanh_form ? "tanh" : "none"); }

namespace {

Tensor drop(const Tensor& x, double p) { return p > 0 && Tensor::training ? x.dropout(p) : x; }

} // namespace

BertLayer::BertLayer(const BertConfig& c, double dropout)
    : query(child("attention.self.query",
                  std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size))),
      key(child("attention.self.key", std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size))),
      value(child("attention.self.value",
                  std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size))),
      attn_out(child("attention.output.dense",
                     std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size))),
      attn_norm(child("attention.output.LayerNorm",
                      std::make_unique<nn::LayerNorm>(tg::Shape{c.hidden_size}, c.layer_norm_eps))),
      intermediate(child("intermediate.dense",
                         std::make_unique<nn::Linear>(c.hidden_size, c.intermediate_size))),
      out(child("output.dense", std::make_unique<nn::Linear>(c.intermediate_size, c.hidden_size))),
      out_norm(child("output.LayerNorm",
                     std::make_unique<nn::LayerNorm>(tg::Shape{c.hidden_size}, c.layer_norm_eps))),
      heads_(c.num_attention_heads), dropout_(dropout), tanh_gelu_(c.hidden_act != "gelu") {}

Tensor BertLayer::operator()(const Tensor& x, const Tensor& mask) const {
  const int64_t b = x.size(0), s = x.size(1), h = x.size(2), d = h / heads_;
  auto split = [&](const Tensor& t) { return t.reshape({b, s, heads_, d}).transpose(1, 2); };
  const Tensor q = split(query(x)), k = split(key(x)), v = split(value(x));
  Tensor ctx = q.scaled_dot_product_attention(k, v, mask, Tensor::training ? dropout_ : 0.0);
  ctx = ctx.transpose(1, 2).reshape({b, s, h});
  const Tensor a = attn_norm(drop(attn_out(ctx), dropout_) + x);
  const Tensor m = bert_gelu(intermediate(a), tanh_gelu_).contiguous();
  return out_norm(drop(out(m), dropout_) + a);
}

BertModel::BertModel(const BertConfig& c, double dropout, bool pooler)
    : word_embeddings(child("embeddings.word_embeddings",
                            std::make_unique<nn::Embedding>(c.vocab_size, c.hidden_size))),
      config_(c), position_embeddings(child(
                      "embeddings.position_embeddings",
                      std::make_unique<nn::Embedding>(c.max_position_embeddings, c.hidden_size))),
      token_type_embeddings(
          child("embeddings.token_type_embeddings",
                std::make_unique<nn::Embedding>(c.type_vocab_size, c.hidden_size))),
      embeddings_norm(
          child("embeddings.LayerNorm",
                std::make_unique<nn::LayerNorm>(tg::Shape{c.hidden_size}, c.layer_norm_eps))),
      dropout_(dropout) {
  for (int64_t i = 0; i < c.num_hidden_layers; ++i)
    layers_.push_back(
        &child("encoder.layer." + std::to_string(i), std::make_unique<BertLayer>(c, dropout)));
  if (pooler)
    pooler_ = &child("pooler.dense", std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size));
}

Tensor BertModel::operator()(const Tensor& input_ids, const Tensor& token_type_ids,
                             const Tensor& attention_mask) const {
  if (input_ids.ndim() != 2)
    throw tg::Error("BERT: input_ids must be (batch, sequence), got " + input_ids.str());
  const int64_t b = input_ids.size(0), s = input_ids.size(1);
  if (s > config_.max_position_embeddings)
    throw tg::Error("BERT: a sequence of " + std::to_string(s) + " tokens is longer than the " +
                    std::to_string(config_.max_position_embeddings) +
                    " positions the model has (max_position_embeddings)");
  const Tensor positions = Tensor::arange(s).reshape({1, s}).expand({b, s});
  // The gradient of the summed embeddings stored once: each embedding table's gradient is a
  // one-hot product over the vocabulary, and fused there the LayerNorm backward above it would
  // be recomputed for every vocabulary entry.
  Tensor e = (word_embeddings(input_ids) + position_embeddings(positions) +
              token_type_embeddings(token_type_ids))
                 .contiguous_backward();
  Tensor hdn = drop(embeddings_norm(e), dropout_);
  // Padding gets -10000 added to its attention scores (BERT's extended mask).
  const Tensor mask =
      ((1.0 - attention_mask.cast(tg::dtypes::float32)) * -10000.0).reshape({b, 1, 1, s});
  for (const BertLayer* l : layers_) hdn = (*l)(hdn, mask);
  return hdn;
}

Tensor BertModel::pool(const Tensor& hidden) const {
  if (!pooler_) throw tg::Error("BERT: this model was built without its pooler");
  return (*pooler_)(hidden.index(0, 1)).tanh();
}

BertForPreTraining::BertForPreTraining(const BertConfig& c, double dropout)
    : bert(child("bert", std::make_unique<BertModel>(c, dropout, true))),
      transform(child("cls.predictions.transform.dense",
                      std::make_unique<nn::Linear>(c.hidden_size, c.hidden_size))),
      transform_norm(
          child("cls.predictions.transform.LayerNorm",
                std::make_unique<nn::LayerNorm>(tg::Shape{c.hidden_size}, c.layer_norm_eps))),
      decoder_bias_(param("cls.predictions.bias", Tensor::zeros({c.vocab_size}))),
      seq_relationship(
          child("cls.seq_relationship", std::make_unique<nn::Linear>(c.hidden_size, 2))) {}

PretrainingOutput BertForPreTraining::operator()(const Tensor& input_ids,
                                                 const Tensor& token_type_ids,
                                                 const Tensor& attention_mask,
                                                 const Tensor& masked_positions) const {
  const Tensor hidden = bert(input_ids, token_type_ids, attention_mask);
  const int64_t b = hidden.size(0), s = hidden.size(1), m = masked_positions.size(1);
  // The hidden states at the masked positions, by a one-hot product (tinygrad's gather).
  const Tensor onehot = Tensor::arange(s)
                            .reshape({1, 1, s})
                            .eq(masked_positions.reshape({b, m, 1}))
                            .cast(hidden.dtype());
  const Tensor picked = onehot.matmul(hidden);
  // Stored: the decoder reads each of its rows once per vocabulary entry, and fused there the
  // gather, dense, GELU and LayerNorm above would be recomputed for every one.
  const Tensor t =
      transform_norm(bert_gelu(transform(picked), bert.config().hidden_act != "gelu")).contiguous();
  PretrainingOutput out;
  out.mlm_logits = (t.matmul(bert.word_embeddings.weight.transpose()) + decoder_bias_).contiguous();
  out.nsp_logits = seq_relationship(bert.pool(hidden));
  return out;
}

std::array<Tensor, 3> BertForPreTraining::loss(const PretrainingOutput& out,
                                               const Tensor& masked_lm_ids,
                                               const Tensor& masked_lm_weights,
                                               const Tensor& next_sentence_labels) const {
  const int64_t v = out.mlm_logits.size(-1);
  // Stored, as the logits: its backward reads it per vocabulary entry of both decoder
  // gradients (the weight's and the hidden states').
  const Tensor logp = out.mlm_logits.log_softmax(-1).contiguous();
  const Tensor w = masked_lm_weights.cast(tg::dtypes::float32);
  const Tensor target = masked_lm_ids.one_hot(v).cast(tg::dtypes::float32);
  const Tensor mlm = -(logp * target).sum({-1}).mul(w).sum() / (w.sum() + 1e-5);
  const Tensor nsp = out.nsp_logits.cross_entropy(next_sentence_labels.reshape({-1}));
  return {mlm + nsp, mlm, nsp};
}

} // namespace tinyrun
