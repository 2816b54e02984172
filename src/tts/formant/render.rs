//! The signal path (after Klatt): a glottal source and aspiration through a nasal pole/zero pair and a cascade
//! of five formant resonators, plus frication noise through parallel resonators; 16 kHz.

use std::f32::consts::PI;

use super::phones::{Params, NASAL_POLE};
use super::plan::{Frame, Rng, FRAME_MS};
use super::Preset;

/// Output sample rate.
pub const RATE: f32 = 16_000.0;
/// Samples per control frame.
const FRAME_SAMPLES: usize = (RATE * FRAME_MS / 1000.0) as usize;
/// Coefficients are recomputed this often (1 ms): smooth enough for glides, cheap enough for 100× real time.
const BLOCK: usize = 16;
/// Level of frication relative to voicing (tuned so /s/ sits ~10 dB below an open vowel).
const FRICATION_GAIN: f32 = 0.45;
/// Parallel-branch centre frequencies above the cascade's: the sibilant region.
const F6_PARALLEL: f32 = 6_000.0;
/// Parallel-branch bandwidths (F2–F6): wide, as frication spectra are.
const PARALLEL_BANDWIDTHS: [f32; 5] = [250.0, 320.0, 400.0, 600.0, 900.0];

/// A two-pole resonator with unity gain at 0 Hz.
#[derive(Debug, Clone, Copy, Default)]
struct Resonator {
    a: f32,
    b: f32,
    c: f32,
    y1: f32,
    y2: f32,
}

impl Resonator {
    fn tune(&mut self, frequency: f32, bandwidth: f32) {
        let frequency = frequency.clamp(50.0, 0.45 * RATE);
        let r = (-PI * bandwidth / RATE).exp();
        self.c = -r * r;
        self.b = 2.0 * r * (2.0 * PI * frequency / RATE).cos();
        self.a = 1.0 - self.b - self.c;
    }

    #[inline]
    fn run(&mut self, x: f32) -> f32 {
        let y = self.a * x + self.b * self.y1 + self.c * self.y2;
        self.y2 = self.y1;
        self.y1 = y;
        y
    }
}

/// The inverse of a resonator: a pair of zeros (the nasal antiformant).
#[derive(Debug, Clone, Copy, Default)]
struct AntiResonator {
    a: f32,
    b: f32,
    c: f32,
    x1: f32,
    x2: f32,
}

impl AntiResonator {
    fn tune(&mut self, frequency: f32, bandwidth: f32) {
        let mut pole = Resonator::default();
        pole.tune(frequency, bandwidth);
        self.a = 1.0 / pole.a;
        self.b = -pole.b / pole.a;
        self.c = -pole.c / pole.a;
    }

    #[inline]
    fn run(&mut self, x: f32) -> f32 {
        let y = self.a * x + self.b * self.x1 + self.c * self.x2;
        self.x2 = self.x1;
        self.x1 = x;
        y
    }
}

/// The filters of the vocal tract and of the frication branch, retuned every block.
#[derive(Debug, Clone, Default)]
struct Tract {
    cascade: [Resonator; 5],
    parallel: [Resonator; 5],
    /// Parallel gains, normalised by each resonator's peak gain (≈ f / bandwidth).
    parallel_gains: [f32; 5],
    bypass: f32,
    nasal_pole: Resonator,
    nasal_zero: AntiResonator,
}

impl Tract {
    fn tune(&mut self, p: &Params, preset: &Preset) {
        for ((resonator, &f), &bw) in self.cascade.iter_mut().zip(&p.formants).zip(&p.bandwidths) {
            resonator.tune(f * preset.formant_scale, bw * preset.bandwidth_scale);
        }
        let centres = [
            p.formants[1] * preset.formant_scale,
            p.formants[2] * preset.formant_scale,
            p.formants[3] * preset.formant_scale,
            p.formants[4] * preset.formant_scale,
            F6_PARALLEL,
        ];
        for k in 0..5 {
            self.parallel[k].tune(centres[k], PARALLEL_BANDWIDTHS[k]);
            self.parallel_gains[k] =
                p.fric_gains[k] * PARALLEL_BANDWIDTHS[k] / centres[k] * FRICATION_GAIN;
        }
        self.bypass = p.fric_gains[5] * 0.05 * FRICATION_GAIN;
        self.nasal_pole.tune(NASAL_POLE, 100.0);
        self.nasal_zero.tune(p.nasal_zero, 100.0);
    }

