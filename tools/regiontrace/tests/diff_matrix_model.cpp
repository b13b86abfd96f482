// Writes the activation traces of `regiontrace diff`'s test matrix the way a
// parity run does: a small DiT-like stack (adaptive LayerNorm from the
// timestep, self-attention, MLP, residuals, a denoising loop) run under the
// real activation_trace sink with config/profiles/parity.yaml.
//
//   regiontrace_diff_matrix_model PARITY_PROFILE OUT_DIR
//
// For fp32 and bf16 it writes
//   ref_<dtype>.jsonl                       the reference
//   port_<dtype>.jsonl                      a faithful port: the same weights
//                                           and maths in another op order, so
//                                           it differs by rounding only
//   port_<dtype>_b<K>_s<S>_p<P>.jsonl       that port with block K's output
//                                           scaled by 1 + P/10000 at step S
// The port computes what a C++ rewrite typically computes differently: linear
// layers as addmm on a 2-D view instead of matmul + bias, LayerNorm by hand,
// the attention scale folded into q, and in bf16 the softmax in fp32.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "regiontrace/regiontrace.hpp"
#include "regiontrace/torch.hpp"

namespace {

constexpr int kBlocks = 4;
constexpr int kSteps = 3;
constexpr std::int64_t kTokens = 48;
constexpr std::int64_t kDim = 64;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kHidden = 128;
const int kPerturbedSteps[] = {0, 2};
const int kPerturbationsBp[] = {10, 100, 500};  // 0.1%, 1%, 5% in basis points

struct Linear {
  at::Tensor weight;  // [out, in]
  at::Tensor bias;    // [out]
};

struct Block {
  Linear modulation;  // timestep embedding -> shift, scale, gate for attention and MLP
  Linear q, k, v, out, up, down;
};

struct Weights {
  std::vector<Block> blocks;
  Linear head;
  at::Tensor x0;  // the initial latent tokens
};

Linear make_linear(std::int64_t in, std::int64_t out, double gain = 1.0) {
  return {at::randn({out, in}) * (gain / std::sqrt(double(in))), at::randn({out}) * 0.02};
}

Weights make_weights() {
  at::manual_seed(1234);
  Weights w;
  for (int b = 0; b < kBlocks; ++b) {
    w.blocks.push_back({make_linear(kDim, 6 * kDim, 0.2), make_linear(kDim, kDim),
                        make_linear(kDim, kDim), make_linear(kDim, kDim), make_linear(kDim, kDim),
                        make_linear(kDim, kHidden), make_linear(kHidden, kDim)});
  }
  w.head = make_linear(kDim, kDim);
  w.x0 = at::randn({1, kTokens, kDim});
  return w;
}

Linear cast(const Linear& l, at::ScalarType dtype) {
  return {l.weight.to(dtype), l.bias.to(dtype)};
}

Weights cast(const Weights& w, at::ScalarType dtype) {
  Weights out;
  for (const auto& b : w.blocks) {
    out.blocks.push_back({cast(b.modulation, dtype), cast(b.q, dtype), cast(b.k, dtype),
                          cast(b.v, dtype), cast(b.out, dtype), cast(b.up, dtype),
                          cast(b.down, dtype)});
  }
  out.head = cast(w.head, dtype);
  out.x0 = w.x0.to(dtype);
  return out;
}

// The two implementations of the same maths.
struct Reference {
  static at::Tensor linear(const at::Tensor& x, const Linear& l) {
    return at::matmul(x, l.weight.t()) + l.bias;
  }
  static at::Tensor norm(const at::Tensor& x) { return at::layer_norm(x, {kDim}); }
  static at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const double scale = 1.0 / std::sqrt(double(kDim / kHeads));
    return at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale, -1), v);
  }
};

struct Port {
  static at::Tensor linear(const at::Tensor& x, const Linear& l) {
    const auto flat = x.reshape({-1, x.size(-1)});
    auto sizes = x.sizes().vec();
    sizes.back() = l.weight.size(0);
    return at::addmm(l.bias, flat, l.weight.t()).reshape(sizes);
  }
  static at::Tensor norm(const at::Tensor& x) {
    const auto mean = x.mean(-1, true);
    const auto centred = x - mean;
    const auto var = (centred * centred).mean(-1, true);
    return centred * at::rsqrt(var + 1e-5);
  }
  static at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
    const double scale = 1.0 / std::sqrt(double(kDim / kHeads));
    const auto scores = at::matmul(q * scale, k.transpose(-2, -1));
    return at::matmul(at::softmax(scores.to(at::kFloat), -1).to(v.scalar_type()), v);
  }
};

