//! The frame path's transforms at 10 and 12 bits on the GPU (`shaders/vp9_itx.glsl` with
//! `VP9_HIGH`: `shaders/itx_1d.glsl` over the limbs of `shaders/itx_high.glsl`, run alone by
//! `shaders/vp9_itx_high_check.comp`) against the CPU reference (`residual_high` in
//! `src/kernels/itx.rs`, itself held to FFmpeg's C at both depths by `tests/itx_reference.rs`):
//! every transform, the DC shortcut, on realistic blocks and on the ends of the 32-bit range.
//! The watch of FFmpeg's SIMD (`shaders/itx_high_watch.glsl`) leaves the blocks of valid
//! streams alone and flags coefficients at the ends of the range; `benches/simd_agreement.rs` holds it to
//! FFmpeg's SIMD itself. Run on lavapipe with DAEDALUS_VALIDATION=1 (scripts/test).

mod common;

use common::*;
use daedalus::kernels::itx::Transform;
use daedalus::vp9::frame::testing::{high_residuals, HighItxCase};

#[test]
fn gpu_transforms_at_10_and_12_bits_equal_the_reference() {
    let mut rng = Rng::new(0x62);
    let mut cases = Vec::new();
    // (whether the block is of a valid stream's range)
    let mut valid = Vec::new();
    for tx in Transform::ALL {
        for k in 0..64 {
            let bit_depth = if k % 2 == 0 { 10 } else { 12 };
            let realistic = k % 4 >= 2;
            let coefs: Vec<i32> = if realistic {
                let c = realistic_block(&mut rng, tx);
                c.iter().map(|&v| (v as i32) << (bit_depth - 8)).collect()
            } else {
                high_block(&mut rng, tx, bit_depth)
            };
            let eob = if tx.has_dc_only() && k % 8 == 1 {
                1
            } else {
                tx.coefs() as i32
            };
            let coefs = if eob == 1 {
                let mut dc = vec![0; coefs.len()];
                dc[0] = coefs[0];
                dc
            } else {
                coefs
            };
            cases.push(HighItxCase {
                tx,
                bit_depth,
                eob,
                coefs,
                mode_type: None,
            });
            valid.push(realistic);
        }
    }
    let gpu = high_residuals(&cases).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
    assert_eq!(gpu.len(), cases.len());
    let mut extreme = 0;
    for ((c, g), valid) in cases.iter().zip(&gpu).zip(valid) {
        let n = c.tx.size.n();
        let (what, want) = high_case_reference(c);
        if let Some(i) = want.iter().zip(&g.residual).position(|(a, b)| a != b) {
            panic!(
                "{what}: residual ({}, {}) is {} on the GPU, {} in the reference",
                i % n,
                i / n,
                g.residual[i],
                want[i]
            );
        }
        assert!(!(valid && g.flagged), "{what}: a valid block flagged");
        // A coefficient of 2^30 or more is far beyond what FFmpeg's SIMD computes as its C
        // does, in every transform.
        if c.coefs.iter().any(|&v| v.unsigned_abs() >= 1 << 30) {
            assert!(g.flagged, "{what}: not flagged");
            extreme += 1;
        }
    }
    assert!(
        extreme > 50,
        "only {extreme} blocks at the ends of the range"
    );
    assert_validation_clean();
}