    /// One output sample from the glottal source (into the cascade) and frication noise (into the parallel bank).
    #[inline]
    fn run(&mut self, source: f32, frication: f32) -> f32 {
        let mut y = self.nasal_pole.run(self.nasal_zero.run(source));
        for r in self.cascade.iter_mut() {
            y = r.run(y);
        }
        if frication != 0.0 {
            let mut sign = 1.0;
            for (r, g) in self.parallel.iter_mut().zip(self.parallel_gains) {
                y += sign * g * r.run(frication);
                sign = -sign;
            }
            y += self.bypass * frication;
        }
        y
    }
}

/// The glottal source: a KLGLOTT88-style flow derivative with jitter and spectral tilt.
struct Glottis {
    phase: f32,
    period_f0: f32,
    tilt_state: f32,
}

impl Glottis {
    /// Advance one sample; returns the tilted flow derivative and whether the glottis is open.
    #[inline]
    fn next(&mut self, f0: f32, preset: &Preset, noise: &mut Rng) -> (f32, bool) {
        self.phase += self.period_f0 / RATE;
        if self.phase >= 1.0 {
            self.phase -= 1.0;
            self.period_f0 = f0 * (1.0 + preset.jitter * noise.uniform());
        }
        let tau = self.phase / preset.open_quotient;
        let open = tau < 1.0;
        let flow_derivative = if open {
            2.0 * tau - 3.0 * tau * tau
        } else {
            0.0
        };
        self.tilt_state = (1.0 - preset.tilt) * flow_derivative + preset.tilt * self.tilt_state;
        (self.tilt_state, open)
    }
}

/// Render a control track to samples at 16 kHz, peak-normalised to 0.8 (never clipping).
pub fn render(frames: &[Frame], preset: &Preset, seed: u64) -> Vec<f32> {
    let mut out = Vec::with_capacity(frames.len() * FRAME_SAMPLES);
    let mut noise = Rng::new(seed.rotate_left(17));
    let mut tract = Tract::default();
    let mut glottis = Glottis {
        phase: 0.0,
        period_f0: preset.f0,
        tilt_state: 0.0,
    };
    let blocks = FRAME_SAMPLES / BLOCK;
    for pair in frames.windows(2) {
        for block in 0..blocks {
            let x = block as f32 / blocks as f32;
            let p = pair[0].params.lerp(&pair[1].params, x);
            let f0 = pair[0].f0 + (pair[1].f0 - pair[0].f0) * x;
            tract.tune(&p, preset);
            for _ in 0..BLOCK {
                let (pulse, open) = glottis.next(f0, preset, &mut noise);
                let hiss = noise.uniform();
                let breath = (p.aspiration + preset.breathiness * p.voicing)
                    * hiss
                    * if open { 1.0 } else { 0.4 };
                let frication = if p.frication > 1e-4 {
                    p.frication * noise.uniform()
                } else {
                    0.0
                };
                out.push(tract.run(p.voicing * pulse + 0.35 * breath, frication));
            }
        }
    }
    normalise(&mut out);
    out
}

/// Scale to a 0.8 peak; silence stays silence.
fn normalise(samples: &mut [f32]) {
    let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    if peak > 1e-9 && peak.is_finite() {
        let gain = 0.8 / peak;
        samples.iter_mut().for_each(|s| *s *= gain);
    } else {
        samples.iter_mut().for_each(|s| *s = 0.0);
    }
}
