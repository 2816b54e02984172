//! Acoustic targets of Swahili phonemes for the formant synthesizer (adult male reference; presets scale them).

use crate::tts::g2p::Phoneme;

/// Synthesizer controls for one instant. Frequencies in Hz, amplitudes linear (0–1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Formant frequencies F1–F5 of the cascade (vocal tract).
    pub formants: [f32; 5],
    /// Their bandwidths.
    pub bandwidths: [f32; 5],
    /// Voicing amplitude.
    pub voicing: f32,
    /// Aspiration noise into the cascade (breath, /h/, stop release).
    pub aspiration: f32,
    /// Frication noise into the parallel branch.
    pub frication: f32,
    /// Parallel-branch gains at F2–F6 and the bypass (fricative and burst spectra).
    pub fric_gains: [f32; 6],
    /// Nasal zero frequency; equal to the nasal pole (270 Hz) it cancels and the tract is oral.
    pub nasal_zero: f32,
}

impl Params {
    /// Linear interpolation towards `to` (`x` = 0 gives `self`, 1 gives `to`).
    pub fn lerp(&self, to: &Params, x: f32) -> Params {
        let mix = |a: f32, b: f32| a + (b - a) * x;
        let each = |a: &[f32], b: &[f32], out: &mut [f32]| {
            for ((o, &a), &b) in out.iter_mut().zip(a).zip(b) {
                *o = mix(a, b);
            }
        };
        let mut p = *self;
        each(&self.formants, &to.formants, &mut p.formants);
        each(&self.bandwidths, &to.bandwidths, &mut p.bandwidths);
        each(&self.fric_gains, &to.fric_gains, &mut p.fric_gains);
        p.voicing = mix(self.voicing, to.voicing);
        p.aspiration = mix(self.aspiration, to.aspiration);
        p.frication = mix(self.frication, to.frication);
        p.nasal_zero = mix(self.nasal_zero, to.nasal_zero);
        p
    }
}

/// Frequency of the nasal pole; the nasal zero sits here too when the velum is closed.
pub const NASAL_POLE: f32 = 270.0;

pub const NEUTRAL: Params = Params {
    formants: [500.0, 1500.0, 2500.0, 3300.0, 3800.0],
    bandwidths: [80.0, 100.0, 150.0, 250.0, 300.0],
    voicing: 0.0,
    aspiration: 0.0,
    frication: 0.0,
    fric_gains: [0.0; 6],
    nasal_zero: NASAL_POLE,
};

/// One stretch of a phoneme's realisation (stops are closure + burst + aspiration).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Piece {
    /// Controls during this piece.
    pub params: Params,
    /// Duration at speaking rate 1.0, in milliseconds.
    pub ms: f32,
    /// Whether the formants should follow the neighbouring vowel (/h/, closures) rather than a locus.
    pub transparent: bool,
}

fn tract(f1: f32, f2: f32, f3: f32) -> Params {
    Params {
        formants: [f1, f2, f3, 3300.0, 3800.0],
        ..NEUTRAL
    }
}

fn vowel(f1: f32, f2: f32, f3: f32, b1: f32) -> Params {
    Params {
        bandwidths: [b1, 100.0, 150.0, 250.0, 300.0],
        voicing: 1.0,
        ..tract(f1, f2, f3)
    }
}

/// Parallel gains for a place of articulation: [F2, F3, F4, F5, F6, bypass].
fn spectrum(place: Place) -> [f32; 6] {
    match place {
        Place::Labial => [0.0, 0.0, 0.0, 0.0, 0.1, 0.5],
        Place::Dental => [0.0, 0.0, 0.1, 0.2, 0.3, 0.35],
        Place::Alveolar => [0.0, 0.0, 0.2, 0.7, 1.0, 0.0],
        Place::Postalveolar => [0.0, 1.0, 2.0, 1.0, 0.4, 0.0],
        Place::Velar => [0.6, 1.0, 0.3, 0.0, 0.0, 0.0],
    }
}

#[derive(Debug, Clone, Copy)]
enum Place {
    Labial,
    Dental,
    Alveolar,
    Postalveolar,
    Velar,
}

/// Formant loci (F1, F2, F3) that transitions into and out of a consonant head for.
fn locus(place: Place) -> Params {
    match place {
        Place::Labial => tract(250.0, 900.0, 2200.0),
        Place::Dental => tract(300.0, 1500.0, 2600.0),
        Place::Alveolar => tract(300.0, 1700.0, 2700.0),
        Place::Postalveolar => tract(300.0, 2000.0, 2700.0),
        Place::Velar => tract(300.0, 1900.0, 2400.0),
    }
}

fn piece(params: Params, ms: f32) -> Piece {
    Piece {
        params,
        ms,
        transparent: false,
    }
}

fn stop(place: Place, voiced: bool) -> Vec<Piece> {
    let closure = Params {
        voicing: if voiced { 0.12 } else { 0.0 },
        formants: [
            200.0,
            locus(place).formants[1],
            locus(place).formants[2],
            3300.0,
            3800.0,
        ],
        ..locus(place)
    };
    let burst = Params {
        frication: if voiced { 0.5 } else { 0.8 },
        fric_gains: spectrum(place),
        voicing: if voiced { 0.3 } else { 0.0 },
        ..locus(place)
    };
    let mut pieces = vec![
        piece(closure, if voiced { 45.0 } else { 55.0 }),
        piece(burst, 12.0),
    ];
    if !voiced {
        let aspiration = Params {
            aspiration: 0.25,
            ..locus(place)
        };
        pieces.push(Piece {
            params: aspiration,
            ms: 12.0,
            transparent: true,
        });
    }
    pieces
}

