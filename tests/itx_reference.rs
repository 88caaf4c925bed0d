//! The CPU reference against FFmpeg's own C functions (pure-C static build), block by block.

mod common;

use common::*;
use daedalus::kernels::itx::{itx_add_now, itx_add_now_high, Transform};

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

/// The reference at 10 and 12 bits against FFmpeg's C functions of those depths: every
/// transform on realistic blocks, on the ends of the 32-bit range and on random words, over
/// pixels at the ends of the depth's range and between; the pixels and the block after the
/// call (zeroed as FFmpeg zeroes it) must be FFmpeg's.
#[test]
fn reference_matches_ffmpeg_c_at_10_and_12_bits() {
    for bit_depth in [10u32, 12] {
        let dsp = ffmpeg_c_at(bit_depth as i32);
        let max = (1u16 << bit_depth) - 1;
        let mut rng = Rng::new(bit_depth as u64);
        for tx in Transform::ALL {
            let n = tx.size.n();
            for case in 0..600 {
                let coefs = high_block(&mut rng, tx, bit_depth);
                let eob = match case % 5 {
                    0 => 1,
                    1 => tx.coefs() as i32,
                    _ => 1 + rng.below(tx.coefs()) as i32,
                };
                let stride = n + rng.below(40);
                let pixels: Vec<u16> = match case % 4 {
                    0 => vec![0; stride * n],
                    1 => vec![max; stride * n],
                    _ => (0..stride * n)
                        .map(|_| rng.below(max as usize + 1) as u16)
                        .collect(),
                };
                let (mut ff_px, mut our_px) = (pixels.clone(), pixels);
                let (mut ff_blk, mut our_blk) = (coefs.clone(), coefs.clone());
                unsafe {
                    ffmpeg_itx(&dsp, tx)(
                        ff_px.as_mut_ptr() as *mut u8,
                        2 * stride as isize,
                        ff_blk.as_mut_ptr() as *mut i16,
                        eob,
                    );
                    itx_add_now_high(
                        tx,
                        our_px.as_mut_ptr(),
                        stride as isize,
                        our_blk.as_mut_ptr(),
                        eob,
                        bit_depth,
                    );
                }
                if let Some(i) = ff_px.iter().zip(&our_px).position(|(a, b)| a != b) {
                    panic!(
                        "{} bits, {} eob {eob}, case {case}: pixel ({}, {}) ffmpeg {} ours {}; \
                         first coefs {:?}",
                        bit_depth,
                        tx.name(),
                        i % stride,
                        i / stride,
                        ff_px[i],
                        our_px[i],
                        &coefs[..coefs.len().min(8)]
                    );
                }
                assert_eq!(
                    ff_blk,
                    our_blk,
                    "{} bits, {} eob {eob}: block",
                    bit_depth,
                    tx.name()
                );
            }
        }
    }
}
