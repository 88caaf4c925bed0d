//! A test, kept with the benchmarks because it links FFmpeg's SIMD build (build/oracle-asm):
//! FFmpeg's C and SIMD transforms differ only on blocks whose 16-bit lanes overflow, and the
//! reference's `Lanes` check flags every such block. The FFmpeg provider relies on it to give
//! damaged streams the same result as stock FFmpeg (whose SIMD runs those blocks).
//! Valid (realistic) blocks are never flagged. At 10 and 12 bits FFmpeg's SIMD transforms
//! agree with its C (which the reference follows) on the blocks of valid streams, with and
//! without `-bitexact`, and the frame path's watch on the GPU flags every block where they do
//! not. Runs under `cargo test --all-targets` (the watch on lavapipe).

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use daedalus::kernels::itx::{add_residual_high, residual, residual_high, Transform};
use daedalus::vp9::frame::testing::{high_residuals, HighItxCase};
use daedalus::vp9dsp::{ItxfmAddFn, Vp9DspContext};

#[cfg(daedalus_oracle_asm)]
extern "C" {
    fn ff_vp9dsp_init(dsp: *mut Vp9DspContext, bpp: i32, bitexact: i32);
    fn ff_vp9dsp_init_8(dsp: *mut Vp9DspContext);
}

fn tables() -> (Vp9DspContext, Vp9DspContext) {
    #[cfg(daedalus_oracle_asm)]
    unsafe {
        let (mut c, mut simd) = (Vp9DspContext::empty(), Vp9DspContext::empty());
        ff_vp9dsp_init_8(&mut c);
        // Not bit-exact: what `ffmpeg` without -bitexact runs. It differs from the bit-exact
        // table only in using an MMX lossless WHT, so this covers both.
        ff_vp9dsp_init(&mut simd, 8, 0);
        (c, simd)
    }
    #[cfg(not(daedalus_oracle_asm))]
    panic!("the FFmpeg SIMD build (build/oracle-asm) is missing: run scripts/setup, then rebuild");
}

fn apply(f: ItxfmAddFn, n: usize, pixels: &[u8], coefs: &[i16], eob: i32) -> Vec<u8> {
    let stride = 64;
    let mut px = Aligned::new(pixels);
    let mut c = Aligned::new(coefs);
    unsafe {
        f(
            px.as_mut_slice().as_mut_ptr(),
            stride,
            c.as_mut_slice().as_mut_ptr(),
            eob,
        )
    };
    let _ = n;
    px.as_slice().to_vec()
}

/// A block a damaged stream could carry: coefficients up to full int16 range, only within the
/// first `eob` positions of FFmpeg's scan order (the decoder writes no others).
fn damaged_block(rng: &mut Rng, tx: Transform) -> (Vec<i16>, i32) {
    let mut c = vec![0i16; tx.coefs()];
    let scale = [16, 256, 2048, 8192, 32767][rng.below(5)];
    for v in c.iter_mut() {
        if rng.chance(30) {
            *v = rng.range(-scale, scale) as i16;
        }
    }
    if rng.chance(20) {
        let at = rng.below(c.len());
        c[at] = [32767, -32768][rng.below(2)];
    }
    let eob = plausible_eob(rng, tx, &c);
    (c, eob)
}

/// FFmpeg's SIMD transforms at 10 and 12 bits (SSE2 from 8x8 up, and at 12 bits 4x4; at 10
/// bits 4x4 too without `-bitexact`) on blocks of valid streams (realistic blocks at the
/// depth's scale) give the reference's result. Far beyond that range they do not (a single
/// coefficient from about 2^20 on): each table must differ there on some block of 8x8 and up,
/// which shows that it runs FFmpeg's SIMD at all. Damaged streams can carry such blocks; the
/// frame path watches for them (below).
fn high_bit_depths_agree_on_valid_blocks() {
    let mut rng = Rng::new(1012);
    for bit_depth in [10u32, 12] {
        for bitexact in [0, 1] {
            #[cfg(daedalus_oracle_asm)]
            let simd = unsafe {
                let mut t = Vp9DspContext::empty();
                ff_vp9dsp_init(&mut t, bit_depth as i32, bitexact);
                t
            };
            #[cfg(not(daedalus_oracle_asm))]
            let simd: Vp9DspContext = panic!("the FFmpeg SIMD build is missing: {bitexact}");
            let mut far_differs = false;
            for tx in Transform::ALL {
                let n = tx.size.n();
                let f = ffmpeg_itx(&simd, tx);
                for case in 0..400 {
                    let far = case % 8 == 7;
                    let coefs: Vec<i32> = if far {
                        let mut c = vec![0i32; n * n];
                        c[rng.below(n * n)] = rng.range(1 << 21, 1 << 30) as i32;
                        c
                    } else {
                        let c = realistic_block(&mut rng, tx);
                        c.iter().map(|&v| (v as i32) << (bit_depth - 8)).collect()
                    };
                    let scaled: Vec<i16> = coefs
                        .iter()
                        .map(|&v| (v >> (bit_depth - 8)) as i16)
                        .collect();
                    let eob = if far {
                        tx.coefs() as i32
                    } else {
                        plausible_eob(&mut rng, tx, &scaled)
                    };
                    let pixels: Vec<u16> = (0..64 * n)
                        .map(|_| rng.below(1 << bit_depth) as u16)
                        .collect();
                    let mut simd_px = Aligned::new(&pixels);
                    let mut block = Aligned::new(&coefs);
                    let mut res = vec![0i32; n * n];
                    let mut ours = pixels.clone();
                    unsafe {
                        f(
                            simd_px.as_mut_slice().as_mut_ptr() as *mut u8,
                            128,
                            block.as_mut_slice().as_mut_ptr() as *mut i16,
                            eob,
                        );
                        residual_high(tx, &coefs, tx.is_dc_only_call(eob), &mut res);
                        add_residual_high(ours.as_mut_ptr(), 64, n, &res, bit_depth);
                    }
                    let same = simd_px.as_slice() == &ours[..];
                    if far {
                        far_differs |= !same && n >= 8;
                    } else {
                        assert!(
                            same,
                            "{} bits{}: {} eob {eob}: FFmpeg's SIMD differs from the reference \
                             on a valid block (first coefs {:?})",
                            bit_depth,
                            if bitexact != 0 { ", bitexact" } else { "" },
                            tx.name(),
                            &coefs[..8.min(coefs.len())]
                        );
                    }
                }
            }
            assert!(
                far_differs,
                "{bit_depth} bits: no block far out of range differed: is this FFmpeg's SIMD?"
            );
        }
    }
    println!(
        "simd_agreement: FFmpeg's SIMD at 10 and 12 bits equals the reference on valid blocks: ok"
    );
}

