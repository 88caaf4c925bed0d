//! Failure injection for the tests of the fallback paths.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::OnceLock;

/// The step of a submission at which an injected failure strikes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The queue submission fails: nothing of the batch reaches the GPU.
    Submit,
    /// The queue submission fails with the device lost, which the driver may report
    /// after part of the batch started: nothing of it runs here.
    SubmitLost,
    /// The GPU runs the whole batch, then the wait for it fails as after a lost device
    /// (which may strike with any part of the batch written).
    Wait,
    /// The GPU ran; reading its results back (the copied blocks) then fails.
    Unpack,
    /// The GPU ran; reading the list of transforms it left to the host then fails.
    Overflow,
    /// The submitting code panics before the queue submission, as a bug there would make it:
    /// nothing of the batch reaches the GPU.
    Panic,
}

impl Step {
    pub(crate) const ALL: [Step; 6] = [
        Step::Submit,
        Step::SubmitLost,
        Step::Wait,
        Step::Unpack,
        Step::Overflow,
        Step::Panic,
    ];

    fn name(self) -> &'static str {
        match self {
            Step::Submit => "submit",
            Step::SubmitLost => "submit-lost",
            Step::Wait => "wait",
            Step::Unpack => "unpack",
            Step::Overflow => "overflow",
            Step::Panic => "panic",
        }
    }
}

/// 0: none; else 1 + the index of a step in [`Step::ALL`].
static FAIL_NEXT_SUBMISSION: AtomicU8 = AtomicU8::new(0);
static FAIL_OPTIONAL_KERNELS: AtomicBool = AtomicBool::new(false);
static FAIL_REQUIRED_KERNELS: AtomicBool = AtomicBool::new(false);

/// Makes the device fail to build the kernels one decoder alone uses (CDEF, the
/// superblock loop filters) when they are first wanted, as a driver that cannot compile
/// them would.
pub fn fail_optional_kernels() {
    FAIL_OPTIONAL_KERNELS.store(true, Ordering::SeqCst);
}

pub(super) fn optional_kernels_fail() -> bool {
    FAIL_OPTIONAL_KERNELS.load(Ordering::SeqCst) || env_fails("optional")
}

/// `DAEDALUS_TEST_FAIL_KERNELS=optional`: the optional kernels fail to build, as above, in
/// a decoder's process (the end-to-end tests of the frame path's fallback).
fn env_fails(which: &str) -> bool {
    static SETTING: OnceLock<Option<String>> = OnceLock::new();
    SETTING
        .get_or_init(|| std::env::var("DAEDALUS_TEST_FAIL_KERNELS").ok())
        .as_deref()
        == Some(which)
}

/// Makes the device fail to build every other kernel when it is first wanted.
pub fn fail_required_kernels() {
    FAIL_REQUIRED_KERNELS.store(true, Ordering::SeqCst);
}

pub(super) fn required_kernels_fail() -> bool {
    FAIL_REQUIRED_KERNELS.load(Ordering::SeqCst)
}

/// Makes the next queue submission (of any thread) fail as a lost device would.
pub fn fail_next_submission() {
    fail_next_submission_at(Step::Submit);
}

/// Makes the next queue submission (of any thread) fail at `step`. Steps after the
/// submission itself strike the recorder's submissions only (others ignore them).
pub fn fail_next_submission_at(step: Step) {
    let index = Step::ALL.iter().position(|&s| s == step).unwrap_or(0);
    FAIL_NEXT_SUBMISSION.store(1 + index as u8, Ordering::SeqCst);
}

/// Where the recorder panics next, as a bug there would make it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Panic {
    /// A call's jobs joined the batch, the batch has not noted it yet.
    WhilePlacing = 1,
    /// A flush executed the batch, and has not cleared it yet.
    AfterExecution = 2,
}

/// 0: none; else a [`Panic`].
static PANIC_NEXT: AtomicU8 = AtomicU8::new(0);

pub fn panic_next(at: Panic) {
    PANIC_NEXT.store(at as u8, Ordering::SeqCst);
}

/// Makes the next call the recorder places panic while placing it.
pub fn panic_while_placing() {
    panic_next(Panic::WhilePlacing);
}

pub(crate) fn take_panic(at: Panic) -> bool {
    PANIC_NEXT.load(Ordering::Relaxed) == at as u8
        && PANIC_NEXT
            .compare_exchange(at as u8, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
}

/// Submissions tried so far in this process (for `DAEDALUS_TEST_FAIL_SUBMISSION`).
static SUBMISSIONS_TRIED: AtomicU64 = AtomicU64::new(0);

/// `DAEDALUS_TEST_FAIL_SUBMISSION=N`: the process's N-th queue submission fails as a lost
/// device would (a submission of several frames on the frame path counts as one a frame), so
/// that the end-to-end tests reach the fallbacks through FFmpeg, parts of frames in flight
/// among them; `DAEDALUS_TEST_FAIL_STEP` names the step (`submit`, the default,
/// `submit-lost`, `wait`, `unpack`, `overflow`, `panic`).
fn failing_submission() -> Option<(u64, Step)> {
    static AT: OnceLock<Option<(u64, Step)>> = OnceLock::new();
    *AT.get_or_init(|| {
        let at = std::env::var("DAEDALUS_TEST_FAIL_SUBMISSION")
            .ok()
            .and_then(|v| v.trim().parse().ok())?;
        let step = match std::env::var("DAEDALUS_TEST_FAIL_STEP") {
            Ok(name) => match Step::ALL.iter().find(|s| s.name() == name.trim()) {
                Some(&step) => step,
                None => {
                    // A test that injects nothing must not pass for one that did.
                    crate::error!("DAEDALUS_TEST_FAIL_STEP={name} names no step");
                    return None;
                }
            },
            Err(_) => Step::Submit,
        };
        Some((at, step))
    })
}

/// Called once per queue submission, which counts as `units`: the step of it that is to
/// fail, if any. Steps after the submission itself are taken only by submissions that meet
/// them (`meets`); another kind leaves an armed one for the next of those.
pub(super) fn take_injected_failure(meets: &[Step], units: u64) -> Option<Step> {
    let before = SUBMISSIONS_TRIED.fetch_add(units, Ordering::SeqCst);
    let applies = |step: Step| matches!(step, Step::Submit | Step::Panic) || meets.contains(&step);
    let armed = FAIL_NEXT_SUBMISSION.load(Ordering::SeqCst);
    if armed != 0 {
        let step = Step::ALL[armed as usize - 1];
        return (applies(step)
            && FAIL_NEXT_SUBMISSION
                .compare_exchange(armed, 0, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok())
        .then_some(step);
    }
    failing_submission().and_then(|(at, step)| {
        (before < at && at <= before + units && applies(step)).then_some(step)
    })
}
