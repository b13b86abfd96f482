// training_loop: trains the example DiT with flow matching on synthetic
// latent videos, instrumented with the seed's training regions:
//
//   profiler_region_model_loading            build (or load) the models
//   profiler_region_training_epoch           one pass over the data
//     profiler_region_training_step          one optimisation step (set_step: global step)
//       profiler_region_training_dit         forward pass and loss ("blocks.N" inside)
//       profiler_region_training_backward    loss.backward()
//       profiler_region_training_optimizer   optimizer.step()
//     profiler_region_training_validation    loss on held-out data, no gradients
//     profiler_region_training_checkpoint_saving   torch::save of model and optimizer
//
// --distill trains a smaller student to reproduce a teacher (random, or the
// checkpoint of a training run given with --teacher) with the distillation
// regions inside each step: _teacher_forward, _student_forward, _loss, _update.
//
//   REGIONTRACE_CONFIG=config/profiles/quickstart.yaml training_loop
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>
#include <regiontrace/regiontrace.hpp>
#include <regiontrace/torch.hpp>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "diffusion_models.hpp"

namespace {

namespace fs = std::filesystem;
constexpr double kPi = 3.14159265358979323846;

struct Settings {
  int epochs = 3;
  int steps_per_epoch = 8;
  int batch = 4;
  int validation_batches = 2;
  std::int64_t blocks = 2;
  std::int64_t frames = 4;
  std::int64_t latent_size = 8;
  double lr = 2e-3;
  std::uint64_t seed = 0;
  int threads = 1;
  std::string output_dir = "training_loop_out";
  bool distill = false;
  std::int64_t teacher_blocks = 4;
  std::string teacher;
  std::vector<std::string> profiles;
  std::string trace_dir;
};

// Four kinds of synthetic latent video, each with its own caption: enough
// structure that a model can learn velocity fields from the caption.
const std::vector<std::string>& captions() {
  static const std::vector<std::string> c = {"a wave moving left", "a wave moving right",
                                             "a pulsing dot", "a flickering checkerboard"};
  return c;
}

torch::Tensor synthetic_video(std::int64_t kind, double phase, std::int64_t channels,
                              std::int64_t frames, std::int64_t size) {
  auto options = torch::TensorOptions().dtype(torch::kFloat32);
  torch::Tensor t = torch::arange(frames, options).view({1, frames, 1, 1});
  torch::Tensor y = torch::arange(size, options).view({1, 1, size, 1}) / double(size);
  torch::Tensor x = torch::arange(size, options).view({1, 1, 1, size}) / double(size);
  torch::Tensor c = torch::arange(channels, options).view({channels, 1, 1, 1});
  const double two_pi = 2.0 * kPi;
  torch::Tensor v;
  switch (kind) {
    case 0:
      v = torch::sin(two_pi * (2.0 * x + 0.25 * t + phase + 0.25 * c));
      break;
    case 1:
      v = torch::sin(two_pi * (2.0 * x - 0.25 * t + phase + 0.25 * c));
      break;
    case 2: {
      torch::Tensor r2 = (x - 0.5).pow(2) + (y - 0.5).pow(2);
      torch::Tensor radius = 0.15 + 0.1 * torch::sin(two_pi * (0.25 * t + phase));
      v = 2.0 * torch::exp(-r2 / radius.pow(2)) - 0.5 + 0.1 * c;
      break;
    }
    default: {
      torch::Tensor board =
          torch::sign(torch::sin(two_pi * 2.0 * x) * torch::sin(two_pi * 2.0 * y));
      v = board * torch::cos(kPi * t + two_pi * phase) * (1.0 - 0.2 * c);
    }
  }
  return v.expand({channels, frames, size, size}).contiguous();
}

struct Batch {
  torch::Tensor latents;  // [B, C, F, h, w]
  torch::Tensor text;     // [B, L, D]
  torch::Tensor noise;
  torch::Tensor sigma;  // [B]
};

// Draws a batch from `gen`: kinds, phases, noise and noise levels.
Batch make_batch(int size, const torch::Tensor& caption_embeddings, std::int64_t channels,
                 const Settings& s, at::Generator& gen) {
  torch::Tensor kinds =
      torch::randint(0, std::int64_t(captions().size()), {size}, gen, torch::kInt64);
  torch::Tensor phases = torch::rand({size}, gen, torch::kFloat64);
  std::vector<torch::Tensor> videos;
  for (int i = 0; i < size; ++i) {
    videos.push_back(synthetic_video(kinds[i].item<std::int64_t>(), phases[i].item<double>(),
                                     channels, s.frames, s.latent_size));
  }
  Batch b;
  b.latents = torch::stack(videos);
  b.text = caption_embeddings.index_select(0, kinds);
  b.noise = torch::randn(b.latents.sizes(), gen, torch::kFloat32);
  // Logit-normal noise levels, as SD3 trains.
  b.sigma = torch::sigmoid(torch::randn({size}, gen, torch::kFloat32));
  return b;
}

torch::Tensor noisy(const Batch& b) {
  torch::Tensor s = b.sigma.view({-1, 1, 1, 1, 1});
  return (1 - s) * b.latents + s * b.noise;
}

using Clock = std::chrono::steady_clock;

struct Trainer {
  Settings s;
  examples::TextEncoder text_encoder{nullptr};
  examples::DiT model{nullptr};    // the trained model: the DiT, or the student
  examples::DiT teacher{nullptr};  // --distill only
  torch::Tensor caption_embeddings;
  std::unique_ptr<torch::optim::Adam> optimizer;
  std::vector<Batch> validation;
  std::int64_t global_step = 0;

