// Writes a large activation trace, as the activation_trace sink would, to
// time `regiontrace diff` on realistic input (docs/cli.md, "Performance"):
//
//   regiontrace_make_activation_trace OUT.jsonl RECORDS [PERTURB_INDEX]
//
// Records cycle over 40 blocks x 4 tensors per step with seven statistics,
// shape and dtype (about 300 bytes a line). With PERTURB_INDEX, that record's
// abs_mean and every later record's are scaled up by 5%, the way a divergence
// spreads through the layers after it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "regiontrace/sdk/json_writer.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT.jsonl RECORDS [PERTURB_INDEX]\n", argv[0]);
    return 2;
  }
  const long long records = std::atoll(argv[2]);
  const long long perturb = argc > 3 ? std::atoll(argv[3]) : -1;
  std::FILE* out = std::fopen(argv[1], "wb");
  if (out == nullptr) {
    std::perror(argv[1]);
    return 2;
  }
  static const char* const kTensors[] = {"out", "attn_out", "mlp_out", "residual"};
  constexpr int kBlocks = 40;
  constexpr int kPerStep = kBlocks * 4;
  std::string line;
  for (long long i = 0; i < records; ++i) {
    const int block = static_cast<int>((i / 4) % kBlocks);
    const double x = 1.0 + 0.001 * static_cast<double>(i % 9973);
    const double scale = perturb >= 0 && i >= perturb ? 1.05 : 1.0;
    line.clear();
    line += "{\"v\":1,\"module\":";
    regiontrace::json::append_escaped(line, "transformer.blocks." + std::to_string(block));
    line += ",\"tensor\":";
    regiontrace::json::append_escaped(line, kTensors[i % 4]);
    line += ",\"step\":";
    regiontrace::json::append_int(line, i / kPerStep);
    line += ",\"rank\":0,\"seq\":";
    regiontrace::json::append_int(line, i);
    const std::pair<const char*, double> stats[] = {{"abs_mean", x * 0.731 * scale},
                                                    {"sum", -x * 1234.5678},
                                                    {"mean", x * 0.0123},
                                                    {"std", x * 0.987},
                                                    {"min", -x * 7.25},
                                                    {"max", x * 9.125},
                                                    {"rms", x * 1.0412}};
    for (const auto& [name, value] : stats) {
      line += ",\"";
      line += name;
      line += "\":";
      regiontrace::json::append_double(line, value);
    }
    line += ",\"shape\":[1,4096,5120],\"dtype\":\"torch.bfloat16\"}\n";
    std::fwrite(line.data(), 1, line.size(), out);
  }
  return std::fclose(out) == 0 ? 0 : 1;
}
