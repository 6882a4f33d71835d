"""The tenth differential set, part one: networks exported from PyTorch (issue 25, "networks you
have not seen": files written by other toolchains).

Each network is a ``torch.nn.Module`` written the way PyTorch code writes it (NCHW tensors,
BatchNorm, ReLU/Hardswish/SiLU, adaptive average pooling, flatten + linear, depthwise and grouped
convolutions, residual adds, an MLP, a 1-D audio net, GRU/LSTM, upsampling by interpolate, cat,
split, chunk, permute and view), exported with ``torch.export``, quantized to static int8 by the
PT2E flow (litert-torch's ``PT2EQuantizer``: symmetric int8 weights per channel or per tensor,
asymmetric int8 activations, observers calibrated on a seeded set) and converted by litert-torch.
The files keep float inputs and outputs (QUANTIZE/DEQUANTIZE at the edges) and the converter's
NCHW<->NHWC TRANSPOSEs, as users of litert-torch get them.

Runs in its own virtual environment (torch 2.13 CPU + litert-torch 0.10; never a dependency of
npuplan), seeded by name:
  /work/torchvenv/bin/python bench/zoo/zoo10_models.py [--out /tmp/zoo10] [--only NAME ...]
Writes DIR/<name>.tflite and DIR/manifest.json (family, quantization, input shape, operator types);
a network the exporter or converter refuses is a FAILED line and the rest go on.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Spec:
    """One network: how to build it, its input shape (NCHW, NCL or NF) and its quantization."""

    family: str
    build: Callable[[], nn.Module]
    shape: tuple[int, ...]
    per_channel: bool = True


def _cbr(cin: int, cout: int, k: int = 3, s: int = 1, groups: int = 1, act: type[nn.Module] = nn.ReLU) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), act())


class SmallCnn(nn.Module):
    """conv-BN-ReLU, conv-BN-Hardswish stride 2, conv-BN-SiLU, max pool, adaptive avg pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(_cbr(3, 16), _cbr(16, 32, s=2, act=nn.Hardswish), _cbr(32, 32, act=nn.SiLU),
                                  nn.MaxPool2d(2))
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.body(x), 1), 1))


class DepthwiseNet(nn.Module):
    """MobileNet-v1 style: depthwise 3x3 + pointwise, ReLU6 (hardtanh), stride 2 twice."""

    def __init__(self) -> None:
        super().__init__()
        layers: list[nn.Module] = [_cbr(3, 16, s=2, act=nn.ReLU6)]
        for cin, cout, s in ((16, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)):
            layers += [_cbr(cin, cin, s=s, groups=cin, act=nn.ReLU6), _cbr(cin, cout, k=1, act=nn.ReLU6)]
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(128, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.body(x).mean((2, 3)))


class Basic(nn.Module):
    def __init__(self, cin: int, cout: int, s: int) -> None:
        super().__init__()
        self.a = _cbr(cin, cout, s=s)
        self.b = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, s, bias=False), nn.BatchNorm2d(cout))
                     if s != 1 or cin != cout else nn.Identity())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.b(self.a(x)) + self.skip(x))


