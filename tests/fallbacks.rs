//! Loud, safe fallbacks, each in a child process of its own (the state is process-wide) whose
//! stderr the parent reads:
//! - no usable Vulkan device (the loader pointed at a driver file that does not exist):
//!   exactly one warning, the CPU reference does the work, the output is FFmpeg's;
//! - a device that fails mid-stream (a failed submission, injected), also while the
//!   coefficient buffer is full: exactly one error, the pending work and everything after it
//!   runs on the CPU reference, the output is FFmpeg's, nothing crashes;
//! - a submission that fails after the GPU ran it (injected at each later step: reading back
//!   the copied blocks, reading the list of transforms left to the host, the wait itself as
//!   after a lost device): nothing is applied twice. Where the host can still complete the
//!   batch exactly (copied blocks from their untouched pixels) the output is FFmpeg's and no
//!   batch is damaged; a lost device while pixels in place were written is counted damaged
//!   (the decoder fails such a frame), and since the injected loss comes after the GPU
//!   finished, the output is still FFmpeg's only if those pixels were not written again;
//! - a device that cannot build the kernels one decoder alone uses (CDEF, the superblock loop
//!   filter; injected, met when first wanted): one warning each, those calls run on the CPU,
//!   everything else still on the device;
//! - a device that cannot build a kernel every decoder needs (injected, met at its first
//!   submission): exactly one error, that batch and everything after it runs on the CPU
//!   reference, the output is FFmpeg's.

mod common;

use common::*;
use daedalus::ffi;
use daedalus::gpu::testing::Step;
use daedalus::kernels::itx::{Transform, Tx1d, TxSize};
use std::process::Command;

const CHILD: &str = "DAEDALUS_FALLBACK_CHILD";

/// Records `blocks` over `cs` (the first canvas registered, the others copied), flushes,
/// compares with FFmpeg. `fail_after`: make the next submission fail (at `Step::Submit`) once
/// that many blocks are recorded.
fn decode_like_ffmpeg(cs: &[Canvas], blocks: &[Placed], fail_after: Option<usize>) {
    decode_failing_at(cs, blocks, fail_after.map(|n| (n, Step::Submit)))
}

/// [`decode_like_ffmpeg`], the failure at any step.
fn decode_failing_at(cs: &[Canvas], blocks: &[Placed], fail: Option<(usize, Step)>) {
    let arm = fail.map(|(after, step)| {
        (after, move || {
            daedalus::gpu::testing::fail_next_submission_at(step)
        })
    });
    decode_arming(cs, blocks, arm)
}

/// [`decode_like_ffmpeg`], with `arm.1` called once `arm.0` blocks are recorded.
fn decode_arming(cs: &[Canvas], blocks: &[Placed], arm: Option<(usize, impl Fn())>) {
    let fail_after = arm.as_ref().map(|a| a.0);
    let dsp = ffmpeg_c();
    let (mut ff, mut ours) = (clone_canvases(cs), clone_canvases(cs));
    apply_ffmpeg(&dsp, &mut ff, &mut blocks.to_vec());
    let p = ours[0].pixels.as_mut_ptr();
    assert_eq!(
        ffi::daedalus_register_memory(p.cast(), ours[0].pixels.len()),
        0
    );
    let mut ours_blocks = blocks.to_vec();
    let split = fail_after.unwrap_or(0).min(ours_blocks.len());
    record_daedalus(&mut ours, &mut ours_blocks[..split]);
    if let Some((_, arm)) = &arm {
        arm();
    }
    record_daedalus(&mut ours, &mut ours_blocks[split..]);
    ffi::daedalus_flush();
    assert_eq!(ffi::daedalus_unregister_memory(p.cast()), 0);
    if let Some(d) = first_difference(&ours, &ff) {
        panic!("differs from FFmpeg: {d}");
    }
}

