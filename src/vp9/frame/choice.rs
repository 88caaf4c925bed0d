//! `DAEDALUS_PATH` unset: whether the frame path or FFmpeg's own decode is faster here, measured
//! on the decode itself, per frame-size class, by frames per second.
//!
//! Which one wins depends on the device, the frame size, the decoder's threads and how fast the
//! CPU side is (FFmpeg's SIMD or its C), so nothing measured apart from the decode can say. Each
//! class's first frames are a trial in blocks of consecutive frames: the frame path first, to
//! warm up (pipelines, memory, the first key frame), then two blocks each way in
//! [`SCHEDULE`]'s order, so that a scene growing harder weighs on both alike. A block is timed
//! from the end of its `settle`-th frame to the end of its last: with frame threads, how fast
//! the decoder delivered frames once the frames of the block before had left it. The frame path
//! is chosen where its blocks took at most [`MARGIN`] of FFmpeg's time ([`MARGIN_THREADED`] with
//! frame threads), else FFmpeg; where its
//! first block took over [`EARLY_STOP`] times FFmpeg's, the trial ends there. The frames
//! between the trial's last and its decision (frame threads) go to FFmpeg.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Who reconstructs a frame.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pick {
    /// The frame path: parsed whole, reconstructed on the GPU.
    Frame,
    /// FFmpeg's own decode, block by block (the provider declines the frame).
    Ffmpeg,
}

/// A trial's blocks in order: the warm-up, then FFmpeg and the frame path in ABBA order (each
/// as often early as late; each switch costs a decoder with frame threads a pipeline's drain).
const SCHEDULE: [Pick; 5] = [
    Pick::Frame,
    Pick::Ffmpeg,
    Pick::Frame,
    Pick::Frame,
    Pick::Ffmpeg,
];

/// The frame path is chosen only where it took at most this share of FFmpeg's time, so that
/// a measurement's noise does not make the default slower than FFmpeg.
pub const MARGIN: f64 = 0.95;

/// The same with frame threads, where a trial measures less well: on the NVIDIA H200 host with
/// 17 frame threads, trials put the frame path at 0.84 to 2.4 of FFmpeg's time in decodes
/// that ran it at 1.1 to 1.35 times FFmpeg's time from start to end (docs/benchmarks.md).
pub const MARGIN_THREADED: f64 = 0.8;

/// Where the frame path's first measured block took more than this multiple of FFmpeg's, the
/// trial stops there: a device that slow costs dearly for every frame it tries. (Not lower:
/// one block's time swings with what its frames hold; at 1.25, a 720p trial on the H200 host
/// once stopped at 1.30 where its full run gave 0.75.)
pub const EARLY_STOP: f64 = 2.0;

/// Frame-size classes by luma pixels: up to 640x640, 1280x800 (720p), 2048x1152 (1080p), more.
const CLASSES: [(u64, &str); 4] = [
    (640 * 640, "sd"),
    (1280 * 800, "hd"),
    (2048 * 1152, "fhd"),
    (u64::MAX, "uhd"),
];

/// The log's key of each class's decision (said once).
const DECIDED: [&str; 4] = ["trial sd", "trial hd", "trial fhd", "trial uhd"];

/// The class of a `width` x `height` frame.
pub fn class_of(width: i32, height: i32) -> usize {
    let pixels = width.max(0) as u64 * height.max(0) as u64;
    CLASSES
        .iter()
        .position(|&(max, _)| pixels <= max)
        .expect("the last class takes every size")
}

/// The outcome of a class's trial.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Decision {
    pub pick: Pick,
    /// The frame path's time over FFmpeg's, for as many frames.
    pub ratio: f64,
}

/// A frame of a trial block, until it ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ticket {
    class: usize,
    block: usize,
}