/// A block a damaged 10- or 12-bit stream could carry, or (`valid`) one of a valid stream's
/// range: realistic blocks scaled up, single and many large coefficients, the DC shortcut's
/// edges, DC values near where FFmpeg's 16-bit add wraps, and the ends of the 32-bit range.
fn damaged_high_block(rng: &mut Rng, tx: Transform, bit_depth: u32, valid: bool) -> Vec<i32> {
    let n2 = tx.coefs();
    let realistic = |rng: &mut Rng| -> Vec<i32> {
        let c = realistic_block(rng, tx);
        c.iter().map(|&v| (v as i32) << (bit_depth - 8)).collect()
    };
    let signed = |rng: &mut Rng, v: i64| (if rng.chance(50) { v } else { -v }) as i32;
    if valid {
        return realistic(rng);
    }
    let mut c = vec![0i32; n2];
    match rng.below(7) {
        0 => {
            let s = rng.below(16) as u32;
            c = realistic(rng).iter().map(|&v| v.wrapping_shl(s)).collect();
        }
        1 => {
            let m = rng.range(12, 32) as u32;
            let at = if rng.chance(30) { 0 } else { rng.below(n2) };
            let v = rng.range(1i64 << (m - 2), (1i64 << (m - 1)) - 1);
            c[at] = signed(rng, v);
        }
        2 => {
            let m = rng.range(10, 31);
            for v in c.iter_mut() {
                if rng.chance(30) {
                    *v = rng.range(-(1 << m), 1 << m) as i32;
                }
            }
        }
        3 => {
            let edges = [
                185366, 185367, -185368, -185369, 32767, 32768, -32768, -32769,
            ];
            c[0] = edges[rng.below(edges.len())];
        }
        4 => {
            // a DC whose residual lands near 2^15 less the pixel maximum
            let shift = [4, 5, 6, 6][tx.size as usize];
            c = realistic(rng);
            let dc = rng.range(20000, 40000) << (shift + 1);
            c[0] = c[0].wrapping_add(signed(rng, dc));
        }
        5 => {
            // a column of large values: the first pass's sums grow while its inputs do not
            let n = tx.size.n();
            let (col, m) = (rng.below(n), rng.range(20, 29) as u32);
            for r in 0..n {
                if rng.chance(60) {
                    let v = rng.range(1i64 << (m - 1), (1i64 << m) - 1);
                    c[r * n + col] = signed(rng, v);
                }
            }
        }
        _ => c = high_block(rng, tx, bit_depth),
    }
    c
}

