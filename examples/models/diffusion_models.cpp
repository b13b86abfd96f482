#include "diffusion_models.hpp"

#include <regiontrace/torch.hpp>

#include <cmath>
#include <stdexcept>

namespace examples {
namespace F = torch::nn::functional;

torch::Tensor sinusoidal_embedding(const torch::Tensor& positions, std::int64_t dim) {
  const std::int64_t half = dim / 2;
  auto options = torch::TensorOptions().dtype(torch::kFloat32).device(positions.device());
  torch::Tensor freqs =
      torch::exp(-std::log(10000.0) * torch::arange(half, options) / static_cast<double>(half));
  torch::Tensor args = positions.to(torch::kFloat32).unsqueeze(1) * freqs.unsqueeze(0);
  torch::Tensor emb = torch::cat({torch::cos(args), torch::sin(args)}, 1);
  if (dim % 2 == 1) emb = F::pad(emb, F::PadFuncOptions({0, 1}));
  return emb;
}

// --- building blocks ----------------------------------------------------------

AttentionImpl::AttentionImpl(std::int64_t dim, std::int64_t context_dim, std::int64_t heads)
    : heads_(heads) {
  if (dim % heads != 0) throw std::invalid_argument("attention: dim must be a multiple of heads");
  to_q_ = register_module("to_q", torch::nn::Linear(dim, dim));
  to_k_ = register_module("to_k", torch::nn::Linear(context_dim, dim));
  to_v_ = register_module("to_v", torch::nn::Linear(context_dim, dim));
  to_out_ = register_module("to_out", torch::nn::Linear(dim, dim));
}

torch::Tensor AttentionImpl::forward(const torch::Tensor& x, const torch::Tensor& context) {
  const std::int64_t b = x.size(0), n = x.size(1), m = context.size(1), dim = x.size(2);
  const std::int64_t head_dim = dim / heads_;
  // [B, N, dim] -> [B, heads, N, head_dim]
  auto split = [&](const torch::Tensor& t, std::int64_t len) {
    return t.view({b, len, heads_, head_dim}).transpose(1, 2);
  };
  torch::Tensor q = split(to_q_(x), n);
  torch::Tensor k = split(to_k_(context), m);
  torch::Tensor v = split(to_v_(context), m);
  torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(head_dim));
  torch::Tensor out = torch::matmul(torch::softmax(scores, -1), v);
  return to_out_(out.transpose(1, 2).reshape({b, n, dim}));
}

FeedForwardImpl::FeedForwardImpl(std::int64_t dim, std::int64_t hidden) {
  up_ = register_module("up", torch::nn::Linear(dim, hidden));
  down_ = register_module("down", torch::nn::Linear(hidden, dim));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  return down_(F::gelu(up_(x)));
}

// --- text encoder -------------------------------------------------------------

TextLayerImpl::TextLayerImpl(std::int64_t dim, std::int64_t heads) {
  norm1_ = register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  attn_ = register_module("attn", Attention(dim, dim, heads));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  mlp_ = register_module("mlp", FeedForward(dim, 4 * dim));
}

torch::Tensor TextLayerImpl::forward(const torch::Tensor& x) {
  torch::Tensor h = norm1_(x);
  torch::Tensor y = x + attn_(h, h);
  return y + mlp_(norm2_(y));
}

TextEncoderImpl::TextEncoderImpl(const TextEncoderConfig& config) : config_(config) {
  token_embedding_ = register_module("token_embedding", torch::nn::Embedding(257, config.dim));
  position_embedding_ = register_parameter("position_embedding",
                                           0.02 * torch::randn({config.max_tokens, config.dim}));
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.layers; ++i) {
    TextLayer layer(config.dim, config.heads);
    layers_->push_back(layer);
    layer_list_.push_back(layer);
  }
  final_norm_ = register_module("final_norm",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
}

torch::Tensor TextEncoderImpl::tokenize(const std::string& prompt) const {
  torch::Tensor tokens = torch::zeros({config_.max_tokens}, torch::kInt64);
  auto acc = tokens.accessor<std::int64_t, 1>();
  const std::size_t n = std::min<std::size_t>(prompt.size(), std::size_t(config_.max_tokens));
  for (std::size_t i = 0; i < n; ++i) {
    acc[static_cast<std::int64_t>(i)] = static_cast<unsigned char>(prompt[i]) + 1;
  }
  return tokens;
}

torch::Tensor TextEncoderImpl::forward(const torch::Tensor& tokens) {
  torch::Tensor x = token_embedding_(tokens) + position_embedding_.slice(0, 0, tokens.size(1));
  for (TextLayer& layer : layer_list_) x = layer(x);
  return final_norm_(x);
}