/// One class's trial.
#[derive(Debug)]
pub struct Trial {
    /// Frames per block, and how many of a block's first frames to end are the switch (the
    /// frames of the block before still in flight) and go untimed.
    block_frames: usize,
    settle: usize,
    margin: f64,
    /// Frames handed out so far.
    handed: usize,
    /// When each block's frames ended.
    ends: [Vec<Instant>; SCHEDULE.len()],
    decided: Option<Decision>,
}

impl Trial {
    /// Blocks of `block_frames`, their first `settle` ends untimed; the frame path kept where
    /// it took at most `margin` of FFmpeg's time.
    pub fn new(block_frames: usize, settle: usize, margin: f64) -> Trial {
        let block_frames = block_frames.max(1);
        Trial {
            block_frames,
            margin,
            settle: settle.min(block_frames / 2),
            handed: 0,
            ends: Default::default(),
            decided: None,
        }
    }

    /// Who takes the next frame, and the block it times (`None` once past the trial).
    pub fn next(&mut self) -> (Pick, Option<usize>) {
        if let Some(d) = self.decided {
            return (d.pick, None);
        }
        let block = self.handed / self.block_frames;
        self.handed += 1;
        match SCHEDULE.get(block) {
            Some(&pick) => (pick, Some(block)),
            // Waiting for the trial's last frames to end: the safe choice meanwhile.
            None => (Pick::Ffmpeg, None),
        }
    }

    /// A frame of `block` ended at `at`; decides once every block's frames have.
    pub fn end(&mut self, block: usize, at: Instant) {
        let Some(ends) = self.ends.get_mut(block) else {
            return;
        };
        ends.push(at);
        if self.decided.is_none() {
            self.decided = self.decide();
        }
    }

    /// Once every block's frames have ended, or the first three's where the frame path was
    /// far slower. A block's time runs from the end of its `settle`-th frame (without any,
    /// from the end of the blocks before: frames may end out of order with frame threads) to
    /// the end of its last.
    fn decide(&self) -> Option<Decision> {
        let done = self
            .ends
            .iter()
            .take_while(|e| e.len() >= self.block_frames)
            .count();
        let (mut frame, mut ffmpeg) = (Duration::ZERO, Duration::ZERO);
        let mut before: Option<Instant> = None;
        for (b, pick) in SCHEDULE.iter().enumerate().take(done) {
            let mut ends = self.ends[b].clone();
            ends.sort();
            let last = *ends.last().expect("a block whose frames ended");
            let start = match (self.settle, before) {
                (0, Some(t)) => t,
                (0, None) => last,
                (n, _) => ends[n - 1],
            };
            before = Some(before.map_or(last, |t| t.max(last)));
            let took = last.saturating_duration_since(start);
            match (b, pick) {
                (0, _) => {} // the warm-up
                (_, Pick::Frame) => frame += took,
                (_, Pick::Ffmpeg) => ffmpeg += took,
            }
        }
        let ratio = frame.as_secs_f64() / ffmpeg.as_secs_f64().max(1e-9);
        let pick = match done {
            3 if ratio > EARLY_STOP => Pick::Ffmpeg,
            n if n < SCHEDULE.len() => return None,
            _ if ratio <= self.margin => Pick::Frame,
            _ => Pick::Ffmpeg,
        };
        Some(Decision { pick, ratio })
    }

    pub fn decision(&self) -> Option<Decision> {
        self.decided
    }
}

/// The trials of this process, per class (decoders of one size class share one: the
/// measurement is of the device and the decoder, not of a stream).
static TRIALS: Mutex<[Option<Trial>; CLASSES.len()]> = Mutex::new([None, None, None, None]);

/// Decoder contexts that choose per frame: a decoder with frame threads has one per thread,
/// and a block should outlast the frames they have in flight.
static CHOOSING: AtomicUsize = AtomicUsize::new(0);

pub fn decoder_attached() {
    CHOOSING.fetch_add(1, Relaxed);
}

pub fn decoder_detached() {
    CHOOSING.fetch_sub(1, Relaxed);
}

