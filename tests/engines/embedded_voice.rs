//! The embedded voice as a listener would judge it, measured: format, levels, timing, pitch and vowel quality.

use sauti::audio::{self, SAMPLE_RATE};
use sauti::tts::g2p::Phoneme;
use sauti::tts::{EmbeddedVoice, Synthesizer, TtsError, VoiceSettings};

const SENTENCE: &str = "Habari ya asubuhi, karibu benki yetu.";

fn seconds(samples: &[f32]) -> f64 {
    samples.len() as f64 / f64::from(SAMPLE_RATE)
}

fn speak(voice: &EmbeddedVoice, text: &str, settings: &VoiceSettings) -> Vec<f32> {
    voice
        .synthesize(text, settings)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

#[test]
fn output_is_16k_mono_wav_without_clipping_or_nan() {
    for voice in [EmbeddedVoice::zuri(), EmbeddedVoice::baraka()] {
        let samples = speak(
            &voice,
            "Salio lako ni TSh 12,500. Asante kwa kutumia huduma zetu!",
            &VoiceSettings::default(),
        );
        assert!(
            samples.iter().all(|s| s.is_finite()),
            "NaN or infinity in output"
        );
        let peak = samples.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 0.1 && peak < 0.99, "peak {peak}");
        let wav = audio::encode_wav_16k(&samples);
        let reader = hound::WavReader::new(std::io::Cursor::new(&wav)).expect("valid WAV");
        assert_eq!(
            (reader.spec().sample_rate, reader.spec().channels),
            (16_000, 1)
        );
        let clipped = reader
            .into_samples::<i16>()
            .filter(|s| s.as_ref().is_ok_and(|v| v.unsigned_abs() >= 32_767))
            .count();
        assert_eq!(clipped, 0, "clipped samples");
        let stats = audio::analyse(&samples, SAMPLE_RATE);
        assert!(
            stats.speech_seconds > 0.6 * stats.duration_seconds,
            "mostly speech: {stats:?}"
        );
    }
}

#[test]
fn duration_grows_linearly_with_text_length() {
    let voice = EmbeddedVoice::zuri();
    let settings = VoiceSettings::default();
    let one = seconds(&speak(&voice, SENTENCE, &settings));
    let two = seconds(&speak(&voice, &[SENTENCE; 2].join(" "), &settings));
    let four = seconds(&speak(&voice, &[SENTENCE; 4].join(" "), &settings));
    assert!(one > 1.0 && one < 5.0, "one sentence lasts {one} s");
    assert!(
        (two / one - 2.0).abs() < 0.2,
        "two sentences: {two} s vs {one} s"
    );
    assert!(
        (four / one - 4.0).abs() < 0.4,
        "four sentences: {four} s vs {one} s"
    );
}

#[test]
fn speaking_rate_two_takes_about_half_the_time() {
    let voice = EmbeddedVoice::baraka();
    let normal = seconds(&speak(&voice, SENTENCE, &VoiceSettings::default()));
    let fast = seconds(&speak(
        &voice,
        SENTENCE,
        &VoiceSettings {
            speaking_rate: 2.0,
            ..VoiceSettings::default()
        },
    ));
    let ratio = fast / normal;
    assert!(
        (0.45..=0.6).contains(&ratio),
        "rate 2.0 gives {ratio:.3} of the duration"
    );
}

/// Median F0 (Hz) over voiced 40 ms frames, by normalised autocorrelation between 60 and 400 Hz.
fn median_f0(samples: &[f32]) -> f64 {
    let frame = 640;
    let (min_lag, max_lag) = (16_000 / 400, 16_000 / 60);
    let mut estimates: Vec<f64> = samples
        .chunks_exact(frame)
        .filter_map(|x| {
            let energy: f64 = x.iter().map(|&v| f64::from(v) * f64::from(v)).sum();
            if energy / (frame as f64) < 1e-3 {
                return None;
            }
            let corr = |lag: usize| -> f64 {
                (0..frame - lag)
                    .map(|i| f64::from(x[i]) * f64::from(x[i + lag]))
                    .sum::<f64>()
                    / energy
            };
            let (lag, best) = (min_lag..max_lag)
                .map(|l| (l, corr(l)))
                .max_by(|a, b| a.1.total_cmp(&b.1))?;
            (best > 0.5).then(|| 16_000.0 / lag as f64)
        })
        .collect();
    assert!(estimates.len() > 10, "too few voiced frames");
    estimates.sort_by(f64::total_cmp);
    estimates[estimates.len() / 2]
}

#[test]
fn the_two_presets_are_different_speakers() {
    let settings = VoiceSettings::default();
    let zuri = median_f0(&speak(&EmbeddedVoice::zuri(), SENTENCE, &settings));
    let baraka = median_f0(&speak(&EmbeddedVoice::baraka(), SENTENCE, &settings));
    assert!(
        zuri - baraka >= 60.0,
        "median F0: zuri {zuri:.0} Hz, baraka {baraka:.0} Hz"
    );
    assert!(
        (150.0..300.0).contains(&zuri) && (80.0..160.0).contains(&baraka),
        "{zuri} {baraka}"
    );
}