fn no_device() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_CPU
    );
    let name = unsafe { std::ffi::CStr::from_ptr(ffi::daedalus_device_name()) };
    assert_eq!(name.to_str().unwrap(), "cpu");
    let mut rng = Rng::new(40);
    for _ in 0..3 {
        let cs = vec![
            Canvas::new(&mut rng, 300, 200),
            Canvas::new(&mut rng, 200, 100),
        ];
        let blocks = place_blocks(&mut rng, &cs, 800, &Transform::ALL);
        decode_like_ffmpeg(&cs, &blocks, None);
    }
    let s = stats();
    assert_eq!(s.gpu_calls, 0);
    assert_eq!(s.submissions, 0);
    assert!(
        s.cpu_calls > 2000,
        "the CPU reference ran the deferred calls"
    );
}

fn device_loss() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    let mut rng = Rng::new(41);
    // First a healthy batch.
    let cs = vec![
        Canvas::new(&mut rng, 300, 200),
        Canvas::new(&mut rng, 200, 100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 600, &Transform::ALL);
    decode_like_ffmpeg(&cs, &blocks, None);
    assert!(stats().gpu_calls > 0);
    // Then the device fails while 32x32 blocks fill the 1 MiB coefficient buffer (512 of
    // them): the early flush of the full buffer is the submission that fails.
    let big = Transform::new(TxSize::T32, Tx1d::Dct, Tx1d::Dct);
    let cs = vec![
        Canvas::new(&mut rng, 1400, 900),
        Canvas::new(&mut rng, 1400, 900),
    ];
    let mut blocks = place_blocks(&mut rng, &cs, 2000, &[big]);
    for b in &mut blocks {
        b.coefs = realistic_block(&mut rng, big);
        b.eob = 1024;
    }
    assert!(blocks.len() > 1000);
    let flushes_full = stats().flushes_full;
    decode_like_ffmpeg(&cs, &blocks, Some(100));
    assert!(
        stats().flushes_full > flushes_full,
        "the failure hit the early flush of a full buffer"
    );
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_CPU
    );
    // And everything after runs on the CPU reference.
    let before = stats();
    let cs = vec![Canvas::new(&mut rng, 300, 200)];
    let blocks = place_blocks(&mut rng, &cs, 500, &Transform::ALL);
    decode_like_ffmpeg(&cs, &blocks, None);
    let after = stats();
    assert_eq!(
        after.submissions, before.submissions,
        "no submission after the loss"
    );
    assert!(after.cpu_calls > before.cpu_calls);
}

/// A failure at `step`, after the GPU ran the batch, of a batch with blocks in place and
/// copied blocks. Returns the batches counted damaged.
fn fails_after_the_gpu_ran(step: Step) -> u64 {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    let mut rng = Rng::new(42);
    let cs = vec![
        Canvas::new(&mut rng, 300, 200),
        Canvas::new(&mut rng, 200, 100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 600, &Transform::ALL);
    assert!(
        blocks.iter().any(|b| b.canvas == 0) && blocks.iter().any(|b| b.canvas == 1),
        "blocks in place and copied ones"
    );
    let before = stats();
    decode_failing_at(&cs, &blocks, Some((0, step)));
    let after = stats();
    assert_eq!(after.submissions, before.submissions + 1, "one submission");
    assert!(after.cpu_calls > before.cpu_calls, "the CPU took over");
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_CPU
    );
    after.damaged_batches - before.damaged_batches
}

fn fail_unpack() {
    assert_eq!(
        fails_after_the_gpu_ran(Step::Unpack),
        0,
        "exact, not damaged"
    );
}

fn fail_overflow_list() {
    assert_eq!(
        fails_after_the_gpu_ran(Step::Overflow),
        0,
        "exact, not damaged"
    );
}

fn fail_wait() {
    assert_eq!(fails_after_the_gpu_ran(Step::Wait), 1, "damaged");
}