// --- DiT ----------------------------------------------------------------------

DiTBlockImpl::DiTBlockImpl(std::int64_t dim, std::int64_t text_dim, std::int64_t heads,
                           std::int64_t mlp_ratio) {
  // No affine parameters: scale and shift come from the modulation.
  auto plain = torch::nn::LayerNormOptions({dim}).elementwise_affine(false).eps(1e-6);
  norm1_ = register_module("norm1", torch::nn::LayerNorm(plain));
  self_attn_ = register_module("self_attn", Attention(dim, dim, heads));
  norm2_ = register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({dim})));
  cross_attn_ = register_module("cross_attn", Attention(dim, text_dim, heads));
  norm3_ = register_module("norm3", torch::nn::LayerNorm(plain));
  mlp_ = register_module("mlp", FeedForward(dim, mlp_ratio * dim));
  modulation_ = register_module("modulation", torch::nn::Linear(dim, 6 * dim));
}

torch::Tensor DiTBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& text,
                                    const torch::Tensor& cond) {
  // shift, scale, gate for attention and for the MLP: [B, 1, dim] each.
  std::vector<torch::Tensor> mod = modulation_(F::silu(cond)).unsqueeze(1).chunk(6, -1);
  torch::Tensor h = norm1_(x) * (1 + mod[1]) + mod[0];
  torch::Tensor y = x + mod[2] * self_attn_(h, h);
  y = y + cross_attn_(norm2_(y), text);
  h = norm3_(y) * (1 + mod[4]) + mod[3];
  y = y + mod[5] * mlp_(h);
  if (perturbation_ != 0.0) y = y * (1.0 + perturbation_);
  return y;
}

DiTImpl::DiTImpl(const DiTConfig& config) : config_(config) {
  const std::int64_t patch_dim = config.latent_channels * config.patch * config.patch;
  patch_embed_ = register_module("patch_embed", torch::nn::Linear(patch_dim, config.dim));
  time_embed_ = register_module(
      "time_embed",
      torch::nn::Sequential(torch::nn::Linear(config.dim, config.dim), torch::nn::SiLU(),
                            torch::nn::Linear(config.dim, config.dim)));
  text_pool_proj_ =
      register_module("text_pool_proj", torch::nn::Linear(config.text_dim, config.dim));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.blocks; ++i) {
    DiTBlock block(config.dim, config.text_dim, config.heads, config.mlp_ratio);
    blocks_->push_back(block);
    block_list_.push_back(block);
  }
  final_norm_ = register_module(
      "final_norm",
      torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim}).elementwise_affine(false)));
  final_modulation_ =
      register_module("final_modulation", torch::nn::Linear(config.dim, 2 * config.dim));
  final_proj_ = register_module("final_proj", torch::nn::Linear(config.dim, patch_dim));
}

torch::Tensor DiTImpl::patchify(const torch::Tensor& latents) const {
  const std::int64_t b = latents.size(0), c = latents.size(1), f = latents.size(2);
  const std::int64_t p = config_.patch, h = latents.size(3) / p, w = latents.size(4) / p;
  // [B, C, F, h, p, w, p] -> [B, F, h, w, C, p, p] -> [B, F*h*w, C*p*p]
  return latents.view({b, c, f, h, p, w, p})
      .permute({0, 2, 3, 5, 1, 4, 6})
      .reshape({b, f * h * w, c * p * p});
}

torch::Tensor DiTImpl::unpatchify(const torch::Tensor& tokens, std::int64_t frames,
                                  std::int64_t height, std::int64_t width) const {
  const std::int64_t b = tokens.size(0), c = config_.latent_channels, p = config_.patch;
  const std::int64_t h = height / p, w = width / p;
  return tokens.view({b, frames, h, w, c, p, p})
      .permute({0, 4, 1, 2, 5, 3, 6})
      .reshape({b, c, frames, height, width});
}

// Fixed 3D position code: a third of the channels each for frame, row, column.
static torch::Tensor video_positions(std::int64_t frames, std::int64_t rows, std::int64_t cols,
                                     std::int64_t dim, torch::Device device) {
  const std::int64_t axis_dim = (dim / 3) / 2 * 2;
  torch::Tensor f = sinusoidal_embedding(torch::arange(frames, device), axis_dim);
  torch::Tensor r = sinusoidal_embedding(torch::arange(rows, device), axis_dim);
  torch::Tensor c = sinusoidal_embedding(torch::arange(cols, device), axis_dim);
  torch::Tensor grid =
      torch::cat({f.view({frames, 1, 1, axis_dim}).expand({frames, rows, cols, axis_dim}),
                  r.view({1, rows, 1, axis_dim}).expand({frames, rows, cols, axis_dim}),
                  c.view({1, 1, cols, axis_dim}).expand({frames, rows, cols, axis_dim})},
                 -1);
  grid = grid.reshape({frames * rows * cols, 3 * axis_dim});
  return F::pad(grid, F::PadFuncOptions({0, dim - 3 * axis_dim}));
}

