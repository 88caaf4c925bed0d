//! The committed C header must be what cbindgen generates from the current source, and must
//! compile as C.

#[test]
fn committed_header_is_current() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/daedalus.h"));
    let committed =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/daedalus.h"))
            .expect("include/daedalus.h is missing");
    assert!(
        generated == committed,
        "include/daedalus.h is stale: refresh it with DAEDALUS_BLESS_HEADER=1 cargo build and commit it"
    );
}

#[test]
fn header_compiles_as_c_and_declares_ffmpeg_signatures() {
    let dir = std::env::temp_dir().join(format!("daedalus-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("check.c");
    // Assigning to FFmpeg's function-pointer type proves the signatures match.
    std::fs::write(
        &src,
        r#"#include "daedalus.h"
typedef void (*itxfm_add)(uint8_t *dst, ptrdiff_t stride, int16_t *block, int eob);
itxfm_add table[] = {
    daedalus_vp9_idct_idct_4x4_add, daedalus_vp9_iadst_idct_4x4_add,
    daedalus_vp9_idct_iadst_4x4_add, daedalus_vp9_iadst_iadst_4x4_add,
    daedalus_vp9_iwht_iwht_4x4_add, daedalus_vp9_idct_idct_8x8_add,
    daedalus_vp9_iadst_idct_8x8_add, daedalus_vp9_idct_iadst_8x8_add,
    daedalus_vp9_iadst_iadst_8x8_add, daedalus_vp9_idct_idct_16x16_add,
    daedalus_vp9_iadst_idct_16x16_add, daedalus_vp9_idct_iadst_16x16_add,
    daedalus_vp9_iadst_iadst_16x16_add, daedalus_vp9_idct_idct_32x32_add,
};
int main(void) {
    DaedalusStats s;
    daedalus_get_stats(&s);
    daedalus_flush();
    return daedalus_backend() == DAEDALUS_BACKEND_GPU && daedalus_device_name() != 0
        && daedalus_register_memory(0, 0) == -1 && daedalus_unregister_memory(0) == -1 ? 0 : 1;
}
"#,
    )
    .unwrap();
    let out = std::process::Command::new("cc")
        .args([
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
        ])
        .arg(format!(
            "-I{}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/include")
        ))
        .arg(&src)
        .output()
        .expect("a C compiler (cc) is needed for this test");
    assert!(
        out.status.success(),
        "include/daedalus.h does not compile as C:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