/// A panic while the recorder places a call (after its jobs joined the batch, before the batch
/// noted it), then more calls: every block still equals FFmpeg's (the call neither lost nor
/// applied twice), and the thread's later calls run at once.
fn panic_while_placing() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    let mut rng = Rng::new(43);
    let cs = vec![
        Canvas::new(&mut rng, 300, 200),
        Canvas::new(&mut rng, 200, 100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 600, &Transform::ALL);
    let before = stats();
    decode_arming(
        &cs,
        &blocks,
        Some((300, daedalus::gpu::testing::panic_while_placing)),
    );
    let after = stats();
    assert!(
        after.immediate - before.immediate >= 300,
        "the calls after the panic ran at once"
    );
    assert_eq!(
        after.damaged_batches, before.damaged_batches,
        "exact, not damaged"
    );
    assert_eq!(
        after.submissions, before.submissions,
        "nothing submitted after the panic"
    );
}

/// The device lost during the submission itself, which may come after part of the batch
/// started: the copied blocks are FFmpeg's (run on the CPU from their untouched pixels), the
/// pixels in place are not written again, and the batch is counted damaged.
fn submit_lost() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    let mut rng = Rng::new(44);
    let cs = vec![
        Canvas::new(&mut rng, 300, 200),
        Canvas::new(&mut rng, 200, 100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 600, &Transform::ALL);
    let dsp = ffmpeg_c();
    let (mut ff, mut ours) = (clone_canvases(&cs), clone_canvases(&cs));
    apply_ffmpeg(&dsp, &mut ff, &mut blocks.to_vec());
    let p = ours[0].pixels.as_mut_ptr();
    assert_eq!(
        ffi::daedalus_register_memory(p.cast(), ours[0].pixels.len()),
        0
    );
    let before = stats();
    daedalus::gpu::testing::fail_next_submission_at(Step::SubmitLost);
    record_daedalus(&mut ours, &mut blocks.to_vec());
    ffi::daedalus_flush();
    assert_eq!(ffi::daedalus_unregister_memory(p.cast()), 0);
    if let Some(d) = first_difference(&ours[1..], &ff[1..]) {
        panic!("the copied blocks differ from FFmpeg: {d}");
    }
    assert_eq!(
        stats().damaged_batches,
        before.damaged_batches + 1,
        "damaged"
    );
}

/// A panic after a flush executed its batch, before the batch was cleared: the batch never
/// runs again (every block is FFmpeg's, not filtered or added to twice), it is counted
/// damaged (what took effect is unknown to the recorder), and later calls run at once.
fn panic_after_execution() {
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    let mut rng = Rng::new(45);
    let cs = vec![
        Canvas::new(&mut rng, 300, 200),
        Canvas::new(&mut rng, 200, 100),
    ];
    let blocks = place_blocks(&mut rng, &cs, 600, &Transform::ALL);
    let before = stats();
    daedalus::gpu::testing::panic_next(daedalus::gpu::testing::Panic::AfterExecution);
    decode_like_ffmpeg(&cs, &blocks, None);
    let after = stats();
    assert_eq!(after.damaged_batches, before.damaged_batches + 1, "damaged");
    // And the thread's next calls run at once, exactly.
    let blocks = place_blocks(&mut rng, &cs, 200, &Transform::ALL);
    decode_like_ffmpeg(&cs, &blocks, None);
    assert!(stats().immediate - after.immediate >= 200, "run at once");
}

