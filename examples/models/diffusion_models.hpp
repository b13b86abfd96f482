// A small but complete text-to-video diffusion model family, the shape of the
// real ones (Wan, HunyuanVideo, CogVideoX) at toy size, with random weights:
//
//   TextEncoder   bytes of the prompt -> embedding -> pre-norm transformer layers
//   DiT           latent video patches (frames x rows x cols tokens) -> N blocks of
//                 self-attention, cross-attention to the text and an MLP, each
//                 modulated by the timestep (adaptive LayerNorm) -> velocity
//   VideoDecoder  3D + 2D convolutions from latents to RGB frames (8x upsampling)
//   FlowMatchEulerScheduler  sigmas from 1 (noise) to 0 (data), Euler steps
//
// Shared by video_pipeline (inference) and training_loop (training and
// distillation). The DiT calls regiontrace::forward on every block, so each
// block is a region named after it ("blocks.3") once regiontrace::name_modules
// ran on the model: that is the one-line change a real model needs.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace examples {

// Self- or cross-attention written out with matmuls (works on every libtorch).
class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(std::int64_t dim, std::int64_t context_dim, std::int64_t heads);
  // x: [B, N, dim]; context: [B, M, context_dim] (pass x itself for self-attention).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& context);

 private:
  std::int64_t heads_;
  torch::nn::Linear to_q_{nullptr}, to_k_{nullptr}, to_v_{nullptr}, to_out_{nullptr};
};
TORCH_MODULE(Attention);

class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(std::int64_t dim, std::int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear up_{nullptr}, down_{nullptr};
};
TORCH_MODULE(FeedForward);

// One text encoder layer: pre-norm self-attention and MLP with residuals.
class TextLayerImpl : public torch::nn::Module {
 public:
  TextLayerImpl(std::int64_t dim, std::int64_t heads);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  Attention attn_{nullptr};
  FeedForward mlp_{nullptr};
};
TORCH_MODULE(TextLayer);

struct TextEncoderConfig {
  std::int64_t dim = 128;
  std::int64_t layers = 2;
  std::int64_t heads = 4;
  std::int64_t max_tokens = 32;
};

class TextEncoderImpl : public torch::nn::Module {
 public:
  explicit TextEncoderImpl(const TextEncoderConfig& config);
  // Byte-level tokens: byte + 1, 0 pads; [max_tokens] int64.
  torch::Tensor tokenize(const std::string& prompt) const;
  // tokens: [B, L] int64 -> [B, L, dim].
  torch::Tensor forward(const torch::Tensor& tokens);
  const TextEncoderConfig& config() const { return config_; }

 private:
  TextEncoderConfig config_;
  torch::nn::Embedding token_embedding_{nullptr};
  torch::Tensor position_embedding_;
  torch::nn::ModuleList layers_;
  std::vector<TextLayer> layer_list_;
  torch::nn::LayerNorm final_norm_{nullptr};
};
TORCH_MODULE(TextEncoder);

// One DiT block: adaptive LayerNorm (shift, scale, gate from the conditioning
// vector) around self-attention and the MLP, plus cross-attention to the text.
class DiTBlockImpl : public torch::nn::Module {
 public:
  DiTBlockImpl(std::int64_t dim, std::int64_t text_dim, std::int64_t heads, std::int64_t mlp_ratio);
  // x: [B, N, dim] tokens; text: [B, L, text_dim]; cond: [B, dim].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& text,
                        const torch::Tensor& cond);
  // Multiplies this block's output by (1 + relative_error): the deliberate
  // bug of the parity demo. 0 (the default) leaves the block exact.
  void set_perturbation(double relative_error) { perturbation_ = relative_error; }

 private:
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  Attention self_attn_{nullptr}, cross_attn_{nullptr};
  FeedForward mlp_{nullptr};
  torch::nn::Linear modulation_{nullptr};
  double perturbation_ = 0.0;
};
TORCH_MODULE(DiTBlock);

struct DiTConfig {
  std::int64_t latent_channels = 4;
  std::int64_t patch = 2;  // spatial patch size; one token per frame x patch
  std::int64_t dim = 128;
  std::int64_t heads = 4;
  std::int64_t blocks = 6;
  std::int64_t mlp_ratio = 4;
  std::int64_t text_dim = 128;
};

class DiTImpl : public torch::nn::Module {
 public:
  explicit DiTImpl(const DiTConfig& config);
  // latents: [B, C, F, H, W]; timestep: [B] in [0, 1000]; text: [B, L, text_dim].
  // Returns the predicted velocity, shaped like latents.
  torch::Tensor forward(const torch::Tensor& latents, const torch::Tensor& timestep,
                        const torch::Tensor& text);
  const DiTConfig& config() const { return config_; }
  std::vector<DiTBlock>& block_list() { return block_list_; }

 private:
  torch::Tensor patchify(const torch::Tensor& latents) const;
  torch::Tensor unpatchify(const torch::Tensor& tokens, std::int64_t frames, std::int64_t height,
                           std::int64_t width) const;

  DiTConfig config_;
  torch::nn::Linear patch_embed_{nullptr};
  torch::nn::Sequential time_embed_{nullptr};
  torch::nn::Linear text_pool_proj_{nullptr};
  torch::nn::ModuleList blocks_;  // registered as "blocks": names blocks.0, blocks.1, ...
  std::vector<DiTBlock> block_list_;
  torch::nn::LayerNorm final_norm_{nullptr};
  torch::nn::Linear final_modulation_{nullptr};
  torch::nn::Linear final_proj_{nullptr};
};
TORCH_MODULE(DiT);

// Latents [B, C, F, h, w] -> frames [B, F, 3, 8h, 8w] in [-1, 1], like the
// 8x spatial compression of real video VAEs (without their 4x in time).
class VideoDecoderImpl : public torch::nn::Module {
 public:
  explicit VideoDecoderImpl(std::int64_t latent_channels);
  torch::Tensor forward(const torch::Tensor& latents);
  static constexpr std::int64_t kUpsampling = 8;

 private:
  torch::nn::Conv3d temporal_in_{nullptr};
  torch::nn::GroupNorm norm_in_{nullptr};
  torch::nn::Conv2d up1_{nullptr}, up2_{nullptr}, up3_{nullptr}, to_rgb_{nullptr};
  torch::nn::GroupNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
};
TORCH_MODULE(VideoDecoder);

// Rectified flow: x_t = (1 - sigma) * data + sigma * noise; the model predicts
// the velocity noise - data; sampling walks sigma from 1 to 0 with Euler steps.
class FlowMatchEulerScheduler {
 public:
  // `shift` > 1 spends more steps at high noise (as SD3 and Wan do).
  FlowMatchEulerScheduler(std::int64_t steps, double shift);
  std::int64_t steps() const { return static_cast<std::int64_t>(sigmas_.size()) - 1; }
  double sigma(std::int64_t i) const { return sigmas_.at(static_cast<std::size_t>(i)); }
  double timestep(std::int64_t i) const { return 1000.0 * sigma(i); }
  // One Euler step from sigma(i) to sigma(i + 1).
  torch::Tensor step(const torch::Tensor& velocity, std::int64_t i,
                     const torch::Tensor& sample) const;

 private:
  std::vector<double> sigmas_;
};

// Sinusoidal embedding of scalar positions or timesteps: [N] -> [N, dim].
torch::Tensor sinusoidal_embedding(const torch::Tensor& positions, std::int64_t dim);

}  // namespace examples
