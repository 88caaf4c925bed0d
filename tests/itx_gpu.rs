//! The GPU transforms, checkasm style: every call through the exported functions, many
//! blocks per flush, against the CPU reference and FFmpeg's own C functions.
//! Run on lavapipe with DAEDALUS_VALIDATION=1 (scripts/test): any validation message fails.

mod common;

use common::*;
use daedalus::ffi;
use daedalus::kernels::itx::{Transform, TxSize};
use std::sync::Mutex;

/// The tests read process-wide counters: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Which part of a canvas to register with daedalus.
#[derive(Clone, Copy)]
enum Reg {
    No,
    Whole,
    /// The first so many bytes.
    Prefix(usize),
}

/// Runs `blocks` three ways and compares pixels and coefficient blocks.
fn check_three_ways(
    canvases: &[Canvas],
    blocks: &[Placed],
    register: &[Reg],
) -> ffi::DaedalusStats {
    let dsp = ffmpeg_c();
    let mut ff = clone_canvases(canvases);
    let mut reference = clone_canvases(canvases);
    let mut gpu = clone_canvases(canvases);
    let (mut ff_blocks, mut ref_blocks, mut gpu_blocks) =
        (blocks.to_vec(), blocks.to_vec(), blocks.to_vec());
    apply_ffmpeg(&dsp, &mut ff, &mut ff_blocks);
    apply_reference(&mut reference, &mut ref_blocks);

    for (c, &r) in gpu.iter_mut().zip(register) {
        let len = match r {
            Reg::No => continue,
            Reg::Whole => c.pixels.len(),
            Reg::Prefix(n) => n,
        };
        let rc = ffi::daedalus_register_memory(c.pixels.as_mut_ptr().cast(), len);
        assert_eq!(rc, 0, "registering a canvas");
    }
    let before = stats();
    record_daedalus(&mut gpu, &mut gpu_blocks);
    ffi::daedalus_flush();
    let after = stats();
    for (c, &r) in gpu.iter_mut().zip(register) {
        if !matches!(r, Reg::No) {
            assert_eq!(
                ffi::daedalus_unregister_memory(c.pixels.as_mut_ptr().cast()),
                0
            );
        }
    }

    if let Some(d) = first_difference(&reference, &ff) {
        panic!("reference vs FFmpeg: {d}");
    }
    if let Some(d) = first_difference(&gpu, &ff) {
        panic!("GPU vs FFmpeg: {d}");
    }
    for (i, (g, f)) in gpu_blocks.iter().zip(&ff_blocks).enumerate() {
        assert_eq!(
            g.coefs,
            f.coefs,
            "block {i} ({}, eob {}) after the call",
            g.tx.name(),
            g.eob
        );
    }
    assert_validation_clean();
    let mut delta = after;
    delta.gpu_calls -= before.gpu_calls;
    delta.cpu_calls -= before.cpu_calls;
    delta.submissions -= before.submissions;
    delta.dispatches -= before.dispatches;
    delta.flushes -= before.flushes;
    delta.flushes_overlap -= before.flushes_overlap;
    delta.deferred -= before.deferred;
    delta.immediate -= before.immediate;
    delta
}

fn canvases(rng: &mut Rng, count: usize) -> Vec<Canvas> {
    (0..count)
        .map(|_| {
            let (w, h) = (rng.range(48, 700) as usize, rng.range(40, 300) as usize);
            Canvas::new(rng, w, h)
        })
        .collect()
}

#[test]
fn every_transform_mixed_in_one_flush_is_bit_exact() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(20);
    for round in 0..4 {
        let cs = canvases(&mut rng, 6);
        let blocks = place_blocks(&mut rng, &cs, 3000, &Transform::ALL);
        // Half the canvases in place (imported where the device can), half copied.
        let register = [
            Reg::Whole,
            Reg::No,
            Reg::Whole,
            Reg::No,
            Reg::Whole,
            Reg::No,
        ];
        let d = check_three_ways(&cs, &blocks, &register);
        assert_eq!(
            d.deferred,
            blocks.len() as u64,
            "round {round}: every call is deferred"
        );
        assert_eq!(
            d.gpu_calls,
            blocks.len() as u64,
            "round {round}: every call ran on the GPU"
        );
        assert_eq!(d.cpu_calls, 0);
        assert_eq!(d.flushes, 1);
        assert_eq!(
            d.submissions, 1,
            "round {round}: one flush of non-overlapping blocks is one submission"
        );
        assert!(
            d.dispatches >= 14,
            "round {round}: {} dispatches for 18 kernels",
            d.dispatches
        );
    }
}