fn optional_kernels_fail() {
    daedalus::gpu::testing::fail_optional_kernels();
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device"
    );
    // dav1d's CDEF hook asks whether the device can run CDEF's kernel before taking CDEF
    // over: the first question builds it, which fails.
    assert!(!daedalus::batch::device_has_kernel(
        daedalus::kernels::Kernel::Cdef
    ));
    // The transforms still run on the device.
    let mut rng = Rng::new(42);
    let cs = vec![Canvas::new(&mut rng, 300, 200)];
    let blocks = place_blocks(&mut rng, &cs, 500, &Transform::ALL);
    decode_like_ffmpeg(&cs, &blocks, None);
    assert!(stats().gpu_calls > 0);
    // A frame of 3x2 superblocks (4:2:0) through the superblock call, against the reference
    // walk of the same masks: the passes run on the CPU, none is deferred.
    let (sb_cols, sb_rows) = (3, 2);
    let mut planes = superblock_planes(&mut rng, sb_cols, sb_rows);
    let mut expected = clone_canvases(&planes);
    let original: Vec<Vec<u8>> = planes.iter().map(|c| c.pixels.clone()).collect();
    let (cpu_calls, immediate) = (stats().cpu_calls, stats().immediate);
    for sb_row in 0..sb_rows {
        for sb_col in 0..sb_cols {
            let filter = RandomFilter::new(&mut rng);
            filter.filter_reference(&mut expected, (sb_row, sb_col));
            let taken = unsafe { filter.filter_daedalus(&mut planes, (sb_row, sb_col), None) };
            assert_eq!(taken, 0);
        }
    }
    ffi::daedalus_flush();
    if let Some(d) = first_difference(&planes, &expected) {
        panic!("differs from the reference walk: {d}");
    }
    assert!(
        planes.iter().zip(&original).all(|(c, o)| c.pixels != *o),
        "the filters changed every plane"
    );
    let s = stats();
    assert_eq!(s.deferred_lf_sb, 0, "no plane went to the device");
    assert_eq!(
        s.cpu_calls - cpu_calls,
        0,
        "nothing deferred ran on the CPU"
    );
    assert!(
        s.immediate - immediate >= (3 * sb_cols * sb_rows) as u64,
        "every plane ran at once"
    );
}

fn required_kernels_fail() {
    daedalus::gpu::testing::fail_required_kernels();
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_GPU,
        "needs a device (no pipeline is built before it is wanted)"
    );
    let mut rng = Rng::new(43);
    let cs = vec![Canvas::new(&mut rng, 300, 200)];
    let blocks = place_blocks(&mut rng, &cs, 500, &Transform::ALL);
    decode_like_ffmpeg(&cs, &blocks, None);
    assert_eq!(
        ffi::daedalus_backend(),
        ffi::DaedalusBackend::DAEDALUS_BACKEND_CPU,
        "the device is given up"
    );
    let s = stats();
    assert_eq!(s.gpu_calls, 0, "nothing ran on the device");
    assert!(s.cpu_calls >= 500, "the CPU reference ran the batch");
}

fn child(scenario: &str) {
    match scenario {
        "no-device" => no_device(),
        "device-loss" => device_loss(),
        "fail-unpack" => fail_unpack(),
        "fail-overflow-list" => fail_overflow_list(),
        "fail-wait" => fail_wait(),
        "panic-while-placing" => panic_while_placing(),
        "submit-lost" => submit_lost(),
        "panic-after-execution" => panic_after_execution(),
        "optional-kernels-fail" => optional_kernels_fail(),
        "required-kernels-fail" => required_kernels_fail(),
        other => panic!("unknown scenario {other}"),
    }
    println!("child ok");
}

/// Runs a scenario in a child process; returns its stderr.
fn run(scenario: &str, env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.env(CHILD, scenario)
        .env_remove("DAEDALUS_DEVICE")
        .env_remove("DAEDALUS")
        .env("DAEDALUS_LOG", "warn");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the test as a child");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{scenario}: child failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("child ok"),
        "{scenario}: child did not finish:\n{stdout}"
    );
    stderr
}

fn lines<'a>(stderr: &'a str, prefix: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.starts_with(prefix)).collect()
}

/// The one line of `stderr` that starts with `prefix` (fails unless there is exactly one).
fn only_line<'a>(stderr: &'a str, prefix: &str) -> &'a str {
    let found = lines(stderr, prefix);
    assert_eq!(
        found.len(),
        1,
        "exactly one \"{prefix}\" line expected, stderr was:\n{stderr}"
    );
    found[0]
}