torch::Tensor DiTImpl::forward(const torch::Tensor& latents, const torch::Tensor& timestep,
                               const torch::Tensor& text) {
  const std::int64_t frames = latents.size(2), height = latents.size(3), width = latents.size(4);
  const std::int64_t p = config_.patch;
  if (height % p != 0 || width % p != 0) {
    throw std::invalid_argument("DiT: latent height and width must be multiples of the patch size");
  }
  torch::Tensor x =
      patch_embed_(patchify(latents)) +
      video_positions(frames, height / p, width / p, config_.dim, latents.device()).unsqueeze(0);
  torch::Tensor cond = time_embed_->forward(sinusoidal_embedding(timestep, config_.dim)) +
                       text_pool_proj_(text.mean(1));
  // The one line per call site that makes every block a traced region.
  for (DiTBlock& block : block_list_) x = regiontrace::forward(block, x, text, cond);
  std::vector<torch::Tensor> mod = final_modulation_(F::silu(cond)).unsqueeze(1).chunk(2, -1);
  x = final_proj_(final_norm_(x) * (1 + mod[1]) + mod[0]);
  return unpatchify(x, frames, height, width);
}

// --- decoder ------------------------------------------------------------------

VideoDecoderImpl::VideoDecoderImpl(std::int64_t latent_channels) {
  using torch::nn::Conv2dOptions;
  temporal_in_ = register_module(
      "temporal_in",
      torch::nn::Conv3d(torch::nn::Conv3dOptions(latent_channels, 64, 3).padding(1)));
  norm_in_ = register_module("norm_in", torch::nn::GroupNorm(8, 64));
  up1_ = register_module("up1", torch::nn::Conv2d(Conv2dOptions(64, 32, 3).padding(1)));
  norm1_ = register_module("norm1", torch::nn::GroupNorm(8, 32));
  up2_ = register_module("up2", torch::nn::Conv2d(Conv2dOptions(32, 16, 3).padding(1)));
  norm2_ = register_module("norm2", torch::nn::GroupNorm(4, 16));
  up3_ = register_module("up3", torch::nn::Conv2d(Conv2dOptions(16, 16, 3).padding(1)));
  norm3_ = register_module("norm3", torch::nn::GroupNorm(4, 16));
  to_rgb_ = register_module("to_rgb", torch::nn::Conv2d(Conv2dOptions(16, 3, 3).padding(1)));
}

torch::Tensor VideoDecoderImpl::forward(const torch::Tensor& latents) {
  const std::int64_t b = latents.size(0), frames = latents.size(2);
  // Mix neighbouring frames once, then decode every frame on its own.
  torch::Tensor x = F::silu(norm_in_(temporal_in_(latents)));  // [B, 64, F, h, w]
  x = x.transpose(1, 2).reshape({b * frames, 64, latents.size(3), latents.size(4)});
  auto up =
      F::InterpolateFuncOptions().scale_factor(std::vector<double>{2.0, 2.0}).mode(torch::kNearest);
  x = F::silu(norm1_(up1_(F::interpolate(x, up))));
  x = F::silu(norm2_(up2_(F::interpolate(x, up))));
  x = F::silu(norm3_(up3_(F::interpolate(x, up))));
  x = torch::tanh(to_rgb_(x));
  return x.view({b, frames, 3, x.size(2), x.size(3)});
}

// --- scheduler ----------------------------------------------------------------

FlowMatchEulerScheduler::FlowMatchEulerScheduler(std::int64_t steps, double shift) {
  if (steps < 1) throw std::invalid_argument("scheduler: at least one step");
  for (std::int64_t i = 0; i <= steps; ++i) {
    const double s = 1.0 - double(i) / double(steps);
    sigmas_.push_back(shift * s / (1.0 + (shift - 1.0) * s));
  }
}

torch::Tensor FlowMatchEulerScheduler::step(const torch::Tensor& velocity, std::int64_t i,
                                            const torch::Tensor& sample) const {
  return sample + (sigma(i + 1) - sigma(i)) * velocity;
}

}  // namespace examples
