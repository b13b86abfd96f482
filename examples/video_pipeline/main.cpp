// video_pipeline: a small text-to-video diffusion pipeline (random weights
// from a fixed seed) instrumented with regiontrace the way a real one is:
//
//   RT_REGION("profiler_region_model_loading")            build the models
//   RT_REGION("profiler_region_inference_pre_denoising")  encode the prompt, draw noise
//   RT_REGION("profiler_region_inference_denoising")      S steps, set_step(i) each,
//                                                         every DiT block a region "blocks.N"
//   RT_REGION("profiler_region_inference_post_denoising") decode, write the GIF
//
// What happens at those marks is chosen per run, for example:
//
//   REGIONTRACE_CONFIG=config/profiles/quickstart.yaml video_pipeline
//   video_pipeline --profile config/profiles/parity.yaml --trace-dir /tmp/a
//   FASTVIDEO_TORCH_PROFILER_DIR=/tmp/traces FASTVIDEO_TORCH_PROFILE_REGIONS=inference_denoising
//     video_pipeline
//
// Two runs with the same seed produce identical activations; --perturb-block K
// makes block K slightly wrong, which `regiontrace diff` then finds.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#include <regiontrace/regiontrace.hpp>
#include <regiontrace/torch.hpp>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "diffusion_models.hpp"
#include "gif_writer.hpp"

