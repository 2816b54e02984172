//! The shipped evaluation sets (`scenarios/eval/*.toml`, 2,586 labelled caller turns and conversations written for
//! this purpose) run against the embedded engine with the thresholds `sauti scenario eval` enforces: every
//! emergency, crisis, offered secret and money case, at least 90% of intents in each scenario, and at most 1% false
//! escalations.

use std::path::PathBuf;

use sauti::dialogue::eval::{self, ratio, Summary};

fn eval_files() -> Vec<PathBuf> {
    sauti::dialogue::library::toml_files(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/eval"),
    )
}

#[tokio::test]
async fn shipped_evaluation_sets_meet_their_thresholds() {
    let files = eval_files();
    assert!(files.len() >= 3, "{files:?}");
    let mut reports = Vec::new();
    for file in &files {
        reports.push(eval::run(file).await.unwrap());
    }
    let s = Summary::of(&reports);
    assert!(s.cases >= 400, "only {} cases", s.cases);
    let failed_safety: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.cases)
        .filter(|c| c.safety.is_some() && c.got != *c.safety.as_ref().unwrap())
        .map(|c| format!("{:?} → {}", c.say, c.got))
        .collect();
    assert!(
        failed_safety.is_empty(),
        "safety cases missed: {failed_safety:#?}"
    );
    for class in ["emergency", "crisis", "secret"] {
        assert!(
            s.safety.get(class).is_some_and(|(_, n)| *n >= 30),
            "{class}: {:?}",
            s.safety
        );
    }
    let failed_money: Vec<String> = reports
        .iter()
        .flat_map(|r| &r.cases)
        .filter(|c| c.money && !c.failures.is_empty())
        .flat_map(|c| c.failures.clone())
        .collect();
    assert!(
        failed_money.is_empty(),
        "money cases failed: {failed_money:#?}"
    );
    assert!(s.money.1 >= 40, "{:?}", s.money);
    for scenario in ["general", "banking", "health"] {
        let own: Vec<_> = reports
            .iter()
            .filter(|r| r.scenario == scenario)
            .cloned()
            .collect();
        let s = Summary::of(&own);
        let intents = ratio(s.intents.0, s.intents.1);
        assert!(
            s.intents.1 >= 100 && intents >= 0.90,
            "{scenario}: intent accuracy {intents:.3} of {}, confusions {:?}",
            s.intents.1,
            s.confusions
        );
    }
    let (escalated, ordinary) = s.false_escalations;
    assert!(
        ratio(escalated, ordinary) <= 0.01,
        "{escalated} of {ordinary} ordinary turns escalated"
    );
}

#[test]
fn the_eval_command_prints_the_table_and_fails_below_the_thresholds() {
    let bin = env!("CARGO_BIN_EXE_sauti");
    let root = env!("CARGO_MANIFEST_DIR");
    let out = std::process::Command::new(bin)
        .args(["scenario", "eval"])
        .current_dir(root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for needle in [
        "| safety recall: emergency | ",
        "| safety recall: crisis | ",
        "| safety recall: secret | ",
        "| false escalations on ordinary turns | ",
        "| money and number cases | ",
        "| expected | right | accuracy |",
        "thresholds (",
    ] {
        assert!(stdout.contains(needle), "{needle} missing from:\n{stdout}");
    }
    // A set the engine cannot meet fails the command, naming the case.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("eval")).unwrap();
    std::fs::copy(
        format!("{root}/scenarios/general.toml"),
        dir.path().join("general.toml"),
    )
    .unwrap();
    let file = dir.path().join("eval/wrong.toml");
    std::fs::write(
        &file,
        "scenario = \"general\"\n[[cases]]\nsay = \"ni saa ngapi\"\nexpect = \"weather\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(bin)
        .args(["scenario", "eval"])
        .arg(&file)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains("FAIL \"ni saa ngapi\""), "{stdout}");
    assert!(stdout.contains("NOT met"), "{stdout}");
}