  examples::DiTConfig dit_config(std::int64_t blocks) const {
    examples::DiTConfig c;
    c.dim = 64;
    c.heads = 4;
    c.blocks = blocks;
    c.text_dim = 64;
    return c;
  }

  void load() {
    RT_REGION("profiler_region_model_loading");
    torch::manual_seed(s.seed);
    examples::TextEncoderConfig text;
    text.dim = 64;
    text.layers = 1;
    text.max_tokens = 24;
    text_encoder = examples::TextEncoder(text);
    text_encoder->eval();
    {
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> tokens;
      for (const std::string& c : captions()) tokens.push_back(text_encoder->tokenize(c));
      caption_embeddings = text_encoder->forward(torch::stack(tokens));
    }
    if (s.distill) {
      teacher = examples::DiT(dit_config(s.teacher_blocks));
      if (!s.teacher.empty()) torch::load(teacher, s.teacher);
      teacher->eval();
      for (torch::Tensor& p : teacher->parameters()) p.set_requires_grad(false);
      model = examples::DiT(dit_config(s.blocks));
      regiontrace::name_modules(teacher, "teacher");  // regions teacher.blocks.N
      regiontrace::name_modules(model, "student");    // and student.blocks.N
    } else {
      model = examples::DiT(dit_config(s.blocks));
      regiontrace::name_modules(model);  // regions blocks.N
    }
    optimizer =
        std::make_unique<torch::optim::Adam>(model->parameters(), torch::optim::AdamOptions(s.lr));
    // Held-out batches, fixed once: validation losses are comparable.
    auto gen = at::detail::createCPUGenerator(s.seed + 1000003);
    for (int i = 0; i < s.validation_batches; ++i) {
      validation.push_back(
          make_batch(s.batch, caption_embeddings, model->config().latent_channels, s, gen));
    }
  }

  // Distillation loss of one batch, each phase its own region (in validation
  // too, where they run without gradients).
  torch::Tensor distill_loss(const Batch& b, torch::Tensor x) {
    torch::Tensor t = b.sigma * 1000.0;
    torch::Tensor target;
    {
      RT_REGION("profiler_region_distillation_teacher_forward");
      torch::NoGradGuard no_grad;
      target = teacher->forward(x, t, b.text);
    }
    torch::Tensor pred;
    {
      RT_REGION("profiler_region_distillation_student_forward");
      pred = model->forward(x, t, b.text);
    }
    RT_REGION("profiler_region_distillation_loss");
    return torch::mse_loss(pred, target);
  }

  torch::Tensor flow_matching_loss(const Batch& b, const torch::Tensor& x) {
    torch::Tensor pred = model->forward(x, b.sigma * 1000.0, b.text);
    return torch::mse_loss(pred, b.noise - b.latents);
  }

  double train_step(at::Generator& gen) {
    regiontrace::set_step(global_step++);
    RT_REGION("profiler_region_training_step");
    const Batch b =
        make_batch(s.batch, caption_embeddings, model->config().latent_channels, s, gen);
    const torch::Tensor x = noisy(b);
    torch::Tensor loss;
    if (s.distill) {
      loss = distill_loss(b, x);
      RT_REGION("profiler_region_distillation_update");
      optimizer->zero_grad();
      loss.backward();
      optimizer->step();
      return loss.item<double>();
    }
    {
      RT_REGION("profiler_region_training_dit");
      loss = flow_matching_loss(b, x);
    }
    {
      RT_REGION("profiler_region_training_backward");
      optimizer->zero_grad();
      loss.backward();
    }
    {
      RT_REGION("profiler_region_training_optimizer");
      optimizer->step();
    }
    return loss.item<double>();
  }

