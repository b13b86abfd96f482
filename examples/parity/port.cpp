// The C++ port of reference.py, traced by regiontrace::forward(): the same
// model, the weights and inputs the reference wrote (a safetensors file), the
// same configuration. `regiontrace diff` then compares the two runs' records.
//
//   REGIONTRACE_CONFIG=config/profiles/parity.yaml REGIONTRACE_OUTPUT_DIR=/tmp/parity/port
//   build/bin/parity_port --weights /tmp/parity/weights.safetensors    (with those two set)
//
// --perturb-block K scales block K's fc2 weight by (1 + --perturb, 0.05): a port
// with one block off, which `regiontrace diff` must name.
#include <torch/torch.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "regiontrace/regiontrace.hpp"
#include "regiontrace/torch.hpp"

namespace {

constexpr int64_t kInDim = 8, kWidth = 32, kBlocks = 4;

struct BlockImpl : torch::nn::Module {
  BlockImpl()
      : norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kWidth})))),
        fc1(register_module("fc1", torch::nn::Linear(kWidth, 4 * kWidth))),
        fc2(register_module("fc2", torch::nn::Linear(4 * kWidth, kWidth))) {}
  // x + fc2(gelu(fc1(norm(x)))): torch::gelu's default is the exact (erf)
  // form, as Python's F.gelu.
  torch::Tensor forward(const torch::Tensor& x) { return x + fc2(torch::gelu(fc1(norm(x)))); }
  torch::nn::LayerNorm norm;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Block);

struct DenoiserImpl : torch::nn::Module {
  DenoiserImpl()
      : embed(register_module("embed", torch::nn::Linear(kInDim, kWidth))),
        temb(register_module("temb", torch::nn::Linear(1, kWidth))),
        blocks(register_module("blocks", torch::nn::ModuleList())),
        head(register_module("head", torch::nn::Linear(kWidth, kInDim))) {
    for (int64_t i = 0; i < kBlocks; ++i) blocks->push_back(Block());
  }
  // Each traced call was `module->forward(...)`; regiontrace::forward opens
  // the region "blocks.3" and observes the output as `out`, as the Python
  // side's trace_modules() does.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& t) {
    // Two statements: the operands of `+` may run in either order, and the
    // records follow execution order.
    torch::Tensor h = regiontrace::forward(embed, x);
    h = h + regiontrace::forward(temb, t.reshape({1, 1}));
    for (std::size_t i = 0; i < blocks->size(); ++i) {
      h = regiontrace::forward(blocks->ptr<BlockImpl>(i), h);
    }
    return regiontrace::forward(head, h);
  }
  torch::nn::Linear embed, temb;
  torch::nn::ModuleList blocks;
  torch::nn::Linear head;
};
TORCH_MODULE(Denoiser);

// Reads a safetensors file of F32 tensors (what reference.py writes): an
// 8-byte little-endian header length, a JSON header, then the raw data.
std::map<std::string, torch::Tensor> load_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  unsigned char size_bytes[8];
  in.read(reinterpret_cast<char*>(size_bytes), 8);
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | size_bytes[i];
  std::string header(header_size, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_size));
  if (!in) throw std::runtime_error(path + ": truncated header");
  const std::vector<char> data((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
  std::map<std::string, torch::Tensor> tensors;
  const nlohmann::json index = nlohmann::json::parse(header);
  for (auto entry = index.begin(); entry != index.end(); ++entry) {
    const std::string& name = entry.key();
    const nlohmann::json& info = entry.value();
    if (name == "__metadata__") continue;
    if (info.at("dtype") != "F32") throw std::runtime_error(path + ": " + name + " is not F32");
    const auto shape = info.at("shape").get<std::vector<int64_t>>();
    const auto range = info.at("data_offsets").get<std::vector<std::size_t>>();
    torch::Tensor t = torch::empty(shape, torch::kFloat32);
    if (range.at(1) > data.size() ||
        range.at(1) - range.at(0) != static_cast<std::size_t>(t.nbytes())) {
      throw std::runtime_error(path + ": " + name + " has a bad byte range");
    }
    std::memcpy(t.data_ptr(), data.data() + range[0], t.nbytes());  // little-endian host
    tensors.emplace(name, t);
  }
  return tensors;
}

struct Args {
  std::string weights;
  int perturb_block = -1;
  double perturb = 0.05;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--weights") {
      a.weights = value();
    } else if (arg == "--perturb-block") {
      a.perturb_block = std::stoi(value());
    } else if (arg == "--perturb") {
      a.perturb = std::stod(value());
    } else {
      throw std::runtime_error("unknown argument " + arg +
                               " (--weights FILE [--perturb-block K] [--perturb 0.05])");
    }
  }
  if (a.weights.empty()) throw std::runtime_error("--weights FILE is required");
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse_args(argc, argv);
  torch::NoGradGuard no_grad;
  torch::set_num_threads(1);  // the reference's setting: same reduction order

  Denoiser model;
  auto tensors = load_safetensors(args.weights);
  for (auto& item : model->named_parameters()) {
    auto it = tensors.find(item.key());
    if (it == tensors.end()) throw std::runtime_error(args.weights + " lacks " + item.key());
    item.value().copy_(it->second);
  }
  if (args.perturb_block >= 0) {
    model->blocks->ptr<BlockImpl>(args.perturb_block)->fc2->weight.mul_(1.0 + args.perturb);
  }
  regiontrace::name_modules(model);  // "embed", "blocks.0", ... as named_modules() spells them

  torch::Tensor latents = tensors.at("input.latents");
  const torch::Tensor timesteps = tensors.at("input.timesteps");
  {
    RT_REGION("inference_denoising");
    for (int64_t step = 0; step < timesteps.size(0); ++step) {
      regiontrace::set_step(step);
      const torch::Tensor eps = model->forward(latents, timesteps[step]);
      latents = latents - 0.3 * eps;
      regiontrace::observe("latents", latents);
    }
  }
  std::cout << "port: output abs mean " << latents.abs().mean().item<double>() << "\n";
  return 0;
} catch (const std::exception& e) {
  std::cerr << "parity_port: " << e.what() << "\n";
  return 2;
}
