//! Lower layers never reach up: a file of `src/` names (`crate::...`) only modules of its own
//! layer or of one below, so the library reads from the bottom up and a change to a decoder's
//! provider cannot be needed by the recorder or the device. The layers, lowest first:
//! settings and counters; logging, the paths the decoders took, the kernels' references and
//! their job words; FFmpeg's DSP table, the device, the decisions kept; registered memory; the
//! per-call recorder; the C ABI; the providers of the decoders and the stats line that
//! reports them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["config", "spans", "testing", "stats"],
    &["log", "paths", "kernels", "levels", "overlap"],
    &["vp9dsp", "gpu", "decisions"],
    &["regions"],
    &["batch"],
    &["ffi"],
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

/// The module a file belongs to (its first component under `src/`, or `stats::line`), and its
/// path of modules (`batch/call.rs`: `batch`, `call`) for `super::` to climb.
fn module_of(src: &Path, file: &Path) -> (String, Vec<String>) {
    let rel = file
        .strip_prefix(src)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/");
    let mut path: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if path.last().is_some_and(|p| p == "mod") {
        path.pop();
    }
    let module = if rel == "stats/line.rs" {
        "stats::line".to_string()
    } else {
        path[0].clone()
    };
    (module, path)
}

/// The line without its `//` comment (a `//` inside a string literal stays).
fn code_of(line: &str) -> &str {
    let (mut in_string, mut escaped) = (false, false);
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// A module named by a path that starts at the crate's root: `stats::line` apart.
fn root_name(path: &str) -> String {
    if path.starts_with("stats::line") {
        "stats::line".into()
    } else {
        ident(path)
    }
}

/// The modules a file at `path` names outside its own, comments left out: `crate::a::b` gives
/// `a` (`stats::line` for the line), `crate::{a, b::{c, d}}` gives `a` and `b`, a `super::`
/// chain that climbs to the root names what follows it, and the logging macros (`warn!`, ...)
/// name `log`.
fn named_modules(source: &str, path: &[String]) -> BTreeSet<String> {
    let code: String = source.lines().map(code_of).collect::<Vec<_>>().join("\n");
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
                        names.insert(root_name(&group[i..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(root_name(rest));
        }
    }
    let starts_path = |at: usize| {
        !code[..at].ends_with("::")
            && !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    };
    for (at, _) in code.match_indices("super::") {
        if !starts_path(at) {
            continue;
        }
        let mut rest = &code[at..];
        let mut climbs = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            climbs += 1;
        }
        // (`use super::*` in a file's own `mod tests` names the file's module.)
        let name = root_name(rest);
        if climbs >= path.len() && !name.is_empty() {
            names.insert(name);
        }
    }
    for mac in ["error!", "warn!", "info!", "debug!"] {
        if code.match_indices(mac).any(|(at, _)| starts_path(at)) {
            names.insert("log".into());
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
        let (module, path) = module_of(&src, file);
        if module == "lib" {
            continue;
        }
        let own = layer(&module).unwrap_or_else(|| panic!("{module} is in no layer: add it"));
        let source = std::fs::read_to_string(file).unwrap();
        for named in named_modules(&source, &path) {
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
fn named_modules_reads_paths_groups_supers_and_macros() {
    let path = ["batch".to_string(), "call".to_string()];
    let names = named_modules(
        "use crate::{gpu::{self, Gpu}, stats::line::print};\n// crate::vp9 in a comment\n\
         let x = crate::batch::flush(); crate::stats::line::print();\n\
         let u = \"a://b\"; super::super::av1::f(); super::Op::new(); debug!(\"x\");",
        &path,
    );
    let want: BTreeSet<String> = ["gpu", "stats::line", "batch", "av1", "log"]
        .map(String::from)
        .into();
    assert_eq!(names, want);
}
