//! Build steps:
//! 1. every `shaders/*.comp` -> SPIR-V (Vulkan 1.1) with glslangValidator, embedded in the
//!    library through `$OUT_DIR/shaders.rs`, and again for each variant it names (a line
//!    `// variant: NAME DEFINE...`); a shader that does not compile fails the build;
//! 2. the C header from `src/ffi/dsp.rs`, `src/ffi.rs` and the providers' lookups
//!    (`src/vp9/lookup.rs`, `src/av1/lookup.rs`) with cbindgen into
//!    `$OUT_DIR/daedalus.h`; with `DAEDALUS_BLESS_HEADER=1` it is also written to
//!    `include/daedalus.h` (committed; a test fails when the two differ);
//! 3. the exports that macros in `src/ffi/dsp.rs` define, which cbindgen cannot see: build.rs
//!    reads their names from the lines of the macros' invocations there (a line it does not
//!    expect fails the build), declares the inverse transforms (14) to cbindgen for the
//!    header's body through `$OUT_DIR/itx_exports.rs`, and appends C prototypes of the
//!    motion-compensation and loop-filter functions (146, named after FFmpeg's) to the header;
//! 4. link lines for the oracles that `scripts/setup` builds: the pure-C static libavcodec
//!    for tests (`cfg(daedalus_oracle_c)`), the SIMD one for benchmarks
//!    (`cfg(daedalus_oracle_asm)`), and the static libdav1d without asm for tests
//!    (`cfg(daedalus_dav1d_oracle_c)`) and with it for benchmarks
//!    (`cfg(daedalus_dav1d_oracle_asm)`).

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    compile_shaders(&root.join("shaders"), &out);
    write_header(&root, &out, &Exports::read(&root));
    link_oracle(
        &root,
        "oracle-c",
        "DAEDALUS_ORACLE_C",
        "tests",
        "daedalus_oracle_c",
    );
    link_dav1d_oracle(
        &root,
        "dav1d-oracle-c",
        "DAEDALUS_DAV1D_ORACLE_C",
        "tests",
        "daedalus_dav1d_oracle_c",
    );
    link_dav1d_oracle(
        &root,
        "dav1d-oracle-asm",
        "DAEDALUS_DAV1D_ORACLE_ASM",
        "benches",
        "daedalus_dav1d_oracle_asm",
    );
    link_oracle(
        &root,
        "oracle-asm",
        "DAEDALUS_ORACLE_ASM",
        "benches",
        "daedalus_oracle_asm",
    );
}

fn compile_shaders(dir: &Path, out: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut sources: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "comp"))
        .collect();
    sources.sort();
    let mut table = String::from("/// SPIR-V of every compute shader, by file stem.\n");
    table.push_str("pub static SHADERS: &[(&str, &[u8])] = &[\n");
    for src in &sources {
        let stem = src.file_stem().unwrap().to_str().unwrap();
        let text = fs::read_to_string(src)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", src.display()));
        let mut builds = vec![(stem.to_string(), Vec::new())];
        builds.extend(variants(src, &text));
        for (name, defines) in builds {
            compile_shader(dir, src, &out.join(format!("{name}.spv")), &defines);
            table.push_str(&format!(
                "    ({name:?}, include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{name}.spv\"))),\n"
            ));
        }
    }
    table.push_str("];\n");
    fs::write(out.join("shaders.rs"), table).unwrap();
}

/// A shader's variants: each line `// variant: NAME DEFINE...` builds the file once more as
/// shader NAME with each DEFINE defined (the frame path's kernels at 10 and 12 bits, say).
fn variants(src: &Path, text: &str) -> Vec<(String, Vec<String>)> {
    text.lines()
        .filter_map(|line| line.strip_prefix("// variant: "))
        .map(
            |rest| match rest.split_whitespace().collect::<Vec<_>>()[..] {
                [name, ref defines @ ..] if !defines.is_empty() => (
                    name.to_string(),
                    defines.iter().map(|d| d.to_string()).collect(),
                ),
                _ => panic!(
                    "{}: `// variant: NAME DEFINE...` expected, not `{rest}`",
                    src.display()
                ),
            },
        )
        .collect()
}

