//! Bad input through the exported functions: defined behaviour, no crash, and wherever
//! FFmpeg's C function has a defined result, exactly that result.

mod common;

use common::*;
use daedalus::ffi;
use daedalus::kernels::itx::Transform;
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn null_pointers_are_ignored() {
    let _l = lock();
    let mut rng = Rng::new(30);
    for tx in Transform::ALL {
        let before = stats().rejected;
        let mut block = realistic_block(&mut rng, tx);
        let kept = block.clone();
        unsafe { daedalus_itx(tx)(std::ptr::null_mut(), 64, block.as_mut_ptr(), 64) };
        let mut pixels = vec![7u8; 64 * 32];
        unsafe { daedalus_itx(tx)(pixels.as_mut_ptr(), 64, std::ptr::null_mut(), 64) };
        ffi::daedalus_flush();
        assert_eq!(
            block,
            kept,
            "{}: a call with null dst leaves the block alone",
            tx.name()
        );
        assert!(
            pixels.iter().all(|&p| p == 7),
            "{}: a call with a null block writes nothing",
            tx.name()
        );
        assert_eq!(stats().rejected - before, 2);
    }
    unsafe { ffi::daedalus_get_stats(std::ptr::null_mut()) };
    assert_eq!(ffi::daedalus_register_memory(std::ptr::null_mut(), 100), -1);
    assert_eq!(ffi::daedalus_unregister_memory(std::ptr::null_mut()), -1);
}

/// Runs one call through daedalus and through FFmpeg on the same buffer and dst offset.
fn compare(tx: Transform, stride: isize, dst_at: usize, buffer: &[u8], coefs: &[i16], eob: i32) {
    let dsp = ffmpeg_c();
    let (mut ours, mut theirs) = (buffer.to_vec(), buffer.to_vec());
    let (mut our_blk, mut their_blk) = (coefs.to_vec(), coefs.to_vec());
    unsafe {
        ffmpeg_itx(&dsp, tx)(
            theirs.as_mut_ptr().add(dst_at),
            stride,
            their_blk.as_mut_ptr(),
            eob,
        );
        daedalus_itx(tx)(
            ours.as_mut_ptr().add(dst_at),
            stride,
            our_blk.as_mut_ptr(),
            eob,
        );
    }
    ffi::daedalus_flush();
    assert!(
        ours == theirs,
        "{} stride {stride} eob {eob}: pixels differ from FFmpeg",
        tx.name()
    );
    assert_eq!(
        our_blk,
        their_blk,
        "{} stride {stride} eob {eob}: block differs",
        tx.name()
    );
}

#[test]
fn strides_smaller_than_the_block_end_as_ffmpeg_ends() {
    let _l = lock();
    let mut rng = Rng::new(31);
    for tx in Transform::ALL {
        let n = tx.size.n() as isize;
        for stride in [0, 1, n / 2, n - 1, -1, -(n - 1), n, -n, 3 * n] {
            let span = (n - 1) * stride.abs() + n;
            let mut buffer = vec![0u8; span as usize + 64];
            rng.bytes(&mut buffer);
            // With a negative stride dst points at the last row in memory order.
            let dst_at = if stride < 0 {
                ((n - 1) * -stride) as usize
            } else {
                0
            } + 16;
            let coefs = realistic_block(&mut rng, tx);
            compare(tx, stride, dst_at, &buffer, &coefs, 64);
            let mut dc_block = vec![0i16; tx.coefs()];
            dc_block[0] = rng.range(-3000, 3000) as i16;
            compare(tx, stride, dst_at, &buffer, &dc_block, 1);
        }
    }
}

#[test]
fn eob_values_outside_the_block() {
    let _l = lock();
    let mut rng = Rng::new(32);
    for tx in Transform::ALL {
        for eob in [0, -1, -1000, tx.coefs() as i32 + 1, i32::MAX, i32::MIN, 1] {
            let mut buffer = vec![0u8; 40 * 40];
            rng.bytes(&mut buffer);
            // Other coefficients set while eob says 1: FFmpeg's DC shortcut ignores them and
            // leaves them in the block; so must we.
            let coefs = realistic_block(&mut rng, tx);
            compare(tx, 40, 0, &buffer, &coefs, eob);
        }
    }
}

#[test]
fn misaligned_coefficient_blocks() {
    let _l = lock();
    let mut rng = Rng::new(33);
    for tx in Transform::ALL {
        let coefs = realistic_block(&mut rng, tx);
        // Bytes of the block at an odd address.
        let mut raw = vec![0u8; coefs.len() * 2 + 1];
        raw[0] = 0xaa; // must survive: the block starts one byte later
        for (i, c) in coefs.iter().enumerate() {
            raw[1 + 2 * i..3 + 2 * i].copy_from_slice(&c.to_ne_bytes());
        }
        let mut pixels = vec![0u8; 40 * 40];
        rng.bytes(&mut pixels);
        let mut expected = pixels.clone();
        let mut their = coefs.clone();
        let dsp = ffmpeg_c();
        unsafe {
            ffmpeg_itx(&dsp, tx)(expected.as_mut_ptr(), 40, their.as_mut_ptr(), 64);
            daedalus_itx(tx)(pixels.as_mut_ptr(), 40, raw.as_mut_ptr().add(1).cast(), 64);
        }
        ffi::daedalus_flush();
        assert!(pixels == expected, "{}: misaligned block", tx.name());
        assert!(
            raw[1..].iter().all(|&b| b == 0),
            "{}: the block is zeroed",
            tx.name()
        );
        assert_eq!(raw[0], 0xaa);
    }
}
