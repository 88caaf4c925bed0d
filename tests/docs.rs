//! What the documentation shows is made from what was measured: the opening figures of
//! docs/benchmarks.md and its plot are scripts/plot-benchmarks' output from the committed
//! docs/benchmarks/*.json (bench-decode's data), not edited by hand; and the README lists the
//! settings `src/config.rs` lists, every one the code reads.

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

/// The README's two tables of settings (for users, and for tests and development) are
/// `src/config.rs`'s, the one list of them, row for row.
#[test]
fn the_readme_lists_the_settings_of_config_rs() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = std::fs::read_to_string(root.join("src/config.rs")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let rows = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.strip_prefix("//! ").unwrap_or(l))
            .filter(|l| l.starts_with("| `DAEDALUS"))
            .map(str::to_string)
            .collect()
    };
    let doc: Vec<&str> = config.lines().filter(|l| l.starts_with("//!")).collect();
    let documented = rows(&doc.join("\n"));
    assert!(documented.len() >= 6, "src/config.rs lists {documented:?}");
    assert_eq!(
        rows(&readme),
        documented,
        "README.md's settings differ from src/config.rs's"
    );
    // Every variable the code reads is in the list.
    let mut read = std::collections::BTreeSet::new();
    let mut dirs = vec![root.join("src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().is_dir() {
                dirs.push(entry.path());
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            for part in text.split("\"DAEDALUS").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                read.insert(format!("DAEDALUS{name}"));
            }
        }
    }
    for name in read {
        assert!(
            documented
                .iter()
                .any(|row| row.starts_with(&format!("| `{name}`"))),
            "{name} is read but not in src/config.rs's tables"
        );
    }
}
