//! Lower layers never reach up: a file of `src/` names (`crate::...`) only modules of its own
//! layer or of one below, so the library reads from the bottom up and a change to a decoder's
//! provider cannot be needed by the recorder or the device. The layers, lowest first:
//! settings and counters; logging, the placement decided, the kernels' references and their
//! job words; FFmpeg's DSP table, the device; registered memory; the per-call recorder; the C
//! ABI and the calibration; the providers of the decoders and the stats line that reports them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["config", "spans", "testing", "stats"],
    &["log", "placement", "kernels", "levels", "overlap"],
    &["vp9dsp", "gpu"],
    &["regions"],
    &["batch"],
    &["ffi", "calibrate"],
    &["vp9", "av1", "stats::line"],
];

/// The layer of a module as `src/` names it (`stats::line` apart from the counters); the
/// logging macros are `log`'s.
fn layer(module: &str) -> Option<usize> {
    let module = match module {
        "error" | "warn" | "info" | "debug" => "log",
        m => m,
    };
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The module a file belongs to: its first component under `src/`, or `stats::line`.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file
        .strip_prefix(src)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/");
    if rel == "stats/line.rs" {
        return "stats::line".into();
    }
    let first = rel.split('/').next().unwrap();
    first.trim_end_matches(".rs").to_string()
}

/// The modules a source names after `crate::`, comments left out: `crate::a::b` gives `a`
/// (`stats::line` for the line), and `crate::{a, b::{c, d}}` gives `a` and `b`.
fn named_modules(source: &str) -> BTreeSet<String> {
    let code: String = source
        .lines()
        .map(|l| l.find("//").map_or(l, |at| &l[..at]))
        .collect::<Vec<_>>()
        .join("\n");
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group, up to its closing brace.
            let (mut depth, mut item_start) = (0, true);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        names.insert(ident(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let first = ident(rest);
            let line_module = rest.starts_with("stats::line");
            names.insert(if line_module {
                "stats::line".into()
            } else {
                first
            });
        }
    }
    names
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_names_one_of_a_higher_layer() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut upward = Vec::new();
    for file in &files {
        let module = module_of(&src, file);
        if module == "lib" {
            continue;
        }
        let own = layer(&module).unwrap_or_else(|| panic!("{module} is in no layer: add it"));
        let source = std::fs::read_to_string(file).unwrap();
        for named in named_modules(&source) {
            let Some(theirs) = layer(&named) else {
                panic!(
                    "{} names crate::{named}, which is in no layer",
                    file.display()
                );
            };
            if theirs > own {
                upward.push(format!(
                    "{} ({module}, layer {own}) names crate::{named} (layer {theirs})",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "lower layers reach up:\n{}",
        upward.join("\n")
    );
}

#[test]
fn named_modules_reads_paths_and_groups() {
    let names = named_modules(
        "use crate::{gpu::{self, Gpu}, stats};\n// crate::vp9 in a comment\n\
         let x = crate::batch::flush(); crate::stats::line::print();",
    );
    let want: BTreeSet<String> = ["gpu", "stats", "batch", "stats::line"]
        .map(String::from)
        .into();
    assert_eq!(names, want);
}