fn main() {
    if let Ok(scenario) = std::env::var(CHILD) {
        child(&scenario);
        return;
    }
    let missing = "/nonexistent/daedalus-test-icd.json";
    let stderr = run(
        "no-device",
        &[("VK_ICD_FILENAMES", missing), ("VK_DRIVER_FILES", missing)],
    );
    let warning = only_line(&stderr, "daedalus: warning:");
    assert!(
        warning.contains("CPU reference"),
        "the warning says what happens: {warning}"
    );
    assert!(lines(&stderr, "daedalus: error:").is_empty(), "{stderr}");
    println!("no device: one warning, CPU reference, FFmpeg's output: ok");

    let stderr = run("device-loss", &[]);
    let error = only_line(&stderr, "daedalus: error:");
    assert!(
        error.contains("CPU reference"),
        "the error says what happens: {error}"
    );
    println!("device loss: one error, CPU reference from then on, FFmpeg's output: ok");

    for scenario in ["fail-unpack", "fail-overflow-list"] {
        let stderr = run(scenario, &[]);
        let error = only_line(&stderr, "daedalus: error:");
        assert!(
            error.contains("failure injected") && error.contains("CPU reference"),
            "the error says what failed and what happens: {error}"
        );
    }
    println!("a failure after the GPU ran, before the host read it back: one error, nothing applied twice, FFmpeg's output: ok");
    let stderr = run("fail-wait", &[]);
    let errors = lines(&stderr, "daedalus: error:");
    assert_eq!(errors.len(), 2, "{stderr}");
    assert!(errors[0].contains("failure injected") && errors[0].contains("CPU reference"));
    assert!(errors[1].contains("pixels in place"), "{}", errors[1]);
    println!("a lost device after the GPU wrote pixels in place: they are not written again, the batch is reported damaged: ok");

    let stderr = run("panic-while-placing", &[]);
    let error = only_line(&stderr, "daedalus: error:");
    assert!(
        error.contains("internal error while recording") && error.contains("at once on the CPU"),
        "the error says what happens: {error}"
    );
    println!("a panic while placing a call: one error, nothing lost or applied twice, FFmpeg's output: ok");

    let stderr = run("submit-lost", &[]);
    let errors = lines(&stderr, "daedalus: error:");
    assert_eq!(errors.len(), 2, "{stderr}");
    assert!(errors[1].contains("pixels in place"), "{}", errors[1]);
    println!("a device lost in the submission: copied blocks exact, nothing written twice, the batch reported damaged: ok");

    let stderr = run("panic-after-execution", &[]);
    let error = only_line(&stderr, "daedalus: error:");
    assert!(error.contains("internal error while recording"), "{error}");
    println!("a panic after a batch executed: it never runs again, reported damaged: ok");

    let stderr = run("optional-kernels-fail", &[]);
    let warnings = lines(&stderr, "daedalus: warning:");
    assert_eq!(
        warnings.len(),
        2,
        "one warning per kernel, stderr was:\n{stderr}"
    );
    for (w, stem) in warnings.iter().zip(["cdef", "lf_sb"]) {
        assert!(
            w.contains(&format!("shader {stem}")) && w.contains("stay on the CPU"),
            "the warning says which kernel and what happens: {w}"
        );
    }
    assert!(lines(&stderr, "daedalus: error:").is_empty(), "{stderr}");
    println!("optional kernels not built: one warning each, those calls on the CPU: ok");

    let stderr = run("required-kernels-fail", &[]);
    let error = only_line(&stderr, "daedalus: error:");
    assert!(
        error.contains("failure injected") && error.contains("CPU reference"),
        "the error says what failed and what happens: {error}"
    );
    assert!(lines(&stderr, "daedalus: warning:").is_empty(), "{stderr}");
    println!("a required kernel not built: one error, CPU reference, FFmpeg's output: ok");
}