/// The frame path's watch at 10 and 12 bits (`shaders/itx_high_watch.glsl`, run on the GPU by
/// `vp9_itx_high_check.comp`): on every block where FFmpeg's SIMD (with and without
/// `-bitexact`) computes other pixels than its C (the reference, which the GPU's residual
/// equals), the block is flagged and goes to FFmpeg; blocks of valid streams never are.
fn the_frame_path_watches_where_simd_differs_at_10_and_12_bits() {
    let mut rng = Rng::new(4062);
    let mut cases = Vec::new();
    let mut valid = Vec::new();
    for bit_depth in [10u32, 12] {
        for tx in Transform::ALL {
            for k in 0..160 {
                let is_valid = k % 5 == 0;
                let coefs = damaged_high_block(&mut rng, tx, bit_depth, is_valid);
                let nonzero: Vec<i16> = coefs.iter().map(|&v| (v != 0) as i16).collect();
                let eob = if k % 7 == 3 {
                    tx.coefs() as i32
                } else {
                    plausible_eob(&mut rng, tx, &nonzero)
                };
                // (An intra 32x32 block's mode may name any type: FFmpeg runs idct_idct.)
                let mode_type = (tx.size.n() == 32).then_some(k as u32 % 4);
                cases.push(HighItxCase {
                    tx,
                    bit_depth,
                    eob,
                    coefs,
                    mode_type,
                });
                valid.push(is_valid);
            }
        }
    }
    let gpu = high_residuals(&cases).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
    let (mut differ, mut flagged) = (0, 0);
    for ((c, g), valid) in cases.iter().zip(&gpu).zip(valid) {
        let n = c.tx.size.n();
        let (what, res) = high_case_reference(c);
        assert_eq!(
            g.residual, res,
            "{what}: the GPU's residual is not the reference's"
        );
        assert!(!(valid && g.flagged), "{what}: a valid block flagged");
        flagged += usize::from(g.flagged);
        for pattern in 0..3 {
            let max = (1u32 << c.bit_depth) - 1;
            let pixels: Vec<u16> = (0..64 * n)
                .map(|_| match pattern {
                    0 => 0,
                    1 => max as u16,
                    _ => rng.below(max as usize + 1) as u16,
                })
                .collect();
            let mut ours = pixels.clone();
            unsafe { add_residual_high(ours.as_mut_ptr(), 64, n, &res, c.bit_depth) };
            for bitexact in [0, 1] {
                let simd = high_table(c.bit_depth, bitexact);
                let mut px = Aligned::new(&pixels);
                let mut block = Aligned::new(&c.coefs);
                unsafe {
                    ffmpeg_itx(&simd, c.tx)(
                        px.as_mut_slice().as_mut_ptr() as *mut u8,
                        128,
                        block.as_mut_slice().as_mut_ptr() as *mut i16,
                        c.eob,
                    )
                };
                if px.as_slice() != &ours[..] {
                    differ += 1;
                    assert!(
                        g.flagged,
                        "{what} (bitexact {bitexact}): FFmpeg's SIMD differs from its C on a \
                         block the frame path does not flag"
                    );
                }
            }
        }
    }
    assert!(
        differ > 100,
        "FFmpeg's SIMD differed on {differ} blocks only: is it its SIMD?"
    );
    println!(
        "simd_agreement: the frame path flags every block where FFmpeg's SIMD at 10 and 12 bits \
         differs ({differ} block and pixel pairs; {flagged} of {} blocks flagged): ok",
        cases.len()
    );
}

/// FFmpeg's SIMD table at `bit_depth` (`bitexact`: as `-flags bitexact` asks).
fn high_table(bit_depth: u32, bitexact: i32) -> Vp9DspContext {
    #[cfg(daedalus_oracle_asm)]
    unsafe {
        let mut t = Vp9DspContext::empty();
        ff_vp9dsp_init(&mut t, bit_depth as i32, bitexact);
        t
    }
    #[cfg(not(daedalus_oracle_asm))]
    panic!("the FFmpeg SIMD build is missing: {bit_depth} {bitexact}");
}

fn main() {
    high_bit_depths_agree_on_valid_blocks();
    the_frame_path_watches_where_simd_differs_at_10_and_12_bits();
    let (c_table, simd_table) = tables();
    let mut rng = Rng::new(77);
    let mut report = Vec::new();
    for tx in Transform::ALL {
        let n = tx.size.n();
        let c_fn = ffmpeg_itx(&c_table, tx);
        let simd_fn = ffmpeg_itx(&simd_table, tx);
        let (mut differ, mut flagged, mut checked) = (0, 0, 0);
        for case in 0..4000 {
            let mut pixels = vec![0u8; 64 * n];
            rng.bytes(&mut pixels);
            let (coefs, eob) = if case % 4 == 0 {
                let c = realistic_block(&mut rng, tx);
                let e = plausible_eob(&mut rng, tx, &c);
                (c, e)
            } else {
                damaged_block(&mut rng, tx)
            };
            let mut res = vec![0i32; 32 * 32];
            let dc_only = tx.is_dc_only_call(eob);
            let overflow = residual(tx, &coefs, dc_only, &mut res);
            let (c_out, simd_out) = (
                apply(c_fn, n, &pixels, &coefs, eob),
                apply(simd_fn, n, &pixels, &coefs, eob),
            );
            checked += 1;
            if overflow {
                flagged += 1;
            }
            if c_out != simd_out {
                differ += 1;
                assert!(
                    overflow,
                    "{}: FFmpeg's C and SIMD differ on a block the lane check passes (eob {eob}, first coefs {:?})",
                    tx.name(),
                    &coefs[..16.min(coefs.len())]
                );
            }
            if case % 4 == 0 {
                assert!(!overflow, "{}: a realistic block was flagged", tx.name());
            }
        }
        report.push(format!(
            "{}: {checked} blocks, C and SIMD differ on {differ}, flagged {flagged}",
            tx.name()
        ));
    }
    for r in &report {
        println!("{r}");
    }
    println!("simd_agreement: every block where FFmpeg's C and SIMD differ is flagged: ok");
}