/// A new trial: blocks of `DAEDALUS_TRIAL_FRAMES` (else 16) frames, or two per choosing
/// decoder context where more; as many frames as those contexts untimed per block.
fn new_trial() -> Trial {
    let contexts = CHOOSING.load(Relaxed).max(1);
    let frames = crate::config::get().trial_frames.unwrap_or(16);
    let margin = if contexts > 1 {
        MARGIN_THREADED
    } else {
        MARGIN
    };
    Trial::new(frames.max(2 * contexts), contexts, margin)
}

/// Frames handed out under `DAEDALUS_TEST_ALTERNATE`.
static ALTERNATED: AtomicUsize = AtomicUsize::new(0);

/// Who takes the next frame of `class`, and what to hand back at its end.
pub fn pick(class: usize) -> (Pick, Option<Ticket>) {
    if let Some(n) = crate::config::get().test_alternate {
        let pick = match (ALTERNATED.fetch_add(1, Relaxed) / n.max(1)) % 2 {
            0 => Pick::Frame,
            _ => Pick::Ffmpeg,
        };
        return (pick, None);
    }
    let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let trial = trials[class].get_or_insert_with(new_trial);
    let (pick, block) = trial.next();
    (pick, block.map(|block| Ticket { class, block }))
}

/// The frame of `ticket` ended now.
pub fn ended(ticket: Ticket) {
    let now = Instant::now();
    let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(trial) = trials[ticket.class].as_mut() {
        let before = trial.decision();
        trial.end(ticket.block, now);
        if let (None, Some(d)) = (before, trial.decision()) {
            let chosen = match d.pick {
                Pick::Frame => "the frame path",
                Pick::Ffmpeg => "FFmpeg's own decode",
            };
            crate::log::once(
                crate::log::Level::Info,
                DECIDED[ticket.class],
                format_args!(
                    "{}-class frames: {chosen} from now on (the frame path took {:.2} of \
                     FFmpeg's time in the trial)",
                    CLASSES[ticket.class].1, d.ratio,
                ),
            );
        }
    }
}

/// `trial=` of the stats line: per class tried, `class:frame|ffmpeg:ratio`, or
/// `class:undecided` where the decode ended first; `-` where none was.
pub fn describe() -> String {
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let tried: Vec<String> = trials
        .iter()
        .zip(CLASSES)
        .filter_map(|(t, (_, name))| {
            let t = t.as_ref()?;
            Some(match t.decision() {
                Some(Decision { pick, ratio }) => {
                    let pick = if pick == Pick::Frame {
                        "frame"
                    } else {
                        "ffmpeg"
                    };
                    format!("{name}:{pick}:{ratio:.2}")
                }
                None => format!("{name}:undecided"),
            })
        })
        .collect();
    if tried.is_empty() {
        "-".into()
    } else {
        tried.join(",")
    }
}