#[test]
fn each_transform_alone_with_all_input_kinds() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(21);
    for tx in Transform::ALL {
        let cs = canvases(&mut rng, 2);
        let blocks = place_blocks(&mut rng, &cs, 400, &[tx]);
        let d = check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
        assert_eq!(d.gpu_calls, blocks.len() as u64, "{}", tx.name());
    }
}

#[test]
fn extreme_pixels_and_coefficients() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(22);
    for fill in [0u8, 255] {
        let mut cs = canvases(&mut rng, 2);
        for c in &mut cs {
            c.pixels.fill(fill);
        }
        let mut blocks = place_blocks(&mut rng, &cs, 1500, &Transform::ALL);
        for b in &mut blocks {
            b.coefs = extreme_block(&mut rng, b.tx);
        }
        check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
    }
}

#[test]
fn overlapping_calls_run_in_order() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(23);
    let cs = canvases(&mut rng, 2);
    // The same places several times, and blocks of other sizes across them.
    let mut blocks = place_blocks(&mut rng, &cs, 300, &Transform::ALL);
    let again: Vec<Placed> = blocks
        .iter()
        .map(|b| {
            let (coefs, eob) = any_block(&mut rng, b.tx);
            Placed {
                coefs,
                eob,
                ..b.clone()
            }
        })
        .collect();
    blocks.extend(again);
    blocks.extend(place_blocks(&mut rng, &cs, 300, &Transform::ALL));
    let d = check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
    assert!(
        d.submissions >= 2,
        "overlapping calls need a second segment"
    );
    assert_eq!(d.gpu_calls, blocks.len() as u64);
}

#[test]
fn block_straddling_a_registered_region_runs_on_the_cpu() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(24);
    let cs = vec![Canvas::new(&mut rng, 64, 64)];
    let stride = cs[0].stride;
    // Register only the top half; blocks across the middle straddle it.
    let half = 32 * stride;
    let tx = Transform::ALL[5]; // 8x8 idct_idct
    let mut blocks: Vec<Placed> = (0..6)
        .map(|i| {
            let (coefs, eob) = any_block(&mut rng, tx);
            Placed {
                canvas: 0,
                x: i * 9,
                y: 28,
                tx,
                coefs,
                eob,
            }
        })
        .collect();
    blocks.push(Placed {
        canvas: 0,
        x: 0,
        y: 0,
        tx,
        coefs: realistic_block(&mut rng, tx),
        eob: 64,
    });
    let d = check_three_ways(&cs, &blocks, &[Reg::Prefix(half)]);
    assert_eq!(
        d.immediate, 6,
        "the six straddling blocks run at once on the CPU"
    );
    assert_eq!(d.gpu_calls, 1);
}

#[test]
fn batches_larger_than_the_first_buffers() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(25);
    // 32x32 blocks: 2 KiB of coefficients each, beyond the first 1 MiB arena.
    let cs = vec![
        Canvas::new(&mut rng, 1400, 1100),
        Canvas::new(&mut rng, 1400, 1100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 1400, &[Transform::ALL[13]]);
    assert!(blocks.len() > 1000);
    let d = check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
    assert_eq!(d.gpu_calls, blocks.len() as u64);
    assert!(
        d.flushes >= 2,
        "the first buffers are too small for this batch"
    );
    // The arena doubles when it overflows; once grown, the same batch is one submission.
    check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
    let d = check_three_ways(&cs, &blocks, &[Reg::Whole, Reg::No]);
    assert_eq!(d.submissions, 1, "{d:?}");
}

#[test]
fn threads_record_and_flush_independently() {
    let _l = lock();
    require_gpu();
    let dsp = ffmpeg_c();
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = Rng::new(100 + t);
                for _ in 0..3 {
                    let cs = canvases(&mut rng, 2);
                    let blocks = place_blocks(&mut rng, &cs, 500, &Transform::ALL);
                    let mut ff = clone_canvases(&cs);
                    let mut gpu = clone_canvases(&cs);
                    let (mut fb, mut gb) = (blocks.clone(), blocks.clone());
                    apply_ffmpeg(&dsp, &mut ff, &mut fb);
                    record_daedalus(&mut gpu, &mut gb);
                    ffi::daedalus_flush();
                    if let Some(d) = first_difference(&gpu, &ff) {
                        panic!("thread {t}: {d}");
                    }
                }
                assert_eq!(
                    ffi::daedalus_backend(),
                    ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU
                );
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a recording thread failed");
    }
    assert_validation_clean();
}

