//! The transforms at 10 and 12 bits on the GPU (`shaders/itx_1d.glsl` over the limbs of
//! `shaders/itx_high.glsl`, run alone by `shaders/vp9_itx_high_check.comp`) against the CPU
//! reference (`residual_high` in `src/kernels/itx.rs`, itself held to FFmpeg's C at both depths
//! by `tests/itx_reference.rs`): every transform, the DC shortcut, on realistic blocks and on
//! the ends of the 32-bit range. Run on lavapipe with DAEDALUS_VALIDATION=1 (scripts/test).

mod common;

use common::*;
use daedalus::kernels::itx::{residual_high, Transform};
use daedalus::vp9::frame::testing::{high_residuals, HighItxCase};

#[test]
fn gpu_transforms_at_10_and_12_bits_equal_the_reference() {
    let mut rng = Rng::new(0x62);
    let mut cases = Vec::new();
    for tx in Transform::ALL {
        for k in 0..48 {
            let bit_depth = if k % 2 == 0 { 10 } else { 12 };
            cases.push(HighItxCase {
                tx,
                dc_only: tx.has_dc_only() && k % 8 == 1,
                coefs: high_block(&mut rng, tx, bit_depth),
            });
        }
    }
    let gpu = high_residuals(&cases).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
    assert_eq!(gpu.len(), cases.len());
    for (c, g) in cases.iter().zip(&gpu) {
        let n = c.tx.size.n();
        let mut want = vec![0i32; n * n];
        residual_high(c.tx, &c.coefs, c.dc_only, &mut want);
        if let Some(i) = want.iter().zip(g).position(|(a, b)| a != b) {
            panic!(
                "{}{}: residual ({}, {}) is {} on the GPU, {} in the reference; first coefs {:?}",
                c.tx.name(),
                if c.dc_only { " (DC only)" } else { "" },
                i % n,
                i / n,
                g[i],
                want[i],
                &c.coefs[..8.min(c.coefs.len())]
            );
        }
    }
    assert_validation_clean();
}
