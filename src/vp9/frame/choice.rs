//! `DAEDALUS_PATH` unset: whether the frame path or FFmpeg's own decode is faster here, measured
//! on the decode itself, per frame-size class, by frames per second.
//!
//! Which one wins depends on the device, the frame size, the decoder's threads and how fast the
//! CPU side is (FFmpeg's SIMD or its C), so nothing measured apart from the decode can say. Each
//! class's first frames are a trial in blocks of consecutive frames: the frame path first, to
//! warm up (pipelines, memory, the first key frame), then FFmpeg, the frame path twice and
//! FFmpeg again, so that a scene growing harder weighs on both alike. A block lasts from the
//! end of the block before to the end of its last frame: with frame threads, the time the
//! decoder took to deliver its frames. The frame path is chosen where its blocks took at most
//! [`MARGIN`] of FFmpeg's time, else FFmpeg; the frames between the trial's last and its
//! decision (frame threads) go to FFmpeg.

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

/// A trial's blocks in order: the warm-up, then FFmpeg and the frame path in ABBA order.
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

/// Where the frame path's first measured block took more than this multiple of FFmpeg's, the
/// trial stops there: a device that slow costs the decode dearly for every frame it tries.
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
    /// Frames per block.
    block_frames: u64,
    /// Frames handed out so far.
    handed: u64,
    /// Per block: how many of its frames ended, and when the last of them did.
    ended: [u64; SCHEDULE.len()],
    last_end: [Option<Instant>; SCHEDULE.len()],
    decided: Option<Decision>,
}

impl Trial {
    pub fn new(block_frames: u64) -> Trial {
        Trial {
            block_frames: block_frames.max(1),
            handed: 0,
            ended: [0; SCHEDULE.len()],
            last_end: [None; SCHEDULE.len()],
            decided: None,
        }
    }

    /// Who takes the next frame, and the block it times (`None` once past the trial).
    pub fn next(&mut self) -> (Pick, Option<usize>) {
        if let Some(d) = self.decided {
            return (d.pick, None);
        }
        let block = (self.handed / self.block_frames) as usize;
        self.handed += 1;
        match SCHEDULE.get(block) {
            Some(&pick) => (pick, Some(block)),
            // Waiting for the trial's last frames to end: the safe choice meanwhile.
            None => (Pick::Ffmpeg, None),
        }
    }

    /// A frame of `block` ended at `at`; decides once every block's frames have.
    pub fn end(&mut self, block: usize, at: Instant) {
        let Some(ended) = self.ended.get_mut(block) else {
            return;
        };
        *ended += 1;
        let last = &mut self.last_end[block];
        *last = Some(last.map_or(at, |t| t.max(at)));
        if self.decided.is_none() {
            self.decided = self.decide();
        }
    }

    /// Once every block's frames have ended, or the first three's where the frame path was
    /// far slower: each block's time from the end of the one before (frames may end out of
    /// order with frame threads: a block ends when it and every block before it have).
    fn decide(&self) -> Option<Decision> {
        let done = self
            .ended
            .iter()
            .take_while(|&&n| n >= self.block_frames)
            .count();
        let mut ends = Vec::with_capacity(done);
        for t in &self.last_end[..done] {
            let t = t.expect("a block whose frames ended");
            ends.push(ends.last().map_or(t, |&e: &Instant| e.max(t)));
        }
        let (mut frame, mut ffmpeg) = (Duration::ZERO, Duration::ZERO);
        for (b, pick) in SCHEDULE.iter().enumerate().take(done).skip(1) {
            let took = ends[b] - ends[b - 1];
            match pick {
                Pick::Frame => frame += took,
                Pick::Ffmpeg => ffmpeg += took,
            }
        }
        let ratio = frame.as_secs_f64() / ffmpeg.as_secs_f64().max(1e-9);
        let pick = match done {
            3 if ratio > EARLY_STOP => Pick::Ffmpeg,
            5 if ratio <= MARGIN => Pick::Frame,
            5 => Pick::Ffmpeg,
            _ => return None,
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

/// Frames per trial block: `DAEDALUS_TRIAL_FRAMES`, else 8 or one per choosing decoder
/// context, whichever is more.
fn block_frames() -> u64 {
    crate::config::get()
        .trial_frames
        .unwrap_or_else(|| CHOOSING.load(Relaxed).max(8)) as u64
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
    let trial = trials[class].get_or_insert_with(|| Trial::new(block_frames()));
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
                     FFmpeg's time over {} frames each)",
                    CLASSES[ticket.class].1,
                    d.ratio,
                    2 * trial.block_frames
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
        let mut trial = Trial::new(2);
        let picks = run(&mut trial, 14, |p| if p == Pick::Frame { 5 } else { 10 });
        use Pick::*;
        assert_eq!(
            picks,
            [
                Frame, Frame, Ffmpeg, Ffmpeg, Frame, Frame, Frame, Frame, Ffmpeg, Ffmpeg, Frame,
                Frame, Frame, Frame
            ]
        );
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Frame);
        assert!((d.ratio - 0.5).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn a_far_slower_frame_path_stops_the_trial_early() {
        let mut trial = Trial::new(2);
        let picks = run(&mut trial, 8, |p| if p == Pick::Frame { 25 } else { 10 });
        use Pick::*;
        assert_eq!(
            picks,
            [Frame, Frame, Ffmpeg, Ffmpeg, Frame, Frame, Ffmpeg, Ffmpeg]
        );
        let d = trial.decision().expect("decided after three blocks");
        assert_eq!(d.pick, Ffmpeg);
        assert!((d.ratio - 2.5).abs() < 1e-9, "{d:?}");
    }

    #[test]
    fn a_frame_path_within_the_margin_is_not_chosen() {
        let mut trial = Trial::new(3);
        run(&mut trial, 20, |p| if p == Pick::Frame { 97 } else { 100 });
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Pick::Ffmpeg, "{d:?}");
        assert_eq!(trial.next(), (Pick::Ffmpeg, None));
    }

    /// With frame threads the trial's last frames end after later frames were handed out:
    /// those go to FFmpeg until the decision, and frames ending out of order count at the
    /// latest end of their block and those before.
    #[test]
    fn undecided_frames_go_to_ffmpeg_and_late_ends_count() {
        let mut trial = Trial::new(2);
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let handed: Vec<_> = (0..12).map(|_| trial.next()).collect();
        assert_eq!(handed[10], (Pick::Ffmpeg, None));
        assert_eq!(handed[11], (Pick::Ffmpeg, None));
        // Blocks 0..5 end at 10, 30, 40, 50, 80, except that a frame of block 1 ends at 45.
        for (block, at) in [(0, 10), (0, 10), (1, 30), (1, 45), (2, 40), (2, 40)] {
            trial.end(block, ms(at));
        }
        assert_eq!(trial.decision(), None);
        for (block, at) in [(3, 50), (3, 50), (4, 80)] {
            trial.end(block, ms(at));
        }
        assert_eq!(
            trial.decision(),
            None,
            "a frame of the last block is running"
        );
        trial.end(4, ms(80));
        // Frame path: blocks 2 and 3 (45 to 45, 45 to 50), FFmpeg: 1 and 4 (10 to 45, 50 to 80).
        let d = trial.decision().expect("decided");
        assert!((d.ratio - 5.0 / 65.0).abs() < 1e-9, "{d:?}");
        assert_eq!(trial.next(), (Pick::Frame, None));
    }
}
