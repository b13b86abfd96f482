"""The reference: a small DiT-like denoiser in PyTorch, traced by regiontrace.

    PYTHONPATH=build/python REGIONTRACE_CONFIG=config/profiles/parity.yaml \\
    REGIONTRACE_OUTPUT_DIR=/tmp/parity/ref \\
      ~/.cache/regiontrace/venv/bin/python examples/parity/reference.py --weights /tmp/parity/weights.safetensors

It writes the weights, the input latents and the timesteps to a safetensors
file (the C++ port, port.cpp, reads them back), then runs the denoising loop.
What regiontrace records is decided by the configuration, exactly as for the
port: the same profile (or the seed's FASTVIDEO_TRACE_* variables) on both
sides gives two JSONL files that `regiontrace diff` compares.
"""

import argparse
import json
import struct

import torch
from torch import nn

import regiontrace

# Both sides: 8 input channels, width 32, four blocks, three steps.
IN_DIM, WIDTH, BLOCKS, TOKENS, STEPS = 8, 32, 4, 16, 3


class Block(nn.Module):
    """Pre-norm MLP block with a residual: x + fc2(gelu(fc1(norm(x))))."""

    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.fc1 = nn.Linear(WIDTH, 4 * WIDTH)
        self.fc2 = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(IN_DIM, WIDTH)
        self.temb = nn.Linear(1, WIDTH)
        self.blocks = nn.ModuleList([Block() for _ in range(BLOCKS)])
        self.head = nn.Linear(WIDTH, IN_DIM)

    def forward(self, x, t):
        h = self.embed(x) + self.temb(t.reshape(1, 1))
        for block in self.blocks:
            h = block(h)
        return self.head(h)


def save_safetensors(path, tensors):
    """The safetensors layout, written by hand (no dependency): an 8-byte
    little-endian header length, a JSON header with each tensor's dtype, shape
    and byte range, then the raw little-endian data."""
    header, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        data = t.detach().contiguous().to(torch.float32).numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    blob = json.dumps(header, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)  # data 8-byte aligned, as safetensors does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for chunk in chunks:
            f.write(chunk)


@torch.no_grad()
def denoise(model, latents, timesteps):
    with regiontrace.region("inference_denoising"):
        for step, t in enumerate(timesteps):
            regiontrace.set_step(step)
            eps = model(latents, t)
            latents = latents - 0.3 * eps
            regiontrace.observe("latents", latents)
    return latents


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", required=True, help="safetensors file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # compare like with like: same reduction order both sides
    model = Denoiser().eval()
    latents = torch.randn(TOKENS, IN_DIM)
    timesteps = torch.linspace(1.0, 0.2, STEPS)
    save_safetensors(args.weights, {**model.state_dict(), "input.latents": latents,
                                    "input.timesteps": timesteps})

    # Regions named as named_modules() spells them: the C++ forward() names
    # the port's modules the same way.
    handle = regiontrace.trace_modules(model, layers=r"^(embed|temb|blocks\.\d+|head)$")
    out = denoise(model, latents, timesteps)
    handle.remove()
    print(f"reference: output abs mean "
          f"{out.abs().mean().item():.6f}")


if __name__ == "__main__":
    main()
