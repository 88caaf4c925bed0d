//! A test, kept with the benchmarks because it links FFmpeg's SIMD build (build/oracle-asm):
//! FFmpeg's C and SIMD transforms differ only on blocks whose 16-bit lanes overflow, and the
//! reference's `Lanes` check flags every such block. The FFmpeg provider relies on it to give
//! damaged streams the same result as stock FFmpeg (whose SIMD runs those blocks).
//! Valid (realistic) blocks are never flagged. Runs under `cargo test --all-targets`.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use daedalus::kernels::itx::{residual, Transform};
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

fn main() {
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
