"""A VITS model as two ONNX graphs, so sauti can stream a voice and time its words:

    model.prior.onnx     input_ids [1, T] + noise_scale, length_scale, noise_scale_w (scalars)
                         → latents [1, C, F] (the decoder's input) and durations [1, T] (frames each token lasts)
    model.decoder.onnx   latents [1, C, F] → waveform [1, F × hop]

Run one after the other on the whole latent they give the waveform of `model.onnx`. The decoder (HiFi-GAN, almost
all of the time) only looks a few frames either side, so sauti decodes the latent in windows with some frames of
context and sends each window's audio as soon as it exists. Single-speaker models only (MMS-TTS): a multi-speaker
decoder also needs the speaker.

Used by make_vits_fixtures.py and export_mms_tts.py; needs torch, transformers, onnx, onnxruntime.
"""

from pathlib import Path

import numpy as np
import onnxruntime
import torch


class _Passthrough(torch.nn.Module):
    """Stands in for the decoder while the prior is traced, so the prior graph holds no decoder."""

    def forward(self, spectrogram, speaker_embeddings=None):
        return spectrogram[:, :1, :]


class PriorGraph(torch.nn.Module):
    """Everything before the decoder: text encoder, duration predictor, expansion, flow."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, noise_scale, length_scale, noise_scale_w):
        captured = {}
        hook = self.model.duration_predictor.register_forward_hook(
            lambda _module, _inputs, output: captured.__setitem__("log_duration", output))
        decoder = self.model.decoder
        self.model.decoder = _Passthrough()
        try:
            self.model.noise_scale = noise_scale
            self.model.noise_scale_duration = noise_scale_w
            speaking_rate = 1.0 / length_scale
            output = self.model(input_ids=input_ids, speaking_rate=speaking_rate)
        finally:
            self.model.decoder = decoder
            hook.remove()
        # The model's own rounding of each token's duration (its attention mask is all ones here).
        durations = torch.ceil(torch.exp(captured["log_duration"]) * (1.0 / speaking_rate))
        return output.spectrogram, durations.squeeze(1).long()


class DecoderGraph(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.decoder = model.decoder

    def forward(self, latents):
        return self.decoder(latents, None).squeeze(1)


def export_split(model, ids, folder):
    """Write model.prior.onnx and model.decoder.onnx for `model` into `folder`."""
    folder = Path(folder)
    if model.config.num_speakers > 1:
        raise SystemExit("split graphs are for single-speaker models")
    model.eval()
    zero = torch.tensor(0.0)
    prior = PriorGraph(model).eval()
    torch.onnx.export(prior, (ids, zero, torch.tensor(1.0), zero), str(folder / "model.prior.onnx"), opset_version=17,
                      dynamo=False, input_names=["input_ids", "noise_scale", "length_scale", "noise_scale_w"],
                      output_names=["latents", "durations"],
                      dynamic_axes={"input_ids": {1: "T"}, "latents": {2: "F"}, "durations": {1: "T"}})
    with torch.no_grad():
        latents, _ = prior(ids, zero, torch.tensor(1.0), zero)
    decoder = DecoderGraph(model).eval()
    torch.onnx.export(decoder, (latents,), str(folder / "model.decoder.onnx"), opset_version=17, dynamo=False,
                      input_names=["latents"], output_names=["waveform"],
                      dynamic_axes={"latents": {2: "F"}, "waveform": {1: "N"}})
    model.eval()


def check_split(folder, ids, length_scale=1.0, context=(8, 16, 24, 32)):
    """The split graphs against model.onnx, and windowed decoding against the whole; prints what it finds and
    returns the largest difference of the whole."""
    folder = Path(folder)
    ids = np.array([ids], dtype=np.int64)
    zero = np.array(0.0, dtype=np.float32)
    feeds = {"input_ids": ids, "noise_scale": zero, "length_scale": np.array(length_scale, dtype=np.float32),
             "noise_scale_w": zero}
    whole = onnxruntime.InferenceSession(str(folder / "model.onnx")).run(None, feeds)[0].reshape(-1)
    latents, durations = onnxruntime.InferenceSession(str(folder / "model.prior.onnx")).run(None, feeds)
    decoder = onnxruntime.InferenceSession(str(folder / "model.decoder.onnx"))
    split = decoder.run(None, {"latents": latents})[0].reshape(-1)
    frames = latents.shape[2]
    hop = len(split) // frames
    assert int(durations.sum()) == frames, (int(durations.sum()), frames)
    assert split.shape == whole.shape, (split.shape, whole.shape)
    difference = float(np.abs(split - whole).max())
    print(f"split graphs vs model.onnx: {frames} frames × {hop}, max |diff| {difference:.2e}")
    for pad in context:
        windowed = []
        start, size = 0, 16
        while start < frames:
            end = min(frames, start + size)
            low, high = max(0, start - pad), min(frames, end + pad)
            audio = decoder.run(None, {"latents": latents[:, :, low:high]})[0].reshape(-1)
            windowed.append(audio[(start - low) * hop:(end - low) * hop])
            start, size = end, size * 3
        windowed = np.concatenate(windowed)
        print(f"  windows with {pad:2} frames of context: max |diff| {np.abs(windowed - split).max():.2e}")
    return difference
