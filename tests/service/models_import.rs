//! `sauti models import`: a model folder brought in without internet is checked file by file against the
//! catalog and installed whole, or refused with the file named and nothing installed.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{assert_one_line_error, sauti, sauti_with_runtime, stdout};
use sha2::{Digest, Sha256};

/// The Whisper fixture's files, as a catalog entry would list them.
const FILES: &[&str] = &[
    "config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "tokenizer.json",
    "encoder_model.onnx",
    "decoder_model.onnx",
    "decoder_with_past_model.onnx",
];

fn sha(path: &Path) -> String {
    Sha256::digest(std::fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A catalog with one entry, `whisper-tiny`, whose sha256 values are those of the fixture model.
fn write_catalog(dir: &Path) -> PathBuf {
    let model = common::fixture("whisper/model");
    let mut text = String::from(
        "[[model]]\nname = \"whisper-tiny\"\nkind = \"asr\"\ndescription = \"test recogniser\"\n\
         licence = \"MIT\"\ndir = \"whisper-tiny\"\n",
    );
    for file in FILES {
        text += &format!(
            "[[model.file]]\nurl = \"https://models.invalid/{file}\"\npath = \"{file}\"\nsha256 = \"{}\"\n",
            sha(&model.join(file))
        );
    }
    let path = dir.join("catalog.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// A copy of the fixture model under `dir/name`.
fn copy_model(dir: &Path, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for file in FILES {
        std::fs::copy(common::fixture("whisper/model").join(file), to.join(file)).unwrap();
    }
    to
}

fn installed_line(catalog: &str, models: &str) -> String {
    let list = sauti(&["models", "list", "--catalog", catalog, "--dir", models]);
    assert!(list.status.success());
    stdout(&list)
        .lines()
        .find(|l| l.starts_with("whisper-tiny "))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn import_installs_a_verified_folder_and_refuses_a_changed_or_incomplete_one() {
    let dir = common::temp_dir();
    let catalog = write_catalog(dir.path());
    let models = dir.path().join("models");
    let (catalog, models_dir) = (catalog.to_str().unwrap(), models.to_str().unwrap());
    let import = |path: &Path, extra: &[&str]| {
        let mut args = vec![
            "models",
            "import",
            path.to_str().unwrap(),
            "--catalog",
            catalog,
            "--dir",
            models_dir,
        ];
        args.extend_from_slice(extra);
        sauti(&args)
    };
    let nothing_installed = || {
        let leftovers: Vec<_> = std::fs::read_dir(&models)
            .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
        assert!(installed_line(catalog, models_dir).contains(" no "));
    };

    // One changed byte in one file: refused, naming the file and the catalog's hash.
    let changed = copy_model(&dir.path().join("usb"), "whisper-tiny");
    let mut bytes = std::fs::read(changed.join("decoder_model.onnx")).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(changed.join("decoder_model.onnx"), bytes).unwrap();
    let expected = sha(&common::fixture("whisper/model/decoder_model.onnx"));
    assert_one_line_error(&import(&changed, &[]), "decoder_model.onnx: sha256 is ");
    assert!(String::from_utf8_lossy(&import(&changed, &[]).stderr).contains(&expected));
    nothing_installed();

    // A missing file: refused, naming it.
    let partial = copy_model(&dir.path().join("partial"), "whisper-tiny");
    std::fs::remove_file(partial.join("tokenizer.json")).unwrap();
    assert_one_line_error(&import(&partial, &[]), "tokenizer.json: missing from");
    nothing_installed();

    // An archive is not unpacked; the message says what to do.
    let archive = dir.path().join("whisper-tiny.tar.gz");
    std::fs::write(&archive, b"not unpacked").unwrap();
    assert_one_line_error(&import(&archive, &["--name", "whisper-tiny"]), "unpack");
    // A folder named like no catalog entry needs --name.
    assert_one_line_error(
        &import(&common::fixture("whisper/model"), &[]),
        "--name (known: whisper-tiny)",
    );
    nothing_installed();

    // The fixture folder itself, named with --name: installed where `fetch` would put it.
    let good = import(
        &common::fixture("whisper/model"),
        &["--name", "whisper-tiny"],
    );
    assert!(
        good.status.success(),
        "{}",
        String::from_utf8_lossy(&good.stderr)
    );
    assert!(stdout(&good).starts_with("imported whisper-tiny into "));
    assert!(installed_line(catalog, models_dir).contains(" yes "));
    let target = models.join("whisper-tiny");
    for file in FILES {
        assert_eq!(
            std::fs::read(target.join(file)).unwrap(),
            std::fs::read(common::fixture("whisper/model").join(file)).unwrap(),
            "{file}"
        );
    }
    assert!(target.join(".sauti-install.json").is_file());
    assert!(!models.join(".import-whisper-tiny").exists());
    let again = import(
        &common::fixture("whisper/model"),
        &["--name", "whisper-tiny"],
    );
    assert!(stdout(&again).starts_with("already installed whisper-tiny"));

    // The imported model recognises speech.
    let clip = common::fixture("whisper/speech.wav");
    let heard = sauti_with_runtime(&[
        "stt",
        clip.to_str().unwrap(),
        "--model",
        target.to_str().unwrap(),
    ]);
    assert!(
        heard.status.success(),
        "{}",
        String::from_utf8_lossy(&heard.stderr)
    );
    assert!(!stdout(&heard).trim().is_empty());
}
