//! `sauti models list|fetch` against a local HTTP server serving fixture files: a verified atomic install, a
//! corrupted file rejected, and a connection cut mid-file resumed with a Range request.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// Serves `files` (path → bytes) with Range support. Requests for a path in `cut_once` get half the body and a
/// closed connection the first time. Every request line and Range header is recorded.
struct FileServer {
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl FileServer {
    fn start(files: Vec<(&'static str, Vec<u8>)>, cut_once: &'static [&'static str]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&log);
        std::thread::spawn(move || {
            let mut cut: Vec<&str> = cut_once.to_vec();
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    continue;
                }
                let path = first.split(' ').nth(1).unwrap_or("/").to_string();
                let mut range_from = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(value) = line.to_ascii_lowercase().strip_prefix("range: bytes=") {
                        range_from = value.trim().trim_end_matches('-').parse::<usize>().ok();
                    }
                }
                seen.lock()
                    .unwrap()
                    .push(format!("{path} range={range_from:?}"));
                let Some((_, body)) = files.iter().find(|(p, _)| path == format!("/{p}")) else {
                    let _ = stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    );
                    continue;
                };
                let from = range_from.unwrap_or(0).min(body.len());
                let rest = &body[from..];
                let head = if range_from.is_some() {
                    format!(
                        "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {from}-{}/{}\r\nconnection: close\r\n\r\n",
                        rest.len(),
                        body.len() - 1,
                        body.len()
                    )
                } else {
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        rest.len()
                    )
                };
                let _ = stream.write_all(head.as_bytes());
                if let Some(i) = cut.iter().position(|p| path == format!("/{p}")) {
                    cut.remove(i);
                    let _ = stream.write_all(&rest[..rest.len() / 2]);
                    let _ = stream.flush();
                    let _ = stream.shutdown(std::net::Shutdown::Both);
                    continue;
                }
                let _ = stream.write_all(rest);
            }
        });
        Self { base, log }
    }
}

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 13) as u8 ^ seed)
        .collect()
}

