//! Frame threads: a published batch runs on the GPU while its thread records on; another
//! thread that awaits its submission reads finished pixels, and the work recorded after it
//! on the same pixels still comes after it.

mod common;

use common::*;
use daedalus::stats::{self, COUNTERS};
use daedalus::{batch, ffi};
use std::sync::Mutex;

/// The counters are the process's: one test at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn a_published_batch_is_complete_for_a_reader_that_awaits_it() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    require_gpu();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(61);
    for round in 0..4 {
        let cs = vec![
            Canvas::new(&mut rng, 320, 192),
            Canvas::new(&mut rng, 256, 128),
        ];
        let first = place_blocks(&mut rng, &cs, 300, &daedalus::kernels::itx::Transform::ALL);
        let second = place_blocks(&mut rng, &cs, 300, &daedalus::kernels::itx::Transform::ALL);
        // FFmpeg's result after the first blocks, and after both.
        let mut after_first = clone_canvases(&cs);
        apply_ffmpeg(&dsp, &mut after_first, &mut first.clone());
        let mut after_both = clone_canvases(&after_first);
        apply_ffmpeg(&dsp, &mut after_both, &mut second.clone());

        let mut ours = clone_canvases(&cs);
        for c in &mut ours {
            let registered =
                ffi::daedalus_register_memory(c.pixels.as_mut_ptr().cast(), c.pixels.len());
            assert_eq!(registered, 0);
        }
        let unattended = stats::read(&COUNTERS.unattended_submissions);
        record_daedalus(&mut ours, &mut first.clone());
        let serial = batch::publish();
        assert_ne!(serial, 0, "round {round}: the batch was left running");
        assert_eq!(
            stats::read(&COUNTERS.unattended_submissions),
            unattended + 1
        );
        // Recorded while the first batch may still run; not submitted yet.
        record_daedalus(&mut ours, &mut second.clone());

        // Another thread (a frame thread reading a published row) waits, then reads.
        let planes: Vec<(usize, usize)> = ours
            .iter()
            .map(|c| (c.pixels.as_ptr() as usize, c.pixels.len()))
            .collect();
        let seen = std::thread::spawn(move || {
            batch::await_submission(serial);
            planes
                .iter()
                .map(|&(p, len)| {
                    unsafe { std::slice::from_raw_parts(p as *const u8, len) }.to_vec()
                })
                .collect::<Vec<_>>()
        })
        .join()
        .expect("reader thread");
        for (i, (pixels, want)) in seen.iter().zip(&after_first).enumerate() {
            if let Some(p) = pixels.iter().zip(&want.pixels).position(|(a, b)| a != b) {
                panic!("round {round}: canvas {i} after the await differs at byte {p}");
            }
        }

        ffi::daedalus_flush();
        if let Some(d) = first_difference(&ours, &after_both) {
            panic!("round {round}: after the flush: {d}");
        }
        for c in &mut ours {
            assert_eq!(
                ffi::daedalus_unregister_memory(c.pixels.as_mut_ptr().cast()),
                0
            );
        }
    }
    assert_validation_clean();
}

/// A thread that ends right after publishing completes its batch before its GPU objects go:
/// a reader of the row then finds it complete.
#[test]
fn a_thread_that_ends_after_publishing_completes_its_batch() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    require_gpu();
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(62);
    let cs = vec![Canvas::new(&mut rng, 320, 192)];
    let blocks = place_blocks(&mut rng, &cs, 300, &daedalus::kernels::itx::Transform::ALL);
    let mut want = clone_canvases(&cs);
    apply_ffmpeg(&dsp, &mut want, &mut blocks.clone());
    let mut ours = clone_canvases(&cs);
    let (p, len) = (ours[0].pixels.as_mut_ptr() as usize, ours[0].pixels.len());
    assert_eq!(ffi::daedalus_register_memory(p as *mut _, len), 0);
    let stride = ours[0].stride;
    let serial = std::thread::spawn(move || {
        // Record straight into the registered pixels of the main thread's canvas.
        for b in &mut blocks.clone() {
            let at = b.y * stride + b.x;
            unsafe {
                daedalus_itx(b.tx)(
                    (p as *mut u8).add(at),
                    stride as isize,
                    b.coefs.as_mut_ptr(),
                    b.eob,
                )
            };
        }
        batch::publish()
    })
    .join()
    .expect("publishing thread");
    assert_ne!(serial, 0);
    batch::await_submission(serial);
    if let Some(d) = first_difference(&ours, &want) {
        panic!("after the publishing thread ended: {d}");
    }
    assert_eq!(ffi::daedalus_unregister_memory(p as *mut _), 0);
    assert_validation_clean();
}