/// `path=` where decoders choose: `frame` where some class chose the frame path, `ffmpeg`
/// where every class decided chose FFmpeg, `trial` where none decided.
pub fn path() -> &'static str {
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let picks: Vec<Pick> = trials
        .iter()
        .filter_map(|t| t.as_ref()?.decision().map(|d| d.pick))
        .collect();
    if picks.contains(&Pick::Frame) {
        "frame"
    } else if picks.is_empty() {
        "trial"
    } else {
        "ffmpeg"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out a trial's frames and ends each `took(pick)` after the one before.
    fn run(trial: &mut Trial, frames: u64, took: impl Fn(Pick) -> u64) -> Vec<Pick> {
        let start = Instant::now();
        let mut at = start;
        let mut picks = Vec::new();
        for _ in 0..frames {
            let (pick, block) = trial.next();
            at += Duration::from_millis(took(pick));
            if let Some(block) = block {
                trial.end(block, at);
            }
            picks.push(pick);
        }
        picks
    }

    #[test]
    fn classes_split_by_frame_size() {
        assert_eq!(class_of(640, 272), 0);
        assert_eq!(class_of(1280, 720), 1);
        assert_eq!(class_of(1920, 1080), 2);
        assert_eq!(class_of(3840, 2160), 3);
        assert_eq!(class_of(-1, 5), 0);
    }

    #[test]
    fn the_trial_runs_its_blocks_then_keeps_the_faster() {
        let mut trial = Trial::new(2, 1, MARGIN);
        let picks = run(&mut trial, 12, |p| if p == Pick::Frame { 5 } else { 10 });
        use Pick::*;
        assert_eq!(
            picks,
            [
                Frame, Frame, Ffmpeg, Ffmpeg, Frame, Frame, Frame, Frame, Ffmpeg, Ffmpeg, Frame,
                Frame
            ]
        );
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Frame);
        assert!((d.ratio - 0.5).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn a_slower_frame_path_stops_the_trial_early() {
        let mut trial = Trial::new(3, 1, MARGIN);
        let picks = run(&mut trial, 10, |p| if p == Pick::Frame { 21 } else { 10 });
        use Pick::*;
        assert_eq!(picks[6..], [Frame, Frame, Frame, Ffmpeg]);
        let d = trial.decision().expect("decided after three blocks");
        assert_eq!(d.pick, Ffmpeg);
        assert!((d.ratio - 2.1).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn a_frame_path_within_the_margin_is_not_chosen() {
        let mut trial = Trial::new(3, 0, MARGIN);
        run(&mut trial, 20, |p| if p == Pick::Frame { 97 } else { 100 });
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Pick::Ffmpeg, "{d:?}");
        assert_eq!(trial.next(), (Pick::Ffmpeg, None));
    }

    /// With frame threads the frame path must win by more.
    #[test]
    fn frame_threads_ask_a_wider_margin() {
        let mut trial = Trial::new(8, 4, MARGIN_THREADED);
        run(&mut trial, 40, |p| if p == Pick::Frame { 85 } else { 100 });
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Pick::Ffmpeg, "{d:?}");
        let mut trial = Trial::new(8, 1, MARGIN);
        run(&mut trial, 40, |p| if p == Pick::Frame { 85 } else { 100 });
        assert_eq!(trial.decision().expect("decided").pick, Pick::Frame);
    }

    /// With frame threads the trial's last frames end after later frames were handed out:
    /// those go to FFmpeg until the decision. A block's first frames to end (the switch) go
    /// untimed, in the order they ended.
    #[test]
    fn undecided_frames_go_to_ffmpeg_and_the_switch_is_not_timed() {
        let mut trial = Trial::new(4, 2, MARGIN_THREADED);
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let handed: Vec<_> = (0..24).map(|_| trial.next()).collect();
        assert_eq!(handed[20], (Pick::Ffmpeg, None));
        assert_eq!(handed[23], (Pick::Ffmpeg, None));
        // Each block: two frames late (the switch, 50 ms), then 10 ms apart, FFmpeg's blocks
        // then 20 ms apart; a frame of each ends out of order.
        let mut at = 0;
        for (block, &pick) in SCHEDULE.iter().enumerate() {
            let step = if pick == Pick::Frame { 10 } else { 20 };
            let mut ends = vec![at + 50, at + 50, at + 50 + 2 * step, at + 50 + step];
            at += 50 + 2 * step;
            if block == 4 {
                let last = ends.pop().expect("four");
                ends.iter().for_each(|&e| trial.end(block, ms(e)));
                assert_eq!(
                    trial.decision(),
                    None,
                    "a frame of the last block is running"
                );
                ends = vec![last];
            }
            ends.iter().for_each(|&e| trial.end(block, ms(e)));
        }
        let d = trial.decision().expect("decided");
        assert!((d.ratio - 0.5).abs() < 1e-9, "{d:?}");
        assert_eq!(trial.next(), (Pick::Frame, None));
    }
}