namespace {

namespace fs = std::filesystem;

struct Settings {
  std::string prompt = "a red fox running through fresh snow at dawn";
  std::string negative_prompt;
  std::int64_t blocks = 6;
  std::int64_t steps = 8;
  std::int64_t frames = 8;
  std::int64_t height = 64;
  std::int64_t width = 64;
  std::uint64_t seed = 42;
  double guidance = 5.0;
  double shift = 3.0;
  int threads = 1;
  std::string output_dir = "video_pipeline_out";
  int perturb_block = -1;
  double perturb_scale = 0.05;
  int gif_scale = 2;
  int fps = 8;
  std::vector<std::string> profiles;
  std::string trace_dir;
  std::string device = "cpu";
};

struct Models {
  examples::TextEncoder text_encoder{nullptr};
  examples::DiT dit{nullptr};
  examples::VideoDecoder decoder{nullptr};
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

Models load_models(const Settings& s) {
  RT_REGION("profiler_region_model_loading");
  // Every weight comes from this seed: same seed, same model, same video.
  torch::manual_seed(s.seed);
  Models m;
  examples::TextEncoderConfig text;
  m.text_encoder = examples::TextEncoder(text);
  examples::DiTConfig dit;
  dit.blocks = s.blocks;
  dit.text_dim = text.dim;
  m.dit = examples::DiT(dit);
  m.decoder = examples::VideoDecoder(dit.latent_channels);
  m.text_encoder->eval();
  m.dit->eval();
  m.decoder->eval();
  const torch::Device device(s.device);
  m.text_encoder->to(device);
  m.dit->to(device);
  m.decoder->to(device);
  // Once per model: forward(block) regions are then named "blocks.3".
  regiontrace::name_modules(m.dit);
  if (s.perturb_block >= 0)
    m.dit->block_list().at(std::size_t(s.perturb_block))->set_perturbation(s.perturb_scale);
  return m;
}

struct Prepared {
  torch::Tensor text;     // [2, L, D]: unconditional, conditional (classifier-free guidance)
  torch::Tensor latents;  // [1, C, F, h, w]
};

Prepared prepare(const Settings& s, Models& m) {
  RT_REGION("profiler_region_inference_pre_denoising");
  torch::Tensor tokens = torch::stack(
      {m.text_encoder->tokenize(s.negative_prompt), m.text_encoder->tokenize(s.prompt)});
  Prepared p;
  p.text = m.text_encoder->forward(tokens.to(torch::Device(s.device)));
  regiontrace::observe("text_embeddings", p.text);
  const std::int64_t down = examples::VideoDecoderImpl::kUpsampling;
  // The noise has its own generator so it does not depend on how many random
  // numbers building the model drew.
  auto noise_gen = at::detail::createCPUGenerator(s.seed + 1);
  p.latents =
      torch::randn({1, m.dit->config().latent_channels, s.frames, s.height / down, s.width / down},
                   noise_gen, torch::kFloat32)
          .to(torch::Device(s.device));
  regiontrace::observe("initial_latents", p.latents);
  return p;
}

torch::Tensor denoise(const Settings& s, Models& m, const Prepared& p) {
  RT_REGION("profiler_region_inference_denoising");
  const examples::FlowMatchEulerScheduler scheduler(s.steps, s.shift);
  torch::Tensor latents = p.latents;
  for (std::int64_t i = 0; i < scheduler.steps(); ++i) {
    regiontrace::set_step(i);
    // One batch of two: the unconditional and the conditional prediction.
    torch::Tensor both =
        m.dit->forward(torch::cat({latents, latents}),
                       torch::full({2}, scheduler.timestep(i), latents.options()), p.text);
    torch::Tensor uncond = both.slice(0, 0, 1), cond = both.slice(0, 1, 2);
    torch::Tensor velocity = uncond + s.guidance * (cond - uncond);
    latents = scheduler.step(velocity, i, latents);
    regiontrace::observe("latents", latents);
  }
  return latents;
}

fs::path decode_and_save(const Settings& s, Models& m, const torch::Tensor& latents) {
  RT_REGION("profiler_region_inference_post_denoising");
  torch::Tensor video = m.decoder->forward(latents)[0];  // [F, 3, H, W] in [-1, 1]
  regiontrace::observe("video", video);
  torch::Tensor pixels = ((video + 1.0) * 127.5).round().clamp(0, 255).to(torch::kUInt8);
  pixels = pixels.permute({0, 2, 3, 1});  // [F, H, W, 3]
  if (s.gif_scale > 1) {
    pixels = pixels.repeat_interleave(s.gif_scale, 1).repeat_interleave(s.gif_scale, 2);
  }
  pixels = pixels.contiguous().to(torch::kCPU);
  std::vector<examples::RgbImage> frames;
  for (std::int64_t f = 0; f < pixels.size(0); ++f) {
    examples::RgbImage image;
    image.height = int(pixels.size(1));
    image.width = int(pixels.size(2));
    const std::uint8_t* data = pixels[f].data_ptr<std::uint8_t>();
    image.rgb.assign(data, data + pixels[f].numel());
    frames.push_back(std::move(image));
  }
  fs::create_directories(s.output_dir);
  const fs::path path = fs::absolute(fs::path(s.output_dir) / "video.gif").lexically_normal();
  examples::write_gif(path.string(), frames, std::max(1, 100 / std::max(1, s.fps)));
  return path;
}

// How to look at a file the built-in sinks write, by its name.
std::string how_to_open(const std::string& name) {
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  auto ends = [&](const char* e) {
    const std::string suffix(e);
    return name.size() >= suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends(".summary.txt")) return "op summary, sorted by self time";
  if (ends(".summary.json")) return "op summary as JSON";
  if (starts("torch_trace")) return "torch profiler trace: open in https://ui.perfetto.dev";
  if (starts("activations"))
    return "tensor statistics: regiontrace diff PORT.jsonl REFERENCE.jsonl";
  if (starts("memory_trace")) return "memory counters: open in https://ui.perfetto.dev";
  if (starts("memory_summary")) return "peaks per region and leak suspects";
  if (starts("memory_snapshot")) return "live allocations grouped by region";
  if (starts("memory")) return "memory at entry, exit and peak of every region";
  if (starts("timeline"))
    return "every region and step per thread: open in https://ui.perfetto.dev";
  if (starts("region_stats") && ends(".txt"))
    return "count, total, self time, percentiles per region";
  if (starts("region_stats") && ends(".json")) return "region statistics as JSON";
  if (starts("regiontrace_config")) return "the configuration this run used";
  return {};
}

// After shutdown: what the sinks wrote into the output folder, and how to
// look at it.
void print_outputs(const std::string& dir) {
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::cout << "regiontrace outputs in " << fs::absolute(dir).lexically_normal().string() << ":\n";
  for (const fs::path& f : files) {
    const std::string hint = how_to_open(f.filename().string());
    std::cout << "  " << f.string() << (hint.empty() ? "" : "   (" + hint + ")") << "\n";
  }
}

int run(const Settings& s) {
  torch::set_num_threads(s.threads);
  torch::NoGradGuard no_grad;
  const auto t0 = Clock::now();
  Models models = load_models(s);
  const double load_ms = ms_since(t0);
  const auto t1 = Clock::now();
  Prepared prepared = prepare(s, models);
  const double pre_ms = ms_since(t1);
  const auto t2 = Clock::now();
  torch::Tensor latents = denoise(s, models, prepared);
  const double denoise_ms = ms_since(t2);
  const auto t3 = Clock::now();
  const fs::path gif = decode_and_save(s, models, latents);
  const double post_ms = ms_since(t3);
  std::printf(
      "model loading %.0f ms, pre-denoising %.0f ms, denoising %.0f ms (%lld steps), "
      "post-denoising %.0f ms\n",
      load_ms, pre_ms, denoise_ms, static_cast<long long>(s.steps), post_ms);
  std::cout << "video: " << gif.string() << " (" << s.frames << " frames, " << s.width * s.gif_scale
            << "x" << s.height * s.gif_scale << ")\n";
  regiontrace::shutdown();  // flush every sink before listing their files
  const char* env_dir = std::getenv("REGIONTRACE_OUTPUT_DIR");
  print_outputs(!s.trace_dir.empty() ? s.trace_dir : env_dir != nullptr ? env_dir : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"A small text-to-video diffusion pipeline instrumented with regiontrace"};
  app.add_option("--prompt", s.prompt, "what the video shows")->capture_default_str();
  app.add_option("--negative-prompt", s.negative_prompt, "the unconditional prompt of guidance");
  app.add_option("--blocks", s.blocks, "DiT blocks")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--steps", s.steps, "denoising steps")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--frames", s.frames, "video frames")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("--height", s.height, "frame height in pixels (multiple of 16)")
      ->check(CLI::Range(16, 1024))
      ->capture_default_str();
  app.add_option("--width", s.width, "frame width in pixels (multiple of 16)")
      ->check(CLI::Range(16, 1024))
      ->capture_default_str();
  app.add_option("--seed", s.seed, "weights and noise come from it")->capture_default_str();
  app.add_option("--guidance", s.guidance, "classifier-free guidance scale")->capture_default_str();
  app.add_option("--shift", s.shift, "flow-matching sigma shift")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", s.threads, "libtorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("-o,--output-dir,--output", s.output_dir, "where video.gif goes")
      ->capture_default_str();
  app.add_option("--perturb-block", s.perturb_block, "make block K slightly wrong (parity demo)");
  app.add_option("--perturb-scale", s.perturb_scale,
                 "relative error --perturb-block adds (the default is above regiontrace diff's "
                 "bf16 tolerance of 1.6%)")
      ->capture_default_str();
  app.add_option("--gif-scale", s.gif_scale, "enlarge the GIF by this factor")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--fps", s.fps, "GIF frames per second")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--profile", s.profiles, "regiontrace profile (YAML), after REGIONTRACE_CONFIG's");
  app.add_option("--trace-dir", s.trace_dir, "where the sinks write (regiontrace output_dir)");
  app.add_option("--device", s.device, "where the models run: cpu, cuda or cuda:N")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  // The decoder upsamples 8x and the DiT cuts latents into 2x2 patches.
  if (s.height % 16 != 0 || s.width % 16 != 0) {
    std::cerr << "video_pipeline: --height and --width must be multiples of 16\n";
    return 2;
  }
  try {
    const torch::Device device(s.device);
    if (device.is_cuda() && !torch::cuda::is_available()) {
      std::cerr << "video_pipeline: --device " << s.device
                << ": this libtorch has no CUDA or sees no GPU (use --device cpu)\n";
      return 2;
    }
  } catch (const std::exception& e) {
    std::cerr << "video_pipeline: --device " << s.device
              << " is not a device (cpu, cuda, cuda:N)\n";
    return 2;
  }
  if (s.perturb_block >= s.blocks) {
    std::cerr << "video_pipeline: --perturb-block " << s.perturb_block << " but only " << s.blocks
              << " blocks (0.." << s.blocks - 1 << ")\n";
    return 2;
  }
  try {
    // Optional: the first region would start regiontrace too. Starting it
    // here reports a bad configuration before any work is done.
    regiontrace::Options options;
    options.profiles = s.profiles;
    if (!s.trace_dir.empty()) options.set("output_dir", s.trace_dir);
    regiontrace::init(options);
  } catch (const regiontrace::Error& e) {
    std::cerr << "video_pipeline: " << e.what() << "\n";
    return 2;
  }
  try {
    return run(s);
  } catch (const std::exception& e) {
    // As the library does: say what failed; what the sinks recorded is
    // flushed at exit.
    std::cerr << "video_pipeline: " << e.what() << "\n";
    return 1;
  }
}