class ResNet(nn.Module):
    """ResNet-ish: stem, three basic blocks (one projection shortcut), avg pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(_cbr(3, 16), Basic(16, 16, 1), Basic(16, 32, 2), Basic(32, 32, 1))
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.body(x), (1, 1)), 1))


class Mlp(nn.Module):
    """Linear-ReLU stack with a GELU and a residual."""

    def __init__(self) -> None:
        super().__init__()
        self.a, self.b, self.c, self.d = nn.Linear(64, 128), nn.Linear(128, 128), nn.Linear(128, 64), nn.Linear(64, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.a(x))
        h = h + F.relu(self.b(h))
        return self.d(F.relu(self.c(h)))


class Audio1d(nn.Module):
    """Keyword spotting on (N, 10 MFCC, 49 frames): Conv1d-BN-ReLU x3 (stride, dilation), avg pool."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv1d(10, 32, 5, 2, 2), nn.BatchNorm1d(32), nn.ReLU(),
            nn.Conv1d(32, 32, 3, 1, 2, dilation=2), nn.BatchNorm1d(32), nn.ReLU(),
            nn.Conv1d(32, 48, 3, 1, 1, groups=16), nn.BatchNorm1d(48), nn.ReLU())
        self.fc = nn.Linear(48, 12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(F.adaptive_avg_pool1d(self.body(x), 1).flatten(1))


class Recurrent(nn.Module):
    """A one-layer GRU or LSTM over (N, T, F), the last step into a linear."""

    def __init__(self, cell: type[nn.Module]) -> None:
        super().__init__()
        self.rnn = cell(16, 24, batch_first=True)
        self.fc = nn.Linear(24, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.rnn(x)[0][:, -1])


class GruCells(nn.Module):
    """A GRU written out as torch ops (as code that avoids nn.GRU does), unrolled over 6 steps."""

    def __init__(self) -> None:
        super().__init__()
        self.x2h, self.h2h = nn.Linear(16, 3 * 24), nn.Linear(24, 3 * 24)
        self.fc = nn.Linear(24, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.zeros(x.shape[0], 24)
        for t in range(x.shape[1]):
            xr, xz, xn = self.x2h(x[:, t]).chunk(3, 1)
            hr, hz, hn = self.h2h(h).chunk(3, 1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            h = (1 - z) * torch.tanh(xn + r * hn) + z * h
        return self.fc(h)


class UNet(nn.Module):
    """Encoder-decoder: max pool down, nearest and bilinear interpolate up, torch.cat skips."""

    def __init__(self) -> None:
        super().__init__()
        self.e1, self.e2, self.e3 = _cbr(3, 8), _cbr(8, 16), _cbr(16, 32)
        self.d2, self.d1 = _cbr(48, 16), _cbr(24, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.e1(x)
        b = self.e2(F.max_pool2d(a, 2))
        c = self.e3(F.max_pool2d(b, 2))
        b = self.d2(torch.cat([F.interpolate(c, scale_factor=2, mode="nearest"), b], 1))
        up = F.interpolate(b, scale_factor=2, mode="bilinear", align_corners=False)
        return self.out(self.d1(torch.cat([up, a], 1)))


class ShuffleNet(nn.Module):
    """ShuffleNet-v2 units: chunk, channel shuffle by view/transpose/view, split, cat."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = _cbr(3, 24, s=2)
        self.branch = nn.ModuleList(nn.Sequential(_cbr(12, 12, k=1), _cbr(12, 12, groups=12, act=nn.Identity),
                                                  _cbr(12, 12, k=1)) for _ in range(2))
        self.fc = nn.Linear(24, 10)

    @staticmethod
    def shuffle(x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        return x.view(n, 2, c // 2, h, w).transpose(1, 2).contiguous().view(n, c, h, w)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        for branch in self.branch:
            left, right = x.chunk(2, dim=1)
            x = self.shuffle(torch.cat([left, branch(right)], 1))
        a, b = torch.split(x, [8, 16], dim=1)
        return self.fc(torch.cat([a.mean((2, 3)), b.amax((2, 3))], 1))


class PermuteView(nn.Module):
    """Patch tokens by view/permute, a token-mixing linear on permuted tokens, view back to NCHW."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 4, 4), nn.BatchNorm2d(16), nn.ReLU())
        self.mix = nn.Linear(64, 64)
        self.chan = nn.Linear(16, 32)
        self.head = nn.Conv2d(32, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        n, c, h, w = x.shape
        t = x.view(n, c, h * w)
        t = t + self.mix(t)
        t = F.relu(self.chan(t.permute(0, 2, 1)))
        return self.head(t.permute(0, 2, 1).reshape(n, 32, h, w))


class SqueezeExcite(nn.Module):
    """MobileNet-v3 block: expand, depthwise, SE (avg pool, 1x1 convs, hardsigmoid, mul), project."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = _cbr(3, 16, s=2, act=nn.Hardswish)
        self.exp, self.dw = _cbr(16, 48, k=1, act=nn.Hardswish), _cbr(48, 48, k=5, groups=48, act=nn.Hardswish)
        self.se1, self.se2 = nn.Conv2d(48, 12, 1), nn.Conv2d(12, 48, 1)
        self.proj = nn.Sequential(nn.Conv2d(48, 16, 1, bias=False), nn.BatchNorm2d(16))
        self.fc = nn.Linear(16, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        y = self.dw(self.exp(x))
        y = y * F.hardsigmoid(self.se2(F.relu(self.se1(F.adaptive_avg_pool2d(y, 1)))))
        x = x + self.proj(y)
        return self.fc(x.mean((2, 3)))


class Deconv(nn.Module):
    """ConvTranspose2d upsampling (stride 2, k 4 and k 2), sigmoid and tanh heads, avg pool ceil_mode."""

    def __init__(self) -> None:
        super().__init__()
        self.down = _cbr(3, 16, s=2)
        self.up1 = nn.ConvTranspose2d(16, 8, 4, 2, 1)
        self.up2 = nn.ConvTranspose2d(8, 4, 2, 2)
        self.pool = nn.AvgPool2d(3, 2, ceil_mode=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.up2(F.relu(self.up1(self.down(x))))
        return torch.sigmoid(self.pool(y)) + torch.tanh(y[:, :, ::2, ::2])


class Activations(nn.Module):
    """LeakyReLU, ELU, GELU, Sigmoid, Tanh, Softmax and clamp on a conv net's features."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2, self.c3 = _cbr(3, 16, act=nn.Identity), _cbr(16, 16, act=nn.Identity), nn.Conv2d(16, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.leaky_relu(self.c1(x), 0.1)
        x = F.elu(self.c2(x)) + F.gelu(x)
        x = torch.clamp(self.c3(x), -2.0, 3.0)
        return torch.softmax(x.mean((2, 3)), dim=-1)


class Attention(nn.Module):
    """One transformer encoder layer on 16 tokens of 32: LayerNorm, 2-head attention, MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 2, 64, dropout=0.0, batch_first=True, norm_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)


MODELS: dict[str, Spec] = {
    "pt_small_cnn_32": Spec("cnn", SmallCnn, (1, 3, 32, 32)),
    "pt_small_cnn_pertensor_32": Spec("cnn", SmallCnn, (1, 3, 32, 32), per_channel=False),
    "pt_depthwise_64": Spec("mobilenet", DepthwiseNet, (1, 3, 64, 64)),
    "pt_resnet_32": Spec("resnet", ResNet, (1, 3, 32, 32)),
    "pt_resnet_pertensor_24": Spec("resnet", ResNet, (1, 3, 24, 24), per_channel=False),
    "pt_mlp_64": Spec("mlp", Mlp, (1, 64)),
    "pt_audio1d_49": Spec("audio", Audio1d, (1, 10, 49)),
    "pt_gru_8x16": Spec("rnn", lambda: Recurrent(nn.GRU), (1, 8, 16)),
    "pt_lstm_8x16": Spec("rnn", lambda: Recurrent(nn.LSTM), (1, 8, 16)),
    "pt_gru_cells_6x16": Spec("rnn", GruCells, (1, 6, 16)),
    "pt_unet_32": Spec("unet", UNet, (1, 3, 32, 32)),
    "pt_shufflenet_32": Spec("shufflenet", ShuffleNet, (1, 3, 32, 32)),
    "pt_permute_view_32": Spec("mixer", PermuteView, (1, 3, 32, 32)),
    "pt_se_block_48": Spec("mobilenet_v3", SqueezeExcite, (1, 3, 48, 48)),
    "pt_deconv_24": Spec("decoder", Deconv, (1, 3, 24, 24)),
    "pt_activations_16": Spec("activations", Activations, (1, 3, 16, 16)),
    "pt_attention_16x32": Spec("transformer", Attention, (1, 16, 32)),
}


def _calibrated(name: str, spec: Spec) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The network exported, PT2E-quantized and calibrated on 16 seeded samples."""
    from litert_torch.quantize import pt2e_quantizer as pq
    from torchao.quantization.pt2e import quantize_pt2e

    torch.manual_seed(zlib.crc32(name.encode()))
    module = spec.build().eval()
    for m in module.modules():  # BatchNorm statistics as a trained net has them
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 2.0)
            m.weight.data.uniform_(0.5, 1.5)
    args = (torch.randn(*spec.shape),)
    exported = torch.export.export(module, args).module()
    quantizer = pq.PT2EQuantizer().set_global(pq.get_symmetric_quantization_config(is_per_channel=spec.per_channel))
    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
    for _ in range(16):
        prepared(torch.randn(*spec.shape))
    return quantize_pt2e.convert_pt2e(prepared, fold_quantize=False), args, quantizer  # type: ignore[return-value]


def convert(name: str, spec: Spec) -> bytes:
    """The network as litert-torch writes it."""
    import litert_torch
    from litert_torch.quantize.quant_config import QuantConfig

    module, args, quantizer = _calibrated(name, spec)  # type: ignore[misc]
    edge = litert_torch.convert(module, args, quant_config=QuantConfig(pt2e_quantizer=quantizer))
    return bytes(edge.model_content())


def op_types(data: bytes) -> list[str]:
    """The operator types of a file (by its builtin codes), sorted."""
    from ai_edge_litert import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    model = schema.ModelT.InitFromPackedBuf(data, 0)
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in model.operatorCodes]
    return sorted({names.get(codes[op.opcodeIndex], "?") for sg in model.subgraphs for op in sg.operators or ()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/zoo10"))
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest_path = args.out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    for name in args.only or list(MODELS):
        spec = MODELS[name]
        try:
            data = convert(name, spec)
        except Exception as error:  # noqa: BLE001 - report and go on with the rest of the set
            print(f"{name}: FAILED {type(error).__name__}: {str(error).splitlines()[0][:200] if str(error) else ''}",
                  file=sys.stderr, flush=True)
            continue
        (args.out / f"{name}.tflite").write_bytes(data)
        manifest[name] = {"family": spec.family, "toolchain": "litert-torch PT2E",
                          "quant": "per-channel" if spec.per_channel else "per-tensor",
                          "input": list(spec.shape), "ops": op_types(data)}
        print(name, len(data), manifest[name]["ops"], flush=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