#[test]
fn unflushed_calls_complete_when_their_thread_ends() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(26);
    let cs = canvases(&mut rng, 1);
    let blocks = place_blocks(&mut rng, &cs, 200, &Transform::ALL);
    let dsp = ffmpeg_c();
    let mut ff = clone_canvases(&cs);
    apply_ffmpeg(&dsp, &mut ff, &mut blocks.clone());
    let (done, _) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let mut gpu = clone_canvases(&cs);
            record_daedalus(&mut gpu, &mut blocks.clone());
            gpu // no flush: the thread ends with the calls pending
        });
        (h.join().unwrap(), ())
    });
    if let Some(d) = first_difference(&done, &ff) {
        panic!("{d}");
    }
}

#[test]
fn sizes_are_what_ffmpeg_names() {
    assert_eq!(Transform::ALL[0].name(), "idct_idct_4x4_add");
    assert_eq!(Transform::ALL[4].name(), "iwht_iwht_4x4_add");
    assert_eq!(Transform::ALL[13].name(), "idct_idct_32x32_add");
    assert_eq!(TxSize::T16.n(), 16);
}

/// Registering, using and dropping frame after frame: Vulkan may reuse a destroyed buffer's
/// handle for the next import, and the stream must not mistake it for the old buffer.
#[test]
fn frame_after_frame_registration() {
    let _l = lock();
    require_gpu();
    let mut rng = Rng::new(27);
    for frame in 0..40 {
        let cs = vec![Canvas::new(&mut rng, 200, 120)];
        let blocks = place_blocks(&mut rng, &cs, 120, &Transform::ALL);
        // A registered frame, then an unregistered one: the second flush lets go of the first
        // frame's import, so the next import may get its handle.
        let reg = if frame % 2 == 0 { Reg::Whole } else { Reg::No };
        let d = check_three_ways(&cs, &blocks, &[reg]);
        assert_eq!(d.gpu_calls, blocks.len() as u64, "frame {frame}");
    }
}

/// Registrations that change between two calls on the same pixels: the second call must see
/// the first one's result, whichever path (in place or copied) each took.
#[test]
fn registration_changes_between_calls_on_the_same_pixels() {
    let _l = lock();
    require_gpu();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(28);
    let tx = Transform::ALL[5]; // 8x8 idct_idct
    for case in 0..3 {
        let canvas = Canvas::new(&mut rng, 64, 64);
        let (c1, c2) = (realistic_block(&mut rng, tx), realistic_block(&mut rng, tx));
        let at = 8 * canvas.stride + 8;
        let mut expected = canvas.pixels.clone();
        let (mut f1, mut f2) = (c1.clone(), c2.clone());
        unsafe {
            ffmpeg_itx(&dsp, tx)(
                expected[at..].as_mut_ptr(),
                canvas.stride as isize,
                f1.as_mut_ptr(),
                64,
            );
            ffmpeg_itx(&dsp, tx)(
                expected[at..].as_mut_ptr(),
                canvas.stride as isize,
                f2.as_mut_ptr(),
                64,
            );
        }
        let mut px = canvas.pixels.clone();
        let (base, len) = (px.as_mut_ptr(), px.len());
        let call = |coefs: &mut Vec<i16>, px: *mut u8| unsafe {
            ffi::daedalus_vp9_idct_idct_8x8_add(
                px.add(at),
                canvas.stride as isize,
                coefs.as_mut_ptr(),
                64,
            )
        };
        let (mut g1, mut g2) = (c1.clone(), c2.clone());
        match case {
            0 => {
                call(&mut g1, base);
                assert_eq!(ffi::daedalus_register_memory(base.cast(), len), 0);
                call(&mut g2, base);
            }
            1 => {
                assert_eq!(ffi::daedalus_register_memory(base.cast(), len), 0);
                call(&mut g1, base);
                assert_eq!(ffi::daedalus_unregister_memory(base.cast()), 0);
                call(&mut g2, base);
            }
            _ => {
                assert_eq!(ffi::daedalus_register_memory(base.cast(), len), 0);
                call(&mut g1, base);
                assert_eq!(ffi::daedalus_unregister_memory(base.cast()), 0);
                assert_eq!(ffi::daedalus_register_memory(base.cast(), len), 0);
                call(&mut g2, base);
            }
        }
        ffi::daedalus_flush();
        let _ = ffi::daedalus_unregister_memory(base.cast());
        assert!(
            px == expected,
            "case {case}: the second call did not see the first"
        );
    }
    assert_validation_clean();
}
