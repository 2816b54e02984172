//! A full disk is a fault the service reports and recovers from: a job whose audio cannot be stored fails with a
//! reason after bounded tries and leaves no temporary file, `/readyz` turns not ready, new jobs get 507, the
//! service starts on a full disk, and all is well again once space is freed. The data directory is a small
//! tmpfs mounted by the test (it needs root, as on the CI machines; without it the test fails, never skips).

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{Server, KEY_A};
use serde_json::json;

/// A tmpfs of `megabytes` mounted on a fresh directory; unmounted when dropped.
struct SmallDisk {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl SmallDisk {
    fn mount(megabytes: u64) -> Self {
        let dir = common::temp_dir();
        let path = dir.path().to_path_buf();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(&path)
            .status()
            .expect("mount runs");
        assert!(status.success(), "mounting a tmpfs needs root: {status}");
        Self { _dir: dir, path }
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// A reference recording of the cloning fixtures.
const CLONE_REFERENCE: &str = "low.wav";

fn available(path: &Path) -> u64 {
    fs4::available_space(path).unwrap()
}

/// Fill the disk with `name` until only `leave` bytes are available (0: until it refuses).
fn fill(dir: &Path, name: &str, leave: u64) {
    let mut file = std::fs::File::create(dir.join(name)).unwrap();
    let block = vec![0x55u8; 64 * 1024];
    while available(dir) > leave {
        let room = (available(dir) - leave) as usize;
        if file.write_all(&block[..room.min(block.len())]).is_err() {
            break;
        }
    }
    let _ = file.sync_all();
}

fn create_job(server: &Server, text: &str, rate: f64) -> common::Reply {
    common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": text, "voice_settings": {"speaking_rate": rate}}),
    )
}

fn ready(server: &Server) -> common::Reply {
    common::get(&server.url("/readyz"), None)
}

#[test]
fn a_full_disk_fails_jobs_cleanly_turns_readiness_off_and_is_recovered_from() {
    let disk = SmallDisk::mount(24);
    let data = disk.path.join("data");
    let env = [
        ("SAUTI__STORAGE__MIN_FREE_BYTES", "4194304"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "100"),
        ("SAUTI__LIMITS__STATUS_PER_MINUTE", "1000"),
    ];
    let server = Server::start(&data, &env);
    assert_eq!(ready(&server).status, 200);

    // Room for the job to be accepted, not for its audio (minutes of speech, several megabytes).
    fill(&disk.path, "filler-1", 4_500_000);
    let text = "Karibu sana kwenye huduma yetu ya benki, tunafurahi kukuhudumia leo. ".repeat(22);
    let created = create_job(&server, &text, 0.5);
    assert_eq!(
        created.status,
        202,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let job = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(120));
    assert_eq!(job["status"], "failed", "{job}");
    assert!(
        job["error"].as_str().unwrap().contains("disk is full"),
        "{job}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(data.join("jobs"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");

    // Below the minimum: not ready, and new jobs are refused with the reason rather than queued.
    fill(&disk.path, "filler-2", 0);
    let not_ready = common::problem_body(&ready(&server), 503);
    assert!(
        not_ready["detail"]
            .as_str()
            .unwrap()
            .contains("disk is full"),
        "{not_ready}"
    );
    let refused = create_job(&server, "Habari ya asubuhi.", 1.0);
    let problem = common::problem_body(&refused, 507);
    assert!(
        problem["type"]
            .as_str()
            .unwrap()
            .ends_with("/insufficient_storage"),
        "{problem}"
    );
    assert!(refused.header("retry-after").is_some());
    let reference = common::cloning::reference(CLONE_REFERENCE);
    let cloned = common::cloning::clone(
        &server,
        KEY_A,
        Some(("audio/wav", &reference)),
        &[("name", "Sauti Yangu")],
    );
    common::problem_body(&cloned, 507);
    // Reading still works.
    assert_eq!(
        common::get(&server.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A)).status,
        200
    );

    // A restart on the full disk starts, serves reads and says why it is not ready.
    drop(server);
    let server = Server::start(&data, &env);
    assert_eq!(ready(&server).status, 503);
    assert_eq!(
        common::get(&server.url(&format!("/v1/tts/jobs/{id}")), Some(KEY_A)).status,
        200
    );

    // Space comes back: ready again, and jobs run to the end.
    std::fs::remove_file(disk.path.join("filler-1")).unwrap();
    std::fs::remove_file(disk.path.join("filler-2")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while ready(&server).status != 200 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(ready(&server).status, 200);
    let created = create_job(&server, "Habari ya asubuhi, karibu tena.", 1.0);
    assert_eq!(created.status, 202);
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let job = common::wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(job["status"], "succeeded", "{job}");
}