fn write_catalog(
    dir: &Path,
    base: &str,
    entries: &[(&str, &[(&str, &str)])],
) -> std::path::PathBuf {
    let mut text = String::new();
    for (name, files) in entries {
        text += &format!(
            "[[model]]\nname = \"{name}\"\nkind = \"tts\"\ndescription = \"test model\"\nlicence = \"CC-BY-4.0\"\ndir = \"{name}\"\n"
        );
        for (path, sha256) in *files {
            text += &format!("[[model.file]]\nurl = \"{base}/{path}\"\npath = \"{path}\"\nsha256 = \"{sha256}\"\n");
        }
    }
    let path = dir.join("catalog.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn sauti(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn fetch_verifies_resumes_and_installs_atomically() {
    let graph = bytes(300_000, 1);
    let config = bytes(2_000, 2);
    let good = bytes(50_000, 3);
    let mut corrupted = good.clone();
    corrupted[25_000] ^= 0xff;
    let server = FileServer::start(
        vec![
            ("voice/model.onnx", graph.clone()),
            ("voice/model.onnx.json", config.clone()),
            ("bad/weights.bin", corrupted),
        ],
        &["voice/model.onnx"],
    );
    let dir = common::temp_dir();
    let models = dir.path().join("models");
    let catalog = write_catalog(
        dir.path(),
        &server.base,
        &[
            (
                "voice",
                &[
                    ("voice/model.onnx", &sha(&graph)),
                    ("voice/model.onnx.json", &sha(&config)),
                ],
            ),
            ("bad", &[("bad/weights.bin", &sha(&good))]),
        ],
    );
    let (catalog, models_dir) = (catalog.to_str().unwrap(), models.to_str().unwrap());

    let list = sauti(&["models", "list", "--catalog", catalog, "--dir", models_dir]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("voice ") && l.contains(" no ")),
        "{text}"
    );

    // The first transfer of the graph is cut halfway; the fetch resumes it with a Range request.
    let fetched = sauti(&[
        "models",
        "fetch",
        "voice",
        "--catalog",
        catalog,
        "--dir",
        models_dir,
    ]);
    let out = String::from_utf8_lossy(&fetched.stdout);
    assert!(
        fetched.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    assert!(out.contains(&sha(&graph)), "{out}");
    assert_eq!(
        std::fs::read(models.join("voice/voice/model.onnx")).unwrap(),
        graph
    );
    assert_eq!(
        std::fs::read(models.join("voice/voice/model.onnx.json")).unwrap(),
        config
    );
    assert!(models.join("voice/.sauti-install.json").is_file());
    assert!(
        !models.join(".fetch-voice").exists(),
        "no staging folder left"
    );
    let log = server.log.lock().unwrap().clone();
    let resumed = format!("/voice/model.onnx range=Some({})", graph.len() / 2);
    assert!(log.contains(&resumed), "{log:?}");

    let list = sauti(&["models", "list", "--catalog", catalog, "--dir", models_dir]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("voice ") && l.contains(" yes ")),
        "{text}"
    );

    // A file whose bytes do not match the catalog's sha256 is rejected and nothing is installed.
    let bad = sauti(&[
        "models",
        "fetch",
        "bad",
        "--catalog",
        catalog,
        "--dir",
        models_dir,
    ]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(err.contains("sha256") && err.contains(&sha(&good)), "{err}");
    assert!(
        !models.join("bad").exists(),
        "a rejected model is not installed"
    );
    assert!(
        !models.join(".fetch-bad/bad/weights.bin.part").exists(),
        "the bad download is deleted"
    );

    let unknown = sauti(&[
        "models",
        "fetch",
        "nothing",
        "--catalog",
        catalog,
        "--dir",
        models_dir,
    ]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("known: voice, bad"));
}

/// A zip archive (as a Python wheel is) holding `members`.
fn wheel(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in members {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
    out.into_inner()
}

#[test]
fn a_model_inside_a_wheel_is_fetched_or_imported_from_it_and_checked() {
    let graph = bytes(120_000, 7);
    let package = wheel(&[
        ("vad_pkg/__init__.py", b""),
        ("vad_pkg/data/vad.onnx", &graph),
        ("vad_pkg-1.0.dist-info/METADATA", b"Name: vad-pkg\n"),
    ]);
    let server = FileServer::start(
        vec![
            ("vad_pkg-1.0-py3-none-any.whl", package.clone()),
            (
                "changed-1.0-py3-none-any.whl",
                wheel(&[("vad_pkg/data/vad.onnx", &graph[..1000])]),
            ),
        ],
        &[],
    );
    let dir = common::temp_dir();
    let entry = |name: &str, wheel: &str, archive_sha: &str| {
        format!(
            "[[model]]\nname = \"{name}\"\nkind = \"turns\"\ndescription = \"d\"\nlicence = \"MIT\"\ndir = \"{name}\"\n\
             [[model.file]]\nurl = \"{}/{wheel}\"\narchive_sha256 = \"{archive_sha}\"\nmember = \"vad_pkg/data/vad.onnx\"\n\
             path = \"vad.onnx\"\nsize = {}\nsha256 = \"{}\"\n",
            server.base,
            graph.len(),
            sha(&graph)
        )
    };
    let catalog = dir.path().join("catalog.toml");
    std::fs::write(
        &catalog,
        entry("vad", "vad_pkg-1.0-py3-none-any.whl", &sha(&package))
            + &entry("changed", "changed-1.0-py3-none-any.whl", &sha(&package)),
    )
    .unwrap();
    let (catalog, models) = (catalog.to_str().unwrap(), dir.path().join("models"));
    let models = models.to_str().unwrap();

    // Fetched: the wheel is downloaded and checked, the member taken out, checked and installed alone.
    let fetched = sauti(&[
        "models",
        "fetch",
        "vad",
        "--catalog",
        catalog,
        "--dir",
        models,
    ]);
    assert!(
        fetched.status.success(),
        "{}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    let installed = Path::new(models).join("vad");
    assert_eq!(std::fs::read(installed.join("vad.onnx")).unwrap(), graph);
    let names: Vec<String> = std::fs::read_dir(&installed)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    assert_eq!(names, ["vad.onnx"], "nothing else of the wheel is kept");

    // A wheel that is not the published one is refused before anything is taken out of it.
    let refused = sauti(&[
        "models",
        "fetch",
        "changed",
        "--catalog",
        catalog,
        "--dir",
        models,
    ]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("sha256"));
    assert!(!Path::new(models).join("changed").exists());

    // Imported from the wheel file itself, without a network: the same file, checked the same way.
    let file = dir.path().join("vad_pkg-1.0-py3-none-any.whl");
    std::fs::write(&file, &package).unwrap();
    let other = dir.path().join("other");
    let imported = sauti(&[
        "models",
        "import",
        file.to_str().unwrap(),
        "--name",
        "vad",
        "--catalog",
        catalog,
        "--dir",
        other.to_str().unwrap(),
    ]);
    assert!(
        imported.status.success(),
        "{}",
        String::from_utf8_lossy(&imported.stderr)
    );
    assert_eq!(std::fs::read(other.join("vad/vad.onnx")).unwrap(), graph);
    // A wheel without the file names what is missing.
    let empty = dir.path().join("empty.whl");
    std::fs::write(&empty, wheel(&[("x/y.py", b"")])).unwrap();
    let missing = sauti(&[
        "models",
        "import",
        empty.to_str().unwrap(),
        "--name",
        "vad",
        "--catalog",
        catalog,
        "--dir",
        dir.path().join("third").to_str().unwrap(),
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("holds no vad.onnx"));
}