fn compile_shader(dir: &Path, src: &Path, spv: &Path, defines: &[String]) {
    let mut command = Command::new("glslangValidator");
    command.args(["-V", "--target-env", "vulkan1.1"]);
    for define in defines {
        command.arg(format!("-D{define}"));
    }
    let result = command
        .arg(format!("-I{}", dir.display()))
        .arg("-o")
        .arg(spv)
        .arg(src)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run glslangValidator ({e}): install glslang-tools (scripts/setup)")
        });
    if !result.status.success() {
        panic!(
            "shader {}{} does not compile:\n{}{}",
            src.display(),
            if defines.is_empty() {
                String::new()
            } else {
                format!(" with {}", defines.join(", "))
            },
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
}

/// The DSP exports, among them those that macros define.
const DSP_SOURCE: &str = "src/ffi/dsp.rs";

/// The rest of the C ABI.
const FFI_SOURCE: &str = "src/ffi.rs";

/// The providers, with the functions the patched decoders look up (`daedalus_vp9_provider`,
/// `daedalus_av1_provider`): beside the tables they return, after the rest in the header.
const PROVIDER_SOURCES: [&str; 2] = ["src/vp9/lookup.rs", "src/av1/lookup.rs"];

fn write_header(root: &Path, out: &Path, exports: &Exports) {
    println!("cargo:rerun-if-changed={DSP_SOURCE}");
    println!("cargo:rerun-if-changed={FFI_SOURCE}");
    for source in PROVIDER_SOURCES {
        println!("cargo:rerun-if-changed={source}");
    }
    println!("cargo:rerun-if-env-changed=DAEDALUS_BLESS_HEADER");
    let config = cbindgen::Config {
        language: cbindgen::Language::C,
        include_guard: Some("DAEDALUS_H".into()),
        header: Some(
            "/* daedalus: VP9/AV1 decoder DSP on Vulkan compute. Generated by build.rs (cbindgen)\n \
             * from src/ffi/dsp.rs, src/ffi.rs and the providers' lookups (src/vp9/lookup.rs,\n \
             * src/av1/lookup.rs); do not edit (refresh: DAEDALUS_BLESS_HEADER=1 cargo build). */"
                .into(),
        ),
        sys_includes: vec!["stddef.h".into(), "stdint.h".into()],
        no_includes: true,
        documentation: true,
        cpp_compat: true,
        usize_is_size_t: true,
        trailer: Some(exports.prototypes()),
        ..Default::default()
    };
    // cbindgen keeps the order of its sources, and of the functions in each: the DSP exports
    // it can see, the transforms, the rest, then the providers' lookups.
    let transforms = out.join("itx_exports.rs");
    fs::write(&transforms, exports.itx_declarations()).unwrap();
    let mut builder = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join(DSP_SOURCE))
        .with_src(&transforms)
        .with_src(root.join(FFI_SOURCE));
    for source in PROVIDER_SOURCES {
        builder = builder.with_src(root.join(source));
    }
    let header = builder
        .generate()
        .expect("cbindgen could not generate the header from src/ffi* and the providers' lookups");
    let generated = out.join("daedalus.h");
    header.write_to_file(&generated);
    if env::var_os("DAEDALUS_BLESS_HEADER").is_some_and(|v| v == "1") {
        fs::copy(&generated, root.join("include/daedalus.h")).unwrap();
    }
}

fn link_oracle(root: &Path, name: &str, var: &str, targets: &str, cfg: &str) {
    println!("cargo:rustc-check-cfg=cfg({cfg})");
    println!("cargo:rerun-if-env-changed={var}");
    let dir = env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("build").join(name));
    let lib = dir.join("lib");
    let archives = [lib.join("libavcodec.a"), lib.join("libavutil.a")];
    for a in &archives {
        println!("cargo:rerun-if-changed={}", a.display());
    }
    if archives.iter().all(|a| a.exists()) {
        println!("cargo:rustc-cfg={cfg}");
        for a in &archives {
            println!("cargo:rustc-link-arg-{targets}={}", a.display());
        }
        println!("cargo:rustc-link-arg-{targets}=-lm");
        println!("cargo:rustc-link-arg-{targets}=-lpthread");
    }
}

/// dav1d's functions from the static libdav1d builds of `scripts/setup`: without asm for the
/// tests (`cfg(daedalus_dav1d_oracle_c)`), with it for the benchmarks
/// (`cfg(daedalus_dav1d_oracle_asm)`).
fn link_dav1d_oracle(root: &Path, name: &str, var: &str, targets: &str, cfg: &str) {
    println!("cargo:rustc-check-cfg=cfg({cfg})");
    println!("cargo:rerun-if-env-changed={var}");
    let dir = env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("build").join(name));
    let archive = dir.join("lib").join("libdav1d.a");
    println!("cargo:rerun-if-changed={}", archive.display());
    if archive.exists() {
        println!("cargo:rustc-cfg={cfg}");
        println!("cargo:rustc-link-arg-{targets}={}", archive.display());
        println!("cargo:rustc-link-arg-{targets}=-lpthread");
    }
}

