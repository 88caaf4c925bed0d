//! The frame path's intra predictors on the GPU (`shaders/vp9_ipred_fn.glsl`, run alone by
//! `shaders/vp9_ipred_check.comp`) against the CPU reference (`src/kernels/ipred.rs`, itself
//! checked against FFmpeg's C functions by `tests/ipred_reference.rs`): every mode and size on
//! random and extreme edges, at 8, 10 and 12 bits. Run on lavapipe with DAEDALUS_VALIDATION=1
//! (scripts/test).

mod common;

use common::*;
use daedalus::kernels::ipred::{self, HOR_UP_PRED, N_MODES};
use daedalus::vp9::frame::testing::{predict_intra, IntraCase};

/// The reference's prediction of a case (its left edge in FFmpeg's order: reversed but for
/// HOR_UP), at the case's depth.
fn reference(c: &IntraCase) -> Vec<u16> {
    let n = 4 << c.size_log2;
    let left: Vec<u16> = if c.mode == HOR_UP_PRED {
        c.left[..n].to_vec()
    } else {
        c.left[..n].iter().rev().copied().collect()
    };
    if c.bit_depth == 8 {
        let narrow = |v: &[u16]| v.iter().map(|&p| p as u8).collect::<Vec<u8>>();
        let mut out = vec![0u8; n * n];
        let (left, top) = (narrow(&left), narrow(&c.top));
        ipred::predict(c.mode, c.size_log2, &left, &top, c.topleft as u8, &mut out);
        return out.into_iter().map(u16::from).collect();
    }
    let mut out = vec![0u16; n * n];
    let edges = (&left[..], &c.top[..], c.topleft);
    ipred::predict_high(c.mode, c.size_log2, edges, c.bit_depth, &mut out);
    out
}

fn case(rng: &mut Rng, mode: u8, size_log2: usize, pattern: usize, bit_depth: u32) -> IntraCase {
    let max = (1u32 << bit_depth) - 1;
    let mut pixel = |i: usize| -> u16 {
        let v = match pattern {
            0 => rng.below(max as usize + 1) as u32,
            1 => 0,
            2 => max,
            3 => i as u32 % 2 * max,
            // smooth: what natural content gives the directional modes
            _ => ((128 + (i as i32 * 7 % 61) - 30 + rng.below(5) as i32) as u32) << (bit_depth - 8),
        };
        v as u16
    };
    let mut top = [0u16; 64];
    let mut left = [0u16; 32];
    for (i, t) in top.iter_mut().enumerate() {
        *t = pixel(i);
    }
    for (i, l) in left.iter_mut().enumerate() {
        *l = pixel(64 + i);
    }
    IntraCase {
        mode,
        size_log2,
        bit_depth,
        topleft: pixel(99),
        top,
        left,
    }
}

#[test]
fn gpu_predictors_equal_the_reference() {
    let mut rng = Rng::new(0x1b7a);
    let mut cases = Vec::new();
    for bit_depth in [8, 10, 12] {
        for mode in 0..N_MODES as u8 {
            for size_log2 in 0..4 {
                for pattern in 0..5 {
                    let repeats = match (pattern, bit_depth) {
                        (0 | 4, 8) => 24,
                        (0 | 4, _) => 6,
                        _ => 1,
                    };
                    for _ in 0..repeats {
                        cases.push(case(&mut rng, mode, size_log2, pattern, bit_depth));
                    }
                }
            }
        }
    }
    let gpu = predict_intra(&cases).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
    assert_eq!(gpu.len(), cases.len());
    for (c, g) in cases.iter().zip(&gpu) {
        let want = reference(c);
        if let Some(i) = want.iter().zip(g).position(|(a, b)| a != b) {
            let n = 4 << c.size_log2;
            panic!(
                "{} bits, {} {n}x{n}: pixel ({}, {}) is {} on the GPU, {} in the reference",
                c.bit_depth,
                ipred::MODE_NAMES[c.mode as usize],
                i % n,
                i / n,
                g[i],
                want[i]
            );
        }
    }
    assert_validation_clean();
}