/// The first two formants (Hz) of a steady vowel: peaks of the LPC envelope (order 14, autocorrelation
/// method, pre-emphasis, Hamming window) averaged over the middle of the vowel.
fn lpc_formants(samples: &[f32]) -> (f64, f64) {
    let order = 14;
    let frame = 512;
    let middle = &samples[samples.len() / 4..samples.len() * 3 / 4];
    let mut envelope = vec![0.0f64; 1000]; // 5 Hz bins up to 5 kHz
    for x in middle.chunks_exact(frame) {
        let w: Vec<f64> = (0..frame)
            .map(|i| {
                let pre = f64::from(x[i])
                    - if i > 0 {
                        0.97 * f64::from(x[i - 1])
                    } else {
                        0.0
                    };
                pre * (0.54
                    - 0.46 * (2.0 * std::f64::consts::PI * i as f64 / (frame - 1) as f64).cos())
            })
            .collect();
        let r: Vec<f64> = (0..=order)
            .map(|k| (0..frame - k).map(|i| w[i] * w[i + k]).sum())
            .collect();
        // Levinson–Durbin.
        let mut a = vec![0.0f64; order + 1];
        a[0] = 1.0;
        let mut error = r[0];
        for i in 1..=order {
            let k = -(0..i).map(|j| a[j] * r[i - j]).sum::<f64>() / error;
            let previous = a.clone();
            for j in 1..i {
                a[j] = previous[j] + k * previous[i - j];
            }
            a[i] = k;
            error *= 1.0 - k * k;
        }
        for (bin, e) in envelope.iter_mut().enumerate() {
            let omega = 2.0 * std::f64::consts::PI * (bin as f64 * 5.0) / 16_000.0;
            let (re, im) = a.iter().enumerate().fold((0.0, 0.0), |(re, im), (n, c)| {
                (
                    re + c * (omega * n as f64).cos(),
                    im - c * (omega * n as f64).sin(),
                )
            });
            *e += -(re * re + im * im).ln();
        }
    }
    let peaks: Vec<f64> = (1..envelope.len() - 1)
        .filter(|&i| envelope[i] > envelope[i - 1] && envelope[i] >= envelope[i + 1] && i * 5 > 150)
        .map(|i| i as f64 * 5.0)
        .collect();
    (peaks[0], peaks[1])
}

#[test]
fn sustained_vowels_have_their_formants() {
    // (vowel, F1 range, F2 range): the usual ranges for adult speakers.
    let expectations = [
        (Phoneme::A, 600.0..1100.0, 1000.0..1800.0),
        (Phoneme::I, 200.0..450.0, 1900.0..3100.0),
        (Phoneme::U, 200.0..480.0, 550.0..1150.0),
    ];
    for voice in [EmbeddedVoice::baraka(), EmbeddedVoice::zuri()] {
        for (vowel, f1_range, f2_range) in expectations.clone() {
            let samples = voice.formant().sustained_vowel(vowel, 0.6);
            assert!(
                (0.5..0.9).contains(&seconds(&samples)),
                "{vowel}: {} s",
                seconds(&samples)
            );
            let (f1, f2) = lpc_formants(&samples);
            assert!(
                f1_range.contains(&f1),
                "{vowel} F1 {f1} Hz with preset {:?}",
                voice.formant().preset()
            );
            assert!(
                f2_range.contains(&f2),
                "{vowel} F2 {f2} Hz with preset {:?}",
                voice.formant().preset()
            );
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_audio() {
    let voice = EmbeddedVoice::zuri();
    let settings = VoiceSettings::default();
    let a = voice
        .synthesize_seeded(SENTENCE, &settings, 7)
        .expect("speaks");
    let b = voice
        .synthesize_seeded(SENTENCE, &settings, 7)
        .expect("speaks");
    let c = voice
        .synthesize_seeded(SENTENCE, &settings, 8)
        .expect("speaks");
    assert_eq!(a, b);
    assert_ne!(a, c, "noise_scale > 0 varies with the seed");
    let flat = VoiceSettings {
        noise_scale: 0.0,
        noise_scale_duration: 0.0,
        ..settings
    };
    assert_eq!(
        voice.synthesize_seeded(SENTENCE, &flat, 1).map(|s| s.len()),
        voice.synthesize_seeded(SENTENCE, &flat, 2).map(|s| s.len()),
        "without duration noise the timing does not depend on the seed"
    );
}

#[test]
fn bad_requests_are_refused_with_a_reason() {
    let voice = EmbeddedVoice::zuri();
    assert_eq!(
        voice.synthesize("  \n ", &VoiceSettings::default()),
        Err(TtsError::EmptyText)
    );
    assert_eq!(
        voice.synthesize("?!...", &VoiceSettings::default()),
        Err(TtsError::NothingToSay)
    );
    for (settings, name) in [
        (
            VoiceSettings {
                speaking_rate: 0.0,
                ..VoiceSettings::default()
            },
            "speaking_rate",
        ),
        (
            VoiceSettings {
                speaking_rate: f32::NAN,
                ..VoiceSettings::default()
            },
            "speaking_rate",
        ),
        (
            VoiceSettings {
                noise_scale: 3.0,
                ..VoiceSettings::default()
            },
            "noise_scale",
        ),
        (
            VoiceSettings {
                noise_scale_duration: -0.1,
                ..VoiceSettings::default()
            },
            "noise_scale_duration",
        ),
    ] {
        let error = voice
            .synthesize("Habari", &settings)
            .expect_err("out of range");
        assert!(
            matches!(error, TtsError::SettingOutOfRange { name: n, .. } if n == name),
            "{error}"
        );
    }
}
