use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use super::*;

fn batcher(max: usize, window_ms: u64) -> Arc<Batcher<(usize, u32), u32>> {
    led(max, window_ms, 1)
}

fn led(max: usize, window_ms: u64, leaders: usize) -> Arc<Batcher<(usize, u32), u32>> {
    Arc::new(Batcher::new(
        "test",
        Batching {
            max,
            window: Duration::from_millis(window_ms),
            leaders,
        },
    ))
}

/// Each input's output is its value doubled; a batch must hold one key only and at most `max` inputs.
fn double(max: usize) -> impl Fn(Vec<(usize, u32)>) -> Result<Vec<u32>, String> {
    move |inputs| {
        assert!(inputs.len() <= max, "{} inputs", inputs.len());
        assert!(inputs.iter().all(|(k, _)| *k == inputs[0].0), "{inputs:?}");
        thread::sleep(Duration::from_millis(20));
        Ok(inputs.into_iter().map(|(_, v)| v * 2).collect())
    }
}

fn callers(
    batcher: &Arc<Batcher<(usize, u32), u32>>,
    keys: impl Fn(u32) -> usize + Send + Sync + Copy + 'static,
    count: u32,
    max: usize,
) -> Vec<Result<u32, String>> {
    let start = Arc::new(Barrier::new(count as usize));
    let handles: Vec<_> = (0..count)
        .map(|value| {
            let (batcher, start) = (Arc::clone(batcher), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                batcher.run(keys(value), (keys(value), value), double(max))
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn a_lone_caller_runs_alone_at_once() {
    let batcher = batcher(8, 0);
    assert_eq!(batcher.run(0, (0, 21), double(8)), Ok(42));
    assert_eq!(batcher.counts(), (1, 1));
}

#[test]
fn concurrent_callers_share_runs_and_each_gets_its_own_output() {
    let batcher = batcher(4, 50);
    let outputs = callers(&batcher, |_| 0, 12, 4);
    assert_eq!(
        outputs,
        (0..12).map(|v| Ok(v * 2)).collect::<Vec<_>>(),
        "every caller gets its own output"
    );
    let (runs, inputs) = batcher.counts();
    assert_eq!(inputs, 12);
    assert!(
        (3..12).contains(&runs),
        "{runs} runs for 12 inputs of at most 4"
    );
}

#[test]
fn batches_run_side_by_side_up_to_the_leaders_and_no_leader_loses_its_input() {
    for _ in 0..5 {
        let batcher = led(3, 40, 2);
        let outputs = callers(&batcher, |v| (v % 2) as usize, 10, 3);
        assert_eq!(outputs, (0..10).map(|v| Ok(v * 2)).collect::<Vec<_>>());
        let (runs, inputs) = batcher.counts();
        assert!(inputs == 10 && runs < 10, "{runs} runs");
    }
}

#[test]
fn inputs_of_different_keys_never_share_a_run() {
    let batcher = batcher(8, 30);
    let outputs = callers(&batcher, |v| (v % 3) as usize, 9, 8);
    assert_eq!(outputs, (0..9).map(|v| Ok(v * 2)).collect::<Vec<_>>());
    assert!(batcher.counts().0 >= 3);
}

#[test]
fn a_failed_run_fails_its_callers_and_the_next_runs_go_on() {
    let batcher = batcher(4, 30);
    let start = Arc::new(Barrier::new(3));
    let handles: Vec<_> = (0..3u32)
        .map(|value| {
            let (batcher, start) = (Arc::clone(&batcher), Arc::clone(&start));
            thread::spawn(move || {
                start.wait();
                batcher.run(0, (0, value), |_| -> Result<Vec<u32>, String> {
                    panic!("the model broke")
                })
            })
        })
        .collect();
    for handle in handles {
        let outcome = handle
            .join()
            .expect("a panic in the run stays in the batcher");
        assert_eq!(outcome, Err("the test model failed on this batch".into()));
    }
    assert_eq!(batcher.run(0, (0, 5), double(4)), Ok(10));
    let short = batcher.run(0, (0, 5), |_| Ok(vec![]));
    assert!(short.unwrap_err().contains("0 outputs for 1 inputs"));
}