  double validate() {
    RT_REGION("profiler_region_training_validation");
    torch::NoGradGuard no_grad;
    double total = 0.0;
    for (const Batch& b : validation) {
      const torch::Tensor x = noisy(b);
      total += (s.distill ? distill_loss(b, x) : flow_matching_loss(b, x)).item<double>();
    }
    return total / double(validation.size());
  }

  fs::path save_checkpoint(int epoch) {
    RT_REGION("profiler_region_training_checkpoint_saving");
    fs::create_directories(s.output_dir);
    const std::string stem = (s.distill ? "student_epoch" : "dit_epoch") + std::to_string(epoch);
    const fs::path model_path =
        fs::absolute(fs::path(s.output_dir) / (stem + ".pt")).lexically_normal();
    torch::save(model, model_path.string());
    torch::save(*optimizer, (fs::path(s.output_dir) / (stem + "_optimizer.pt")).string());
    return model_path;
  }

  int run() {
    load();
    auto gen = at::detail::createCPUGenerator(s.seed + 1);
    double first_loss = -1.0, last_epoch_loss = 0.0;
    if (s.distill) {
      std::printf(
          "distillation: %lld-block teacher -> %lld-block student, %d epochs x %d steps, "
          "batch %d\n",
          static_cast<long long>(s.teacher_blocks), static_cast<long long>(s.blocks), s.epochs,
          s.steps_per_epoch, s.batch);
    } else {
      std::printf("training: %lld-block DiT, %d epochs x %d steps, batch %d\n",
                  static_cast<long long>(s.blocks), s.epochs, s.steps_per_epoch, s.batch);
    }
    const auto start = Clock::now();
    for (int epoch = 1; epoch <= s.epochs; ++epoch) {
      RT_REGION("profiler_region_training_epoch");
      double sum = 0.0;
      for (int i = 0; i < s.steps_per_epoch; ++i) {
        const double loss = train_step(gen);
        if (first_loss < 0) first_loss = loss;
        sum += loss;
      }
      last_epoch_loss = sum / s.steps_per_epoch;
      const double val = validate();
      const fs::path ckpt = save_checkpoint(epoch);
      std::printf("epoch %d/%d: train loss %.4f, validation loss %.4f, checkpoint %s\n", epoch,
                  s.epochs, last_epoch_loss, val, ckpt.string().c_str());
      std::fflush(stdout);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("loss: first step %.4f, last epoch %.4f (%.1f s)\n", first_loss, last_epoch_loss,
                seconds);
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Trainer trainer;
  Settings& s = trainer.s;
  CLI::App app{"Trains the example DiT (or distils it) with regiontrace's training regions"};
  app.add_option("--epochs", s.epochs, "passes over the data")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--steps-per-epoch", s.steps_per_epoch, "optimisation steps per epoch")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--batch", s.batch, "videos per step")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--validation-batches", s.validation_batches, "held-out batches per validation")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--blocks", s.blocks, "DiT blocks (the student's with --distill)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--frames", s.frames, "latent frames")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--latent-size", s.latent_size, "latent height and width (even)")
      ->check(CLI::Range(2, 128))
      ->capture_default_str();
  app.add_option("--lr", s.lr, "Adam learning rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", s.seed, "weights, data and noise come from it")->capture_default_str();
  app.add_option("--threads", s.threads, "libtorch intra-op threads")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app.add_option("-o,--output-dir,--output", s.output_dir, "where checkpoints go")
      ->capture_default_str();
  app.add_flag("--distill", s.distill, "distil a teacher DiT into a smaller student");
  app.add_option("--teacher-blocks", s.teacher_blocks, "teacher DiT blocks (--distill)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--teacher", s.teacher, "teacher checkpoint (a dit_epochN.pt of a training run)")
      ->check(CLI::ExistingFile);
  app.add_option("--profile", s.profiles, "regiontrace profile (YAML), after REGIONTRACE_CONFIG's");
  app.add_option("--trace-dir", s.trace_dir, "where the sinks write (regiontrace output_dir)");
  CLI11_PARSE(app, argc, argv);
  if (s.latent_size % 2 != 0) {
    std::cerr << "training_loop: --latent-size must be even (patch size 2)\n";
    return 2;
  }
  try {
    regiontrace::Options options;
    options.profiles = s.profiles;
    if (!s.trace_dir.empty()) options.set("output_dir", s.trace_dir);
    regiontrace::init(options);
  } catch (const regiontrace::Error& e) {
    std::cerr << "training_loop: " << e.what() << "\n";
    return 2;
  }
  torch::set_num_threads(s.threads);
  try {
    return trainer.run();
  } catch (const c10::Error& e) {
    std::cerr << "training_loop: " << e.what_without_backtrace() << "\n";
    return 1;
  }
}