/// The exports that macros of `src/ffi/dsp.rs` define, by exported symbol, from the lines of
/// the macros' invocations there: the transforms (`itx_exports!`), the motion compensations
/// (`mc_exports!`) and the loop filters (`lf_exports!`).
struct Exports {
    itx: Vec<String>,
    mc: Vec<String>,
    lf: Vec<String>,
}

impl Exports {
    fn read(root: &Path) -> Exports {
        let path = root.join(DSP_SOURCE);
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        Exports {
            itx: invocation_lines(&text, "itx_exports"),
            mc: invocation_lines(&text, "mc_exports"),
            lf: invocation_lines(&text, "lf_exports"),
        }
    }

    /// The transforms as cbindgen declares functions, never compiled: with `itx_exports!`'s
    /// signature and documentation, for the header's body.
    fn itx_declarations(&self) -> String {
        let mut s = String::from("// Generated by build.rs for cbindgen: the transforms.\n");
        for export in &self.itx {
            let name = &export["daedalus_vp9_".len()..];
            s += &format!(
                "/// FFmpeg's `{name}_c`: the result is in `dst` once [`daedalus_flush`] returns.\n\
                 ///\n\
                 /// # Safety\n\
                 /// As for FFmpeg's function: the block's pixels at `dst` (rows `stride` bytes apart) and the\n\
                 /// coefficients at `block` must be valid; the pixels must stay valid and untouched until the\n\
                 /// calling thread's next `daedalus_flush()`.\n\
                 #[no_mangle]\n\
                 pub unsafe extern \"C\" fn {export}(dst: *mut u8, stride: isize, block: *mut i16, eob: c_int) {{}}\n"
            );
        }
        s
    }

    /// The C prototypes of the MC and loop-filter exports, after the header's body.
    fn prototypes(&self) -> String {
        // After cbindgen's include guard and extern "C" block: its own.
        let mut s = String::from(
            "#ifndef DAEDALUS_DSP_EXPORTS_H\n#define DAEDALUS_DSP_EXPORTS_H\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
        );
        s += "/*\n * Motion compensation: FFmpeg 5.1's VP9 `mc` functions, 8-bit, with its signature\n \
             * (dst, dst_stride, src, src_stride, h, mx, my). The source window (see the README)\n \
             * is read during the call; dst holds FFmpeg's result once daedalus_flush() returns.\n \
             */\n";
        for export in &self.mc {
            s += &format!("void {export}(uint8_t *dst, ptrdiff_t dst_stride, const uint8_t *src, ptrdiff_t src_stride, int h, int mx, int my);\n");
        }
        s += "\n/*\n * Loop filters: FFmpeg 5.1's VP9 loop-filter functions, 8-bit, with its signature\n \
              * (dst, stride, E, I, H); dst holds FFmpeg's result once daedalus_flush() returns.\n \
              */\n";
        for export in &self.lf {
            s += &format!("void {export}(uint8_t *dst, ptrdiff_t stride, int E, int I, int H);\n");
        }
        s += "\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
        s
    }
}

/// The exported symbols of the one invocation of `name!` in the DSP exports' source: a line
/// `name! {`, then one line per export, `daedalus_vp9_<f>: "<f>", ...;`, and comments, up to a
/// line `}`. Anything else fails the build.
fn invocation_lines(text: &str, name: &str) -> Vec<String> {
    let open = format!("{name}! {{");
    let starts: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, line)| *line == open)
        .map(|(n, _)| n)
        .collect();
    let [start] = starts[..] else {
        panic!("{DSP_SOURCE}: {} lines `{open}`, not one", starts.len());
    };
    let mut exports = Vec::new();
    for (n, line) in text.lines().enumerate().skip(start + 1) {
        let line = line.trim();
        if line == "}" {
            if exports.is_empty() {
                panic!("{DSP_SOURCE}:{}: `{name}!` defines no export", start + 1);
            }
            return exports;
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let export = line
            .split_once(": \"")
            .and_then(|(export, rest)| Some((export, rest.split_once("\", ")?.0)))
            .filter(|(export, f)| {
                !f.is_empty()
                    && f.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                    && export.strip_prefix("daedalus_vp9_") == Some(*f)
                    && line.ends_with(';')
            });
        match export {
            Some((export, _)) => exports.push(export.to_string()),
            None => panic!(
                "{DSP_SOURCE}:{}: not an export of `{name}!` \
                 (`daedalus_vp9_<f>: \"<f>\", ...;`): {line}",
                n + 1
            ),
        }
    }
    panic!("{DSP_SOURCE}:{}: `{name}!` is not closed", start + 1)
}
