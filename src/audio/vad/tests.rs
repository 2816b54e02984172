use super::*;

fn tone(seconds: f64, amplitude: f32) -> Vec<f32> {
    (0..(seconds * 16_000.0) as usize)
        .map(|i| (i as f32 * 0.07).sin() * amplitude)
        .collect()
}

fn noise(seconds: f64, amplitude: f32) -> Vec<f32> {
    let mut state = 12345u32;
    (0..(seconds * 16_000.0) as usize)
        .map(|_| {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            ((state >> 8) as f32 / (1u32 << 24) as f32 - 0.5) * amplitude
        })
        .collect()
}

fn feed(vad: &mut StreamingVad, samples: &[f32], block: usize) -> Vec<VadEvent> {
    samples.chunks(block).flat_map(|b| vad.push(b)).collect()
}

#[test]
fn a_turn_starts_with_speech_and_ends_after_the_silence_setting() {
    for block in [160, 320, 999, 4000] {
        let mut vad = StreamingVad::new(Duration::from_millis(500));
        let mut audio = noise(0.5, 0.002);
        audio.extend(tone(1.2, 0.3));
        let mut line = noise(0.3, 0.002);
        // A pause shorter than the setting does not end the turn.
        audio.append(&mut line);
        audio.extend(tone(0.8, 0.3));
        audio.extend(noise(0.7, 0.002));
        let events = feed(&mut vad, &audio, block);
        assert_eq!(events.len(), 2, "{block}: {events:?}");
        assert_eq!(events[0], VadEvent::SpeechStarted);
        let VadEvent::TurnEnded(turn, _) = &events[1] else {
            panic!("{events:?}");
        };
        let seconds = turn.len() as f64 / 16_000.0;
        // Both bursts and the pause, a little before and after: not the leading or trailing line noise.
        assert!((2.3..2.9).contains(&seconds), "{block}: {seconds}");
        assert!(!vad.in_speech());
    }
}

#[test]
fn clicks_and_steady_line_noise_are_not_speech() {
    let mut vad = StreamingVad::new(Duration::from_millis(300));
    let mut audio = noise(2.0, 0.05);
    audio.extend(tone(0.04, 0.8));
    audio.extend(noise(2.0, 0.05));
    assert!(feed(&mut vad, &audio, 320).is_empty());
    // Speech over that noise is still heard.
    let speech = tone(0.6, 0.5);
    let events = feed(&mut vad, &speech, 320);
    assert_eq!(events, vec![VadEvent::SpeechStarted]);
}

#[test]
fn the_speech_of_a_turn_leaves_its_pauses_out() {
    let mut vad = StreamingVad::new(Duration::from_millis(500));
    assert_eq!(vad.voiced(), Duration::ZERO);
    let mut audio = vec![0.0; 16_000];
    audio.extend(tone(0.3, 0.3));
    audio.extend(vec![0.0; 6_400]);
    vad.push(&audio);
    assert!(vad.in_speech());
    let voiced = vad.voiced().as_millis();
    assert!((260..=320).contains(&voiced), "{voiced} ms");
    vad.push(&vec![0.0; 8_000]);
    assert_eq!(vad.voiced(), Duration::ZERO, "between turns");
}

#[test]
fn digital_silence_never_starts_a_turn() {
    let mut vad = StreamingVad::new(Duration::from_millis(500));
    assert!(feed(&mut vad, &vec![0.0; 48_000], 320).is_empty());
}

fn judged() -> StreamingVad {
    StreamingVad::with(
        Box::new(EnergyJudge::default()),
        Ending::Judged {
            pause: Duration::from_millis(200),
            longest: Duration::from_millis(1_500),
        },
    )
}

