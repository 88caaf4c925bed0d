//! Lower layers never reach up: a file of `src/` names (`crate::...`) only modules of its own
//! layer or of one below, so the library reads from the bottom up and a change to a decoder's
//! provider cannot be needed by the recorder or the device. The layers, lowest first:
//! settings and counters; logging, the paths the decoders took, the kernels' references and
//! their job words; FFmpeg's DSP table, the device, the decisions kept; registered memory; the
//! per-call recorder; the C ABI; the providers of the decoders and the report of what they
//! ran (the stats line). And no module names one that names it back, however many steps
//! round: no import circle, between a parent module's file and its children's either.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["config", "spans", "testing", "stats"],
    &["log", "paths", "kernels"],
    &["vp9dsp", "gpu", "decisions"],
    &["regions"],
    &["batch"],
    &["ffi"],
    &["vp9", "av1", "report"],
];

/// The layer of a module as `src/` names it; the logging macros are `log`'s.
fn layer(module: &str) -> Option<usize> {
    let module = match module {
        "error" | "warn" | "info" | "debug" => "log",
        m => m,
    };
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The module a file belongs to (its first component under `src/`), and its path of modules
/// (`batch/call.rs`: `batch`, `call`) for `super::` to climb.
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
    (path[0].clone(), path)
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

/// A module named by a path that starts at the crate's root.
fn root_name(path: &str) -> String {
    ident(path)
}

/// The modules a file at `path` names outside its own, comments left out: `crate::a::b` gives
/// `a`, `crate::{a, b::{c, d}}` gives `a` and `b`, a `super::`
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
        "use crate::{gpu::{self, Gpu}, stats::add};\n// crate::vp9 in a comment\n\
         let x = crate::batch::flush(); crate::report::stats_line();\n\
         let u = \"a://b\"; super::super::av1::f(); super::Op::new(); debug!(\"x\");",
        &path,
    );
    let want: BTreeSet<String> = ["gpu", "stats", "batch", "report", "av1", "log"]
        .map(String::from)
        .into();
    assert_eq!(names, want);
}

/// The paths a path or `use` tree spells from its start: `a::b`, `a::{b, c::{d, self}}`.
fn tree_paths(tree: &str) -> Vec<Vec<String>> {
    let (mut prefix, mut rest) = (Vec::new(), tree);
    loop {
        rest = rest.trim_start();
        if let Some(group) = rest.strip_prefix('{') {
            // The group's items, split at its own commas, up to its closing brace.
            let (mut items, mut depth, mut start) = (Vec::new(), 0, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        items.push(&group[start..i]);
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&group[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return items
                .into_iter()
                .flat_map(tree_paths)
                .map(|p| prefix.iter().cloned().chain(p).collect())
                .collect();
        }
        let word = ident(rest);
        if word.is_empty() {
            return vec![prefix];
        }
        rest = &rest[word.len()..];
        prefix.push(word);
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![prefix],
        }
    }
}

/// `code` with the contents of its string literals blanked (a path in a message or a doc
/// attribute names nothing).
fn without_strings(code: &str) -> String {
    let (mut in_string, mut escaped) = (false, false);
    code.chars()
        .map(|c| match c {
            _ if escaped => {
                escaped = false;
                ' '
            }
            '\\' if in_string => {
                escaped = true;
                ' '
            }
            '"' => {
                in_string = !in_string;
                c
            }
            _ if in_string && c != '\n' => ' ',
            _ => c,
        })
        .collect()
}

/// The modules (paths of `src/`'s files, `a::b` for `a/b.rs` or `a/b/mod.rs`) that `source`, the
/// file of module `path`, names outside its tests: through `crate::`, `super::`, `self::`, a
/// child's name, and the items of their `{...}` groups; each the longest module of `modules`
/// its path starts with.
fn modules_named(source: &str, path: &[String], modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = source.lines().map(code_of).collect::<Vec<_>>().join("\n");
    let code = without_strings(code.split("#[cfg(test)]").next().unwrap());
    let code = code.as_str();
    let longest = |parts: &[String]| {
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|m| modules.contains(m))
    };
    let mut names = BTreeSet::new();
    let mut name = |base: Vec<String>, tree: &str| {
        for spelled in tree_paths(tree) {
            let parts: Vec<String> = base.iter().cloned().chain(spelled).collect();
            if let Some(m) = longest(&parts) {
                names.insert(m);
            }
        }
    };
    let starts = |at: usize| {
        !code[..at].ends_with("::")
            && !code[..at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    };
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let word = ident(rest);
        if word.is_empty() || !starts(at) || !rest[word.len()..].starts_with("::") {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let mut tail = &rest[word.len() + 2..];
        match word.as_str() {
            "crate" => name(Vec::new(), tail),
            "self" => name(path.to_vec(), tail),
            "super" => {
                let mut base = path[..path.len() - 1].to_vec();
                while let Some(t) = tail.strip_prefix("super::") {
                    base.pop();
                    tail = t;
                }
                name(base, tail)
            }
            child if modules.contains(&[path.join("::"), child.to_string()].join("::")) => {
                name(path.to_vec(), rest)
            }
            _ => {}
        }
        at += word.len();
    }
    names.remove(&path.join("::"));
    names
}

/// No module names one that names it back, however many steps round: the library reads one
/// way, a parent module's file included (shared items live in a file of their own, not in the
/// parent its children name).
#[test]
fn no_import_circle() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let module_path = |file: &Path| -> Vec<String> {
        let (_, path) = module_of(&src, file);
        if path == ["lib"] {
            Vec::new()
        } else {
            path
        }
    };
    let modules: BTreeSet<String> = files.iter().map(|f| module_path(f).join("::")).collect();
    let edges: BTreeMap<String, BTreeSet<String>> = files
        .iter()
        .map(|f| {
            let path = module_path(f);
            let source = std::fs::read_to_string(f).unwrap();
            (path.join("::"), modules_named(&source, &path, &modules))
        })
        .collect();
    // A circle shows as a module met again on the path of a depth-first walk.
    fn walk(
        m: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        on_path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
        circles: &mut Vec<String>,
    ) {
        if let Some(at) = on_path.iter().position(|p| p == m) {
            circles.push(format!("{} -> {m}", on_path[at..].join(" -> ")));
            return;
        }
        if !done.insert(m.to_string()) {
            return;
        }
        on_path.push(m.to_string());
        for next in edges.get(m).into_iter().flatten() {
            walk(next, edges, on_path, done, circles);
        }
        on_path.pop();
    }
    let (mut done, mut circles) = (BTreeSet::new(), Vec::new());
    for m in edges.keys() {
        walk(m, &edges, &mut Vec::new(), &mut done, &mut circles);
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn modules_named_reads_paths_groups_supers_and_children() {
    let modules: BTreeSet<String> = ["", "a", "a::b", "a::c", "a::c::d", "e", "e::f"]
        .map(String::from)
        .into();
    let path = ["a".to_string(), "c".to_string()];
    let names = modules_named(
        "use super::b::Thing;\nuse crate::{e::{f::G, self}, a::b};\n// crate::z in a comment\n\
         d::run(); self::d::x(); let s = x::y; super::super::e::h();\n\
         #[cfg(test)]\nmod tests { use crate::e::f; }",
        &path,
        &modules,
    );
    let want: BTreeSet<String> = ["a::b", "e::f", "e", "a::c::d"].map(String::from).into();
    assert_eq!(names, want);
}
