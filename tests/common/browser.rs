//! Scripts under tests/browser, run with Node.js and playwright-core driving Debian's Chromium (tools/test.sh
//! installs all three).

use std::path::Path;
use std::process::Command;

/// Run tests/browser/`script` with `args` in target/browser; panics with its output unless it succeeds and
/// prints "all checks passed".
pub fn run(script: &str, args: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let modules = root.join("target/browser/node_modules");
    assert!(
        modules.join("playwright-core").is_dir() && Path::new("/usr/bin/chromium").exists(),
        "the browser tests need Chromium and playwright-core: run tools/test.sh, which installs them"
    );
    let output = Command::new("node")
        .arg(root.join("tests/browser").join(script))
        .args(args)
        .env("NODE_PATH", &modules)
        .current_dir(root.join("target/browser"))
        .output()
        .expect("node runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{script}: {text}");
    assert!(text.contains("all checks passed"), "{script}: {text}");
}
