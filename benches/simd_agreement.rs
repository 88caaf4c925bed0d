//! A test, kept with the benchmarks because it links FFmpeg's SIMD build (build/oracle-asm):
//! FFmpeg's C and SIMD transforms differ only on blocks whose 16-bit lanes overflow, and the
//! reference's `Lanes` check flags every such block. The FFmpeg provider relies on it to give
//! damaged streams the same result as stock FFmpeg (whose SIMD runs those blocks).
//! Valid (realistic) blocks are never flagged. At 10 and 12 bits FFmpeg's SIMD transforms
//! agree with its C (which the reference follows) on the blocks of valid streams, with and
//! without `-bitexact`. Runs under `cargo test --all-targets`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use daedalus::kernels::itx::{add_residual_high, residual, residual_high, Transform};
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
/// frame path does not yet watch for them.
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

fn main() {
    high_bit_depths_agree_on_valid_blocks();
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
