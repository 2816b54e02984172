//! Small files that declare enormous audio: FLAC streams of constant subframes at 384 kHz with eight channels,
//! a few hundred kilobytes that would decode to gigabytes. Each is refused, or decoded with the server's memory
//! flat, and the server keeps serving.

use crate::common;

use common::cloning::clone;
use common::{Server, KEY_A};

/// Resident memory of a process in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .unwrap()
        * 1024
}

fn crc8(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |mut crc, &b| {
        crc ^= b;
        for _ in 0..8 {
            crc = if crc & 0x80 != 0 {
                (crc << 1) ^ 0x07
            } else {
                crc << 1
            };
        }
        crc
    })
}

fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |mut crc, &b| {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x8005
            } else {
                crc << 1
            };
        }
        crc
    })
}

/// The frame number as FLAC writes it (UTF-8-like, up to three bytes here).
fn coded_number(n: u32) -> Vec<u8> {
    match n {
        0..=0x7F => vec![n as u8],
        0x80..=0x7FF => vec![0xC0 | (n >> 6) as u8, 0x80 | (n & 0x3F) as u8],
        _ => vec![
            0xE0 | (n >> 12) as u8,
            0x80 | ((n >> 6) & 0x3F) as u8,
            0x80 | (n & 0x3F) as u8,
        ],
    }
}

/// A FLAC stream of `frames` frames of `block` samples per channel, every subframe a constant, at `rate` Hz
/// with `channels` channels of 16-bit samples. `declare` writes the total into STREAMINFO (else "unknown").
fn constant_flac(rate: u32, channels: u8, block: u16, frames: u32, declare: bool) -> Vec<u8> {
    let total = u64::from(block) * u64::from(frames);
    let mut out = b"fLaC".to_vec();
    out.extend_from_slice(&[0x80, 0, 0, 34]); // the last metadata block: STREAMINFO, 34 bytes
    out.extend_from_slice(&block.to_be_bytes());
    out.extend_from_slice(&block.to_be_bytes());
    out.extend_from_slice(&[0; 6]); // frame sizes unknown
    let declared = if declare { total } else { 0 };
    // 20 bits rate, 3 bits channels - 1, 5 bits bits-per-sample - 1, 36 bits total samples.
    let packed: u64 = (u64::from(rate) << 44)
        | (u64::from(channels - 1) << 41)
        | (15u64 << 36)
        | (declared & 0xF_FFFF_FFFF);
    out.extend_from_slice(&packed.to_be_bytes());
    out.extend_from_slice(&[0; 16]); // MD5 unknown
    for n in 0..frames {
        let mut frame = vec![0xFF, 0xF8];
        // Block size from the end of the header (16 bits); rate from STREAMINFO; independent channels; 16 bits.
        frame.push(0x70);
        frame.push(((channels - 1) << 4) | 0x08);
        frame.extend_from_slice(&coded_number(n));
        frame.extend_from_slice(&(block - 1).to_be_bytes());
        frame.push(crc8(&frame));
        for c in 0..channels {
            frame.push(0x00); // CONSTANT subframe
            frame.extend_from_slice(&(1000i16 * i16::from(c + 1)).to_be_bytes());
        }
        let crc = crc16(&frame);
        frame.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

/// The server still answers ready, with no actor restarted. A machine busy with the other tests may answer 503 for
/// a moment (the database's readiness probe has a deadline); every such answer is printed, and the last decides.
fn still_ready(server: &Server) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let ready = loop {
        let ready = common::get(&server.url("/readyz"), None);
        if ready.status == 200 || std::time::Instant::now() > deadline {
            break ready;
        }
        eprintln!(
            "readyz {}: {}",
            ready.status,
            String::from_utf8_lossy(&ready.body)
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let body = String::from_utf8_lossy(&ready.body);
    assert_eq!(ready.status, 200, "{body}");
    let state: serde_json::Value = serde_json::from_slice(&ready.body).unwrap();
    assert_eq!(state["actor_restarts"], 0, "{body}");
}

fn start() -> (tempfile::TempDir, Server) {
    let data = common::temp_dir();
    let server = Server::start(
        data.path(),
        &[("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000")],
    );
    (data, server)
}

#[test]
fn the_bomb_generator_writes_flac_the_decoder_reads() {
    let _alone = common::alone();
    let small = constant_flac(16_000, 2, 4096, 8, true);
    let decoded = sauti::audio::decode(&small, &Default::default()).expect("valid FLAC");
    assert_eq!(decoded.sample_rate, 16_000);
    assert_eq!(decoded.source.channels, 2);
    assert_eq!(decoded.samples.len(), 4096 * 8);
}

#[test]
fn a_flac_declaring_hours_of_eight_channels_at_384_khz_is_refused_before_decoding() {
    let _alone = common::alone();
    let (_data, server) = start();
    // 890 s of 7.1 at 384 kHz in about a quarter of a megabyte.
    let bomb = constant_flac(384_000, 8, 65_535, 5_216, true);
    assert!(bomb.len() < 400_000, "{} bytes", bomb.len());
    let before = rss(server.child.id());
    let reply = clone(
        &server,
        KEY_A,
        Some(("audio/flac", &bomb)),
        &[("name", "Bomu")],
    );
    let growth = rss(server.child.id()).saturating_sub(before);
    let problem = common::problem_body(&reply, 422);
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("too large to decode"), "{detail}");
    assert!(growth < 200 << 20, "RSS grew by {} MB", growth >> 20);
    still_ready(&server);
}

#[test]
fn a_flac_hiding_its_length_is_stopped_while_decoding_with_memory_flat() {
    let _alone = common::alone();
    let (_data, server) = start();
    let pid = server.child.id();
    let before = rss(pid);
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(before));
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let watcher = {
        let (peak, watching) = (peak.clone(), watching.clone());
        std::thread::spawn(move || {
            while watching.load(std::sync::atomic::Ordering::Relaxed) {
                peak.fetch_max(rss(pid), std::sync::atomic::Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    // No total in STREAMINFO: only decoding finds out how much there is.
    let hidden = constant_flac(384_000, 8, 65_535, 5_216, false);
    let reply = clone(
        &server,
        KEY_A,
        Some(("audio/flac", &hidden)),
        &[("name", "Bomu")],
    );
    // A rich stream within the caps: 14 minutes of 48 kHz stereo, decoded in full at 16 kHz.
    let within = constant_flac(48_000, 2, 48_000, 14 * 60, true);
    let accepted = clone(
        &server,
        KEY_A,
        Some(("audio/flac", &within)),
        &[("name", "Kimya")],
    );
    watching.store(false, std::sync::atomic::Ordering::Relaxed);
    watcher.join().unwrap();

    let problem = common::problem_body(&reply, 422);
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("too large to decode"), "{detail}");
    // Constant audio holds no speech: decoded whole, then refused by the analysis, not by a decoding cap.
    let problem = common::problem_body(&accepted, 422);
    let detail = problem["detail"].as_str().unwrap();
    assert!(!detail.contains("too l"), "{detail}");
    let growth = peak
        .load(std::sync::atomic::Ordering::Relaxed)
        .saturating_sub(before);
    eprintln!("peak RSS growth {} MB", growth >> 20);
    assert!(growth < 200 << 20, "RSS grew by {} MB", growth >> 20);
    still_ready(&server);
}