at::Tensor heads(const at::Tensor& x) {  // [1, N, D] -> [1, H, N, D/H]
  return x.view({1, kTokens, kHeads, kDim / kHeads}).transpose(1, 2);
}

at::Tensor timestep_embedding(int step, at::ScalarType dtype) {
  const auto freqs = at::exp(at::arange(kDim / 2, at::kFloat) * (-std::log(1000.0) / (kDim / 2)));
  const auto angles = freqs * float(1000 - 300 * step);
  return at::cat({at::sin(angles), at::cos(angles)}).view({1, 1, kDim}).to(dtype);
}

template <typename Impl>
at::Tensor block_forward(const Block& b, const at::Tensor& x, const at::Tensor& temb) {
  const auto mod = Impl::linear(at::silu(temb), b.modulation).chunk(6, -1);
  const auto h = Impl::norm(x) * (1 + mod[1]) + mod[0];
  const auto a = Impl::attention(heads(Impl::linear(h, b.q)), heads(Impl::linear(h, b.k)),
                                 heads(Impl::linear(h, b.v)));
  const auto y = x + mod[2] * Impl::linear(a.transpose(1, 2).reshape({1, kTokens, kDim}), b.out);
  const auto m = Impl::norm(y) * (1 + mod[4]) + mod[3];
  return y + mod[5] * Impl::linear(at::gelu(Impl::linear(m, b.up)), b.down);
}

// One run: the denoising loop with every block a region observed as the
// parity profile asks.
template <typename Impl>
void run(const Weights& w, at::ScalarType dtype, int perturb_block, int perturb_step,
         double perturbation) {
  at::Tensor x = w.x0;
  for (int step = 0; step < kSteps; ++step) {
    regiontrace::set_step(step);
    RT_REGION("inference_denoising");
    const auto temb = timestep_embedding(step, dtype);
    at::Tensor h = x;
    for (int b = 0; b < kBlocks; ++b) {
      const regiontrace::Region region("blocks." + std::to_string(b));
      h = block_forward<Impl>(w.blocks[b], h, temb);
      if (b == perturb_block && step == perturb_step) h = h * (1.0 + perturbation);
      regiontrace::observe("out", h);
    }
    x = x - 0.25 * Impl::linear(h, w.head);
  }
}

template <typename Impl>
void traced(const std::string& profile, const std::string& path, const Weights& w,
            at::ScalarType dtype, int perturb_block = -1, int perturb_step = -1,
            double perturbation = 0) {
  regiontrace::Options options;
  options.profiles = {profile};
  options.set("log_level", "warn");
  options.set("sinks.activation_trace.output", path);
  // The parity profile's statistics and the dtype, which picks diff's tolerance.
  options.set("sinks.activation_trace.stats", "abs_mean,mean,std,min,max,sum,dtype");
  regiontrace::init(options);
  run<Impl>(w, dtype, perturb_block, perturb_step, perturbation);
  regiontrace::shutdown();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PARITY_PROFILE OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string profile = argv[1];
  const std::string dir = argv[2];
  at::set_num_threads(1);  // the same rounding on every machine and run
  const Weights fp32 = make_weights();
  for (const auto& [name, dtype] : {std::pair{"fp32", at::kFloat}, {"bf16", at::kBFloat16}}) {
    const Weights w = dtype == at::kFloat ? fp32 : cast(fp32, dtype);
    const std::string base = dir + "/";
    traced<Reference>(profile, base + "ref_" + name + ".jsonl", w, dtype);
    traced<Port>(profile, base + "port_" + name + ".jsonl", w, dtype);
    for (int bp : kPerturbationsBp) {
      for (int step : kPerturbedSteps) {
        for (int b = 0; b < kBlocks; ++b) {
          const std::string file = base + "port_" + name + "_b" + std::to_string(b) + "_s" +
                                   std::to_string(step) + "_p" + std::to_string(bp) + ".jsonl";
          traced<Port>(profile, file, w, dtype, b, step, bp / 10000.0);
        }
      }
    }
  }
  return 0;
}
