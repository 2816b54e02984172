//! Any frames a client sends on a realtime socket, through the ConvAI protocol (in any input format) and the
//! Twilio protocol: each frame is taken as messages for the session, a file to decode, the end of a call, or a
//! refusal with a close code a client can act on (1003, 1007, 1008) — never a panic. The caller's audio is
//! finite and in range, a typed turn is within its length, keys pressed are keys, a call's variables are
//! bounded and its sids plain, and encoding any event back for
//! the client works.
#![no_main]

mod malloc_limit;

use axum::extract::ws::Message;
use libfuzzer_sys::fuzz_target;
use sauti::actors::realtime::{Inbound, Outbound};
use sauti::audio::output::OutputFormat;
use sauti::http::native::realtime::wire::{ConvAi, InputFormat, Taken, Twilio, Wire, INPUT_FORMATS};

const MAX_TEXT: usize = 200;

fn check(taken: Taken) {
    match taken {
        Taken::Messages(messages) => {
            for message in messages {
                match message {
                    Inbound::Audio(samples) => {
                        assert!(samples.iter().all(|s| s.is_finite() && s.abs() <= 1.5));
                    }
                    Inbound::UserMessage(text) => {
                        assert!(!text.trim().is_empty() && text.chars().count() <= MAX_TEXT);
                    }
                    Inbound::Keys(keys) => {
                        let keys_only = keys.chars().all(|c| c.is_ascii_digit() || c == '*' || c == '#');
                        assert!(!keys.is_empty() && keys.chars().count() <= 32 && keys_only, "{keys:?}");
                    }
                    Inbound::Call(call) => {
                        assert!(call.variables.len() <= 32);
                        for (name, value) in &call.variables {
                            assert!(name.len() <= 64 && value.chars().count() <= 256, "{name}");
                        }
                        for sid in [&call.call_sid, &call.account_sid].into_iter().flatten() {
                            assert!(sauti::telephony::plain_id(sid), "{sid:?}");
                        }
                    }
                    Inbound::Alive => {}
                }
            }
        }
        Taken::File(_) => {}
        Taken::Finished => {}
        Taken::Refused(code, reason) => {
            assert!(matches!(code, 1003 | 1007 | 1008 | 1009), "{code} {reason}");
            assert!(!reason.is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let formats: Vec<&str> = INPUT_FORMATS.split(", ").collect();
    let mut wire: Box<dyn Wire> = match selector as usize % (formats.len() + 1) {
        0 => Box::new(Twilio::new()),
        i => {
            let format = InputFormat::named(formats[i - 1]).expect("a listed format");
            Box::new(ConvAi::new(format, MAX_TEXT))
        }
    };
    // Frames are separated by NUL bytes; valid UTF-8 goes as text, anything else as binary.
    for frame in rest.split(|&b| b == 0) {
        let message = match std::str::from_utf8(frame) {
            Ok(text) => Message::Text(text.to_string().into()),
            Err(_) => Message::Binary(frame.to_vec().into()),
        };
        check(wire.inbound(message));
    }
    let format = OutputFormat::named("pcm_16000").expect("a format");
    for event in [
        Outbound::Started { conversation_id: "conv_1".into(), format },
        Outbound::UserTranscript(String::from_utf8_lossy(rest).into_owned()),
        Outbound::Tentative(String::from_utf8_lossy(rest).into_owned()),
        Outbound::Audio { event_id: 1, audio: rest.to_vec() },
        Outbound::Interruption { event_id: 1 },
        Outbound::Refused { detail: "over".into(), retry_after_seconds: Some(1) },
        Outbound::EndCall { reason: "silence".into() },
        Outbound::Transfer { to: "+255112".into(), summary: Default::default() },
    ] {
        let _ = wire.outbound(event);
    }
});
