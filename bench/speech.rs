//! Shared by the recognition benchmarks (`asr`, `ctc`): the same 30 s of Swahili speech, and medians.

use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const PARAGRAPH: &str = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu. Salio lako ni shilingi elfu \
kumi na mbili. Ukitaka kutuma pesa, sema kiasi na namba ya simu ya mpokeaji. Tawi letu liko wazi kuanzia saa \
mbili asubuhi hadi saa kumi jioni. Asante kwa kutuchagua, na uwe na siku njema. ";

/// `seconds` of Swahili from the embedded voice, 16 kHz.
pub fn speech(seconds: usize) -> Vec<f32> {
    let voice = EmbeddedVoice::zuri();
    let mut samples = Vec::new();
    while samples.len() < seconds * 16_000 {
        samples.extend(
            voice
                .synthesize(PARAGRAPH, &VoiceSettings::default())
                .unwrap(),
        );
    }
    samples.truncate(seconds * 16_000);
    samples
}

/// The middle value.
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
