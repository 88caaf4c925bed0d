//! The CPU reference against FFmpeg's own C functions (pure-C static build), block by block.

mod common;

use common::*;
use daedalus::kernels::itx::{itx_add_now, Transform};

/// Runs FFmpeg and the reference on the same block and pixels; returns a description of the
/// first difference.
fn compare_one(
    dsp: &daedalus::vp9dsp::Vp9DspContext,
    tx: Transform,
    coefs: &[i16],
    eob: i32,
    pixels: &[u8],
    stride: usize,
) -> Result<(), String> {
    let n = tx.size.n();
    let (mut ff_px, mut our_px) = (pixels.to_vec(), pixels.to_vec());
    let (mut ff_blk, mut our_blk) = (coefs.to_vec(), coefs.to_vec());
    unsafe {
        ffmpeg_itx(dsp, tx)(
            ff_px.as_mut_ptr(),
            stride as isize,
            ff_blk.as_mut_ptr(),
            eob,
        );
        itx_add_now(
            tx,
            our_px.as_mut_ptr(),
            stride as isize,
            our_blk.as_mut_ptr(),
            eob,
        );
    }
    if ff_px != our_px {
        let i = ff_px.iter().zip(&our_px).position(|(a, b)| a != b).unwrap();
        return Err(format!(
            "{} eob {eob}: pixel ({}, {}) ffmpeg {} ours {}; first coefs {:?}",
            tx.name(),
            i % stride,
            i / stride,
            ff_px[i],
            our_px[i],
            &coefs[..coefs.len().min(16)]
        ));
    }
    if ff_blk != our_blk {
        return Err(format!(
            "{} eob {eob}: block after the call differs",
            tx.name()
        ));
    }
    let _ = n;
    Ok(())
}

#[test]
fn reference_matches_ffmpeg_c_on_every_transform() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(1);
    for tx in Transform::ALL {
        let n = tx.size.n();
        for case in 0..3000 {
            let coefs = match case % 10 {
                0 | 1 => extreme_block(&mut rng, tx),
                _ => realistic_block(&mut rng, tx),
            };
            let eob = match case % 7 {
                0 => 1,
                1 => 0,
                2 => tx.coefs() as i32 + 5,
                _ => plausible_eob(&mut rng, tx, &coefs),
            };
            let stride = n + rng.below(40);
            let mut pixels = vec![0u8; stride * n];
            match case % 5 {
                0 => pixels.fill(0),
                1 => pixels.fill(255),
                _ => rng.bytes(&mut pixels),
            }
            if let Err(e) = compare_one(&dsp, tx, &coefs, eob, &pixels, stride) {
                panic!("case {case}: {e}");
            }
        }
    }
}
