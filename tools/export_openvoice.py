#!/usr/bin/env python3
"""Export the OpenVoice V2 tone-colour converter (MyShell, MIT) to the two ONNX graphs sauti runs:

    tone_encoder.onnx   spectrogram [1, frames, 513] -> tone [1, 256]
                        the reference encoder: a few seconds of speech to a tone-colour embedding
    converter.onnx      spectrogram [1, 513, frames], noise [1, channels, frames], source_tone [1, 256, 1],
                        target_tone [1, 256, 1] -> waveform [1, 1, 256 x frames]
                        the posterior encoder, the flow forward with the source's tone and back with the target's,
                        and the HiFi-GAN decoder
    openvoice.json      the audio settings sauti reads (sample rate, FFT, hop, window, channels, tau)

The spectrogram (linear magnitude of a 1024-point STFT, hop 256, 22,050 Hz) is computed by sauti, not in the graph.
The posterior's sampling noise is an input (sauti draws it, scaled by tau), so a conversion is reproducible.
Weight norm is folded into the weights before export. The model is built by coqui-tts's OpenVoice implementation.

    python3 tools/export_openvoice.py models/openvoice-v2

reads converter/checkpoint.pth and converter/config.json as `sauti models fetch openvoice-v2` puts them in that
folder (or checkpoint.pth and config.json at its top) and writes the graphs beside them. Dev-only; needs
`pip install torch onnx` and `pip install --no-deps coqui-tts==0.28.0 coqui-tts-trainer==0.4.0 coqpit-config==0.2.5`
with coqui-tts's light dependencies (scipy, librosa, soundfile, pyyaml, fsspec; `torchaudio` and `torchcodec`
present), as tools/make_openvoice_fixtures.py documents.
"""

import json
import sys
from pathlib import Path

import torch
from torch import nn

SPEC_CHANNELS = 513


class ToneEncoder(nn.Module):
    """The reference encoder alone."""

    def __init__(self, model):
        super().__init__()
        self.ref_enc = model.ref_enc

    def forward(self, spectrogram):
        return self.ref_enc(spectrogram)


class Converter(nn.Module):
    """coqui-tts's `OpenVoice.inference` with the posterior's noise as an input and a full mask (one utterance)."""

    def __init__(self, model):
        super().__init__()
        self.enc_q, self.flow, self.dec = model.enc_q, model.flow, model.dec

    def forward(self, spectrogram, noise, source_tone, target_tone):
        mask = torch.ones_like(spectrogram[:, :1, :])
        x = self.enc_q.pre(spectrogram) * mask
        x = self.enc_q.enc(x, mask, g=torch.zeros_like(source_tone))
        stats = self.enc_q.proj(x) * mask
        mean, log_scale = torch.split(stats, self.enc_q.out_channels, dim=1)
        z = (mean + noise * torch.exp(log_scale)) * mask
        z_p = self.flow(z, mask, g=source_tone)
        z_hat = self.flow(z_p, mask, g=target_tone, reverse=True)
        return self.dec(z_hat * mask, g=torch.zeros_like(target_tone))


def fold_weight_norm(model):
    """Replace every weight-normed weight by its plain value (the graphs then hold ordinary convolutions)."""
    from torch.nn.utils import parametrize

    for module in model.modules():
        if parametrize.is_parametrized(module, "weight"):
            parametrize.remove_parametrizations(module, "weight", leave_parametrized=True)


def export(model, out: Path, tau: float):
    """Write the two graphs and openvoice.json for `model` (an eval-mode coqui-tts OpenVoice) to `out`."""
    fold_weight_norm(model)
    out.mkdir(parents=True, exist_ok=True)
    channels = model.enc_q.out_channels
    tone = model.ref_enc.proj.out_features
    frames = 200
    with torch.no_grad():
        torch.onnx.export(
            ToneEncoder(model),
            (torch.rand(1, frames, SPEC_CHANNELS),),
            str(out / "tone_encoder.onnx"),
            input_names=["spectrogram"],
            output_names=["tone"],
            dynamic_axes={"spectrogram": {1: "frames"}},
            opset_version=17,
            dynamo=False,
        )
        torch.onnx.export(
            Converter(model),
            (
                torch.rand(1, SPEC_CHANNELS, frames),
                torch.zeros(1, channels, frames),
                torch.rand(1, tone, 1),
                torch.rand(1, tone, 1),
            ),
            str(out / "converter.onnx"),
            input_names=["spectrogram", "noise", "source_tone", "target_tone"],
            output_names=["waveform"],
            dynamic_axes={
                "spectrogram": {2: "frames"},
                "noise": {2: "frames"},
                "waveform": {2: "samples"},
            },
            opset_version=17,
            dynamo=False,
        )
    settings = {
        "sample_rate": model.config.audio.input_sample_rate,
        "fft_size": model.config.audio.fft_size,
        "hop_length": model.config.audio.hop_length,
        "win_length": model.config.audio.win_length,
        "spec_channels": SPEC_CHANNELS,
        "channels": channels,
        "tone_size": tone,
        "tau": tau,
    }
    (out / "openvoice.json").write_text(json.dumps(settings, indent=1) + "\n")


def main():
    from TTS.vc.configs.openvoice_config import OpenVoiceConfig
    from TTS.vc.models.openvoice import OpenVoice

    folder = Path(sys.argv[1])
    source = folder / "converter" if (folder / "converter" / "checkpoint.pth").exists() else folder
    config = OpenVoiceConfig()
    model = OpenVoice(config)
    model.load_checkpoint(config, str(source / "checkpoint.pth"), eval=True)
    model.eval()
    export(model, folder, tau=float(model.config.model_args.tau))
    print(f"wrote {folder}/tone_encoder.onnx, converter.onnx and openvoice.json")


if __name__ == "__main__":
    main()