fn fricative(place: Place, voiced: bool, strength: f32) -> Vec<Piece> {
    let params = Params {
        frication: strength * if voiced { 0.6 } else { 1.0 },
        fric_gains: spectrum(place),
        voicing: if voiced { 0.35 } else { 0.0 },
        ..locus(place)
    };
    vec![piece(params, if voiced { 70.0 } else { 85.0 })]
}

fn nasal(place: Place, zero: f32, ms: f32) -> Piece {
    let mut params = locus(place);
    params.formants[0] = 280.0;
    params.bandwidths[0] = 100.0;
    params.voicing = 0.75;
    params.nasal_zero = zero;
    piece(params, ms)
}

fn approximant(f1: f32, f2: f32, f3: f32, ms: f32, voicing: f32) -> Piece {
    piece(
        Params {
            voicing,
            ..tract(f1, f2, f3)
        },
        ms,
    )
}

/// The pieces that realise a phoneme, with base durations (stressed/final lengthening is applied later).
pub fn pieces(phoneme: Phoneme) -> Vec<Piece> {
    use Phoneme::*;
    match phoneme {
        A => vec![piece(vowel(730.0, 1300.0, 2450.0, 90.0), 85.0)],
        E => vec![piece(vowel(500.0, 1850.0, 2550.0, 70.0), 85.0)],
        I => vec![piece(vowel(290.0, 2250.0, 3000.0, 60.0), 80.0)],
        O => vec![piece(vowel(500.0, 900.0, 2450.0, 70.0), 85.0)],
        U => vec![piece(vowel(320.0, 800.0, 2300.0, 65.0), 80.0)],
        P => stop(Place::Labial, false),
        B => stop(Place::Labial, true),
        T => stop(Place::Alveolar, false),
        D => stop(Place::Alveolar, true),
        K => stop(Place::Velar, false),
        G => stop(Place::Velar, true),
        Ch => affricate(false, 0.9),
        J => affricate(true, 0.8),
        F => fricative(Place::Labial, false, 0.5),
        V => fricative(Place::Labial, true, 0.5),
        Th => fricative(Place::Dental, false, 0.5),
        Dh => fricative(Place::Dental, true, 0.5),
        S => fricative(Place::Alveolar, false, 1.0),
        Z => fricative(Place::Alveolar, true, 1.0),
        Sh => fricative(Place::Postalveolar, false, 1.0),
        Gh => fricative(Place::Velar, true, 0.6),
        Kh => fricative(Place::Velar, false, 0.7),
        H => vec![Piece {
            params: Params {
                aspiration: 0.6,
                ..NEUTRAL
            },
            ms: 60.0,
            transparent: true,
        }],
        M => vec![nasal(Place::Labial, 1000.0, 65.0)],
        N => vec![nasal(Place::Alveolar, 1500.0, 60.0)],
        Ny => vec![nasal(Place::Postalveolar, 1900.0, 70.0)],
        Ng => vec![nasal(Place::Velar, 2400.0, 70.0)],
        SylM => vec![nasal(Place::Labial, 1000.0, 90.0)],
        SylN => vec![nasal(Place::Alveolar, 1500.0, 90.0)],
        L => vec![approximant(360.0, 1300.0, 2700.0, 55.0, 0.8)],
        R => vec![
            approximant(400.0, 1400.0, 1900.0, 14.0, 0.7),
            approximant(350.0, 1500.0, 2000.0, 14.0, 0.25),
        ],
        W => vec![approximant(300.0, 700.0, 2200.0, 50.0, 0.8)],
        Y => vec![approximant(270.0, 2100.0, 3000.0, 50.0, 0.8)],
        Mb => prenasalised(
            nasal(Place::Labial, 1000.0, 45.0),
            stop(Place::Labial, true),
        ),
        Nd => prenasalised(
            nasal(Place::Alveolar, 1500.0, 45.0),
            stop(Place::Alveolar, true),
        ),
        Nj => prenasalised(nasal(Place::Postalveolar, 1900.0, 45.0), pieces(J)),
        Ngg => prenasalised(nasal(Place::Velar, 2400.0, 45.0), stop(Place::Velar, true)),
        Nz => prenasalised(
            nasal(Place::Alveolar, 1500.0, 45.0),
            fricative(Place::Alveolar, true, 1.0),
        ),
        Mv => prenasalised(
            nasal(Place::Labial, 1000.0, 45.0),
            fricative(Place::Labial, true, 0.5),
        ),
    }
}

/// A postalveolar closure released into frication (ch, j), both shortened.
fn affricate(voiced: bool, strength: f32) -> Vec<Piece> {
    let closure = stop(Place::Postalveolar, voiced).swap_remove(0);
    let mut pieces = vec![closure];
    pieces.extend(fricative(Place::Postalveolar, voiced, strength));
    pieces
        .into_iter()
        .map(|p| Piece {
            ms: p.ms * 0.7,
            ..p
        })
        .collect()
}

/// A nasal murmur followed by a shortened oral release.
fn prenasalised(nasal: Piece, oral: Vec<Piece>) -> Vec<Piece> {
    let mut out = vec![nasal];
    out.extend(oral.into_iter().map(|p| Piece {
        ms: p.ms * 0.6,
        ..p
    }));
    out
}
