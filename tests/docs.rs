//! What the documentation shows is made from what was measured: the opening figures of
//! docs/benchmarks.md and its plot are scripts/plot-benchmarks' output from the committed
//! docs/benchmarks/*.json (bench-decode's data), not edited by hand.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn benchmark_tables_and_plot_are_made_from_the_measured_data() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new(root.join("scripts/plot-benchmarks"))
        .arg("--check")
        .output()
        .expect("running scripts/plot-benchmarks (python3)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read_dir(root.join("docs/benchmarks"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .count();
    assert!(data >= 2, "docs/benchmarks holds {data} measurements");
}