#[test]
fn a_pause_judged_complete_ends_the_turn_there() {
    let mut vad = judged();
    let mut audio = vec![0.0; 8_000];
    audio.extend(tone(0.8, 0.3));
    audio.extend(vec![0.0; 16_000]);
    let events = vad.push(&audio);
    assert_eq!(events[0], VadEvent::SpeechStarted);
    let VadEvent::Paused { id, audio: judged } = &events[1] else {
        panic!("{events:?}");
    };
    assert_eq!(events.len(), 2, "the rest waits for the judgement");
    // What is judged is the turn so far: its speech and the pause.
    assert!((1.2..1.4).contains(&(judged.len() as f64 / 16_000.0)));
    let events = vad.decide(*id, true);
    let VadEvent::TurnEnded(turn, EndedBy::Judged) = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(events.len(), 1, "the held silence starts nothing");
    assert!((1.2..1.4).contains(&(turn.len() as f64 / 16_000.0)));
    assert!(!vad.in_speech());
}

#[test]
fn a_pause_judged_incomplete_waits_for_more_speech_or_the_longest_silence() {
    let mut vad = judged();
    let mut audio = vec![0.0; 8_000];
    audio.extend(tone(0.5, 0.3));
    audio.extend(vec![0.0; 8_000]);
    let events = vad.push(&audio);
    let VadEvent::Paused { id, .. } = events[1] else {
        panic!("{events:?}");
    };
    assert!(vad.decide(id, false).is_empty());
    // The caller goes on after 0.7 s of silence in all: the same turn.
    let mut more = vec![0.0; 3_200];
    more.extend(tone(0.5, 0.3));
    assert!(vad.push(&more).is_empty());
    // A second pause is judged again; a late answer to the first changes nothing.
    let events = vad.push(&vec![0.0; 4_000]);
    let VadEvent::Paused { id: second, .. } = events[0] else {
        panic!("{events:?}");
    };
    assert!(vad.decide(id, true).is_empty());
    assert!(vad.decide(second, false).is_empty());
    let events = vad.push(&vec![0.0; 24_000]);
    let VadEvent::TurnEnded(turn, EndedBy::Longest) = &events[0] else {
        panic!("{events:?}");
    };
    // Both stretches of speech and the pause between them are one turn.
    assert!(turn.len() > 2 * 16_000, "{}", turn.len());
}

#[test]
fn a_judgement_that_never_comes_leaves_the_longest_silence_to_end_the_turn() {
    let mut vad = judged();
    let mut audio = vec![0.0; 8_000];
    audio.extend(tone(0.5, 0.3));
    audio.extend(vec![0.0; 4_000]);
    assert!(matches!(vad.push(&audio)[1], VadEvent::Paused { .. }));
    // A second of audio is held, then the pause is taken as not judged and the audio looked at.
    let events = vad.push(&vec![0.0; 32_000]);
    assert!(
        matches!(events.last(), Some(VadEvent::TurnEnded(..))),
        "{events:?}"
    );
}

#[test]
fn a_settled_turn_has_the_audio_it_ends_with() {
    let mut vad =
        StreamingVad::new(Duration::from_millis(600)).settling_after(Duration::from_millis(200));
    let mut audio = vec![0.0; 8_000];
    audio.extend(tone(0.7, 0.3));
    // A pause long enough to settle, not to end the turn; then more speech and the end.
    audio.extend(vec![0.0; 6_400]);
    audio.extend(tone(0.5, 0.3));
    audio.extend(vec![0.0; 16_000]);
    let events = feed(&mut vad, &audio, 480);
    let settled: Vec<&Vec<f32>> = events
        .iter()
        .filter_map(|e| match e {
            VadEvent::Settled(audio) => Some(audio),
            _ => None,
        })
        .collect();
    assert_eq!(settled.len(), 2, "{}", events.len());
    let Some(VadEvent::TurnEnded(turn, EndedBy::Silence)) = events.last() else {
        panic!("no end");
    };
    assert_eq!(settled[1], turn, "the last settled audio is the turn's");
    assert!(settled[0].len() < turn.len());
}
