//! `DAEDALUS_PATH` unset: whether the frame path or FFmpeg's own decode is faster here, measured
//! on the decode itself, per frame class (size, and 8 bits or 10 and 12), by frames per second.
//!
//! Which one wins depends on the device, the frame size, the decoder's threads and how fast the
//! CPU side is (FFmpeg's SIMD or its C), so nothing measured apart from the decode can say. Each
//! class's first frames are a trial in blocks of consecutive frames: the frame path first, to
//! warm up (pipelines, memory, the first key frame; and, with frame threads, until every
//! thread's context has attached, which each does at its first frame), then two blocks each
//! way in [`MEASURED`]'s order, so that a scene growing harder weighs on both alike. A block
//! has at least twice as many frames as there are choosing contexts, and is timed per frame
//! from the end of its n-th frame (n the contexts) to the end of its last: with frame threads,
//! how fast the decoder delivered frames once the frames of the block before had left it. The
//! frame path is chosen where it took at most [`MARGIN`] of FFmpeg's time ([`MARGIN_THREADED`]
//! with frame threads), else FFmpeg; where its first block took over [`EARLY_STOP`] times
//! FFmpeg's (one context), the trial ends there. The frames between the trial's last and its
//! decision (frame threads) go to FFmpeg. A decision is kept for later runs
//! ([`super::decisions`]); so is the ratio of a trial's first pair of blocks where the decode
//! ended (its last decoder context) before its second (a short clip), and a later trial of the
//! class and threading decides at its own first pair, on the two pairs' geometric mean: each
//! pair measured the two ways on one clip's frames. A trial with one context that kept FFmpeg
//! by a near miss of its margin ([`CONFIRM`]) keeps its ratio the same way, in place of the
//! decision: one trial's measure swings too widely to give up the frame path for good on it.

pub use super::decisions::{Decision, Pick};
use super::decisions::{CLASSES, HIGH_CLASSES};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Instant;

/// A trial's measured blocks in order, after its warm-up on the frame path: ABBA, each as often
/// early as late (each switch costs a decoder with frame threads a pipeline's drain).
const MEASURED: [Pick; 4] = [Pick::Ffmpeg, Pick::Frame, Pick::Frame, Pick::Ffmpeg];

/// The frame path is chosen only where it took at most this share of FFmpeg's time: a trial
/// sees the frame path faster than a whole decode does. On the NVIDIA H200 host with one
/// thread and FFmpeg's asm build, 720p trials put it at 0.71 to 0.99 of FFmpeg's time on a day
/// when whole decodes ran it at 1.22 to 1.25, and at 0.72 to 0.89 on another when they ran it
/// at 0.91; 1080p trials at 0.61 to 0.81 where it ran at 0.67 to 0.98 (docs/benchmarks-history.md).
pub const MARGIN: f64 = 0.75;

/// The same with frame threads, where a trial measures less well still: there the same host's
/// trials put the frame path at 0.80 to 1.73 of the asm build's time in decodes that ran it
/// at 1.3 to 1.6 times, and at 0.52 to 0.65 of the C build's where it ran at 0.59 to 0.61. On
/// the NVIDIA H100 host (`0a4c35a`) with 16 threads a 1080p trial measured 0.59 where the
/// defaults then ran 1.06x FFmpeg's fps, and a 2160p one 0.69 where they ran 0.93x; on four
/// CPUs trials of 0.53 to 0.60 ran 1.16x to 1.83x.
pub const MARGIN_THREADED: f64 = 0.65;

/// Where the frame path's first measured block took more than this multiple of FFmpeg's, the
/// trial stops there: a device that slow costs dearly for every frame it tries. (Not lower:
/// one block's time swings with what its frames hold; at 1.25, a 720p trial on the H200 host
/// once stopped at 1.30 where its full run gave 0.75.) One context only: with frame threads
/// that block follows the switch from FFmpeg's decode, every context's first frames on the
/// GPU among its few; on the H200 host a 16-thread 720p trial stopped at 2.27 there, where
/// whole decodes ran the frame path at 1.49 times FFmpeg's fps (1.65 on the H100 host).
pub const EARLY_STOP: f64 = 2.0;

/// A trial of its own (no earlier pair beside it, none asked for) with one context that kept
/// FFmpeg within this factor of its margin is measured once more: its ratio is kept as a
/// pair, and the next run's trial of the class decides at its own first pair, on the two
/// measures' geometric mean. One trial swings widely: on the NVIDIA H100 host, one-thread
/// 720p trials measured 0.50 to 0.64 of FFmpeg's time, and one 0.76 (FFmpeg kept for good),
/// where whole decodes ran the frame path at 1.67 times FFmpeg's fps
/// (docs/benchmarks-history.md). (Not with frame threads: there a first pair's frame block
/// follows the switch from FFmpeg's decode and measures the frame path slower than it is,
/// [`EARLY_STOP`].)
pub const CONFIRM: f64 = 1.2;

/// The log's key of each class's decision (said once).
const DECIDED: [&str; CLASSES.len()] = [
    "trial sd",
    "trial hd",
    "trial fhd",
    "trial uhd",
    "trial sd-high",
    "trial hd-high",
    "trial fhd-high",
    "trial uhd-high",
];

/// The class of a `width` x `height` frame of `bpp` bits.
pub fn class_of(width: i32, height: i32, bpp: i32) -> usize {
    let pixels = width.max(0) as u64 * height.max(0) as u64;
    let by_size = CLASSES[..HIGH_CLASSES]
        .iter()
        .position(|&(max, _)| pixels <= max)
        .expect("the last class takes every size");
    by_size + if bpp > 8 { HIGH_CLASSES } else { 0 }
}

/// A frame of a measured trial block, until it ends.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Ticket {
    class: usize,
    block: usize,
}

/// A trial's measured blocks, fixed when its warm-up ends.
#[derive(Clone, Copy, Debug)]
struct Blocks {
    /// The first frame after the warm-up, and frames per block.
    start: usize,
    frames: usize,
    /// A block's first frames to end that are the switch and go untimed.
    settle: usize,
    margin: f64,
    /// The threading measured ([`super::decisions::threading`]).
    threading: usize,
}

/// One class's trial.
#[derive(Debug)]
pub struct Trial {
    /// Frames per block at least.
    least: usize,
    blocks: Option<Blocks>,
    /// Frames handed out so far.
    handed: usize,
    /// Per measured block: when its frames ended, and how many ended untimed (declined after
    /// all, or their decoder closed).
    ends: [Vec<Instant>; MEASURED.len()],
    untimed: [usize; MEASURED.len()],
    decided: Option<Decision>,
    /// Per threading, the first pair's ratio an earlier run's trial kept; this trial's, once
    /// fixed; whether this trial's own first pair is yet to be kept.
    earlier_pairs: [Option<f64>; 2],
    earlier: Option<f64>,
    pair_unkept: bool,
}

impl Trial {
    /// Blocks of at least `least` frames; `earlier_pairs`: per threading, the first pair's
    /// ratio of an earlier run's trial that ended there.
    pub fn new(least: usize, earlier_pairs: [Option<f64>; 2]) -> Trial {
        Trial {
            least: least.max(1),
            blocks: None,
            handed: 0,
            ends: Default::default(),
            untimed: [0; MEASURED.len()],
            decided: None,
            earlier_pairs,
            earlier: None,
            pair_unkept: true,
        }
    }

    /// Who takes the next frame, `contexts` deciding now, and the measured block it times
    /// (`None` in the warm-up and once past the trial).
    pub fn next(&mut self, contexts: usize) -> (Pick, Option<usize>) {
        if let Some(d) = self.decided {
            return (d.pick, None);
        }
        let i = self.handed;
        self.handed += 1;
        let blocks = match self.blocks {
            Some(b) => b,
            None => {
                let contexts = contexts.max(1);
                let frames = self.least.max(2 * contexts);
                if i < frames {
                    return (Pick::Frame, None);
                }
                let margin = if contexts > 1 {
                    MARGIN_THREADED
                } else {
                    MARGIN
                };
                let threading = super::decisions::threading(contexts);
                self.earlier = self.earlier_pairs[threading];
                *self.blocks.insert(Blocks {
                    start: i,
                    frames,
                    settle: contexts.min(frames / 2),
                    margin,
                    threading,
                })
            }
        };
        let block = (i - blocks.start) / blocks.frames;
        match MEASURED.get(block) {
            Some(&pick) => (pick, Some(block)),
            // Waiting for the trial's last frames to end: the safe choice meanwhile.
            None => (Pick::Ffmpeg, None),
        }
    }

    /// A frame of `block` ended at `at` (`None`: untimed); decides once enough have.
    pub fn end(&mut self, block: usize, at: Option<Instant>) {
        if block >= MEASURED.len() {
            return;
        }
        match at {
            Some(at) => self.ends[block].push(at),
            None => self.untimed[block] += 1,
        }
        if self.decided.is_none() {
            self.decided = self.decide();
        }
    }

    /// A block's time per frame: from the end of its `settle`-th frame to the end of its last,
    /// over the frames between (`None` where too few were timed).
    fn per_frame(&self, block: usize, b: &Blocks) -> Option<f64> {
        let mut ends = self.ends[block].clone();
        ends.sort();
        let (first, last) = (ends.get(b.settle.max(1) - 1)?, ends.last()?);
        let frames = ends.len() - b.settle.max(1);
        (frames > 0).then(|| last.duration_since(*first).as_secs_f64() / frames as f64)
    }

    /// Once every measured block's frames have ended, or the first two's where the frame path
    /// was far slower.
    fn decide(&self) -> Option<Decision> {
        let b = self.blocks?;
        let done = (0..MEASURED.len())
            .take_while(|&k| self.ends[k].len() + self.untimed[k] >= b.frames)
            .count();
        if done < 2 {
            return None;
        }
        let ratio_of = |blocks: std::ops::Range<usize>| -> Option<f64> {
            let (mut frame, mut ffmpeg) = (0.0, 0.0);
            for k in blocks {
                let t = self.per_frame(k, &b)?;
                match MEASURED[k] {
                    Pick::Frame => frame += t,
                    Pick::Ffmpeg => ffmpeg += t,
                }
            }
            (ffmpeg > 0.0).then(|| frame / ffmpeg)
        };
        let ratio = if done < MEASURED.len() {
            // (A block that cannot be timed decides nothing early.)
            let pair = ratio_of(0..2)?;
            if pair > EARLY_STOP && b.threading == 0 {
                return Some(Decision {
                    pick: Pick::Ffmpeg,
                    ratio: pair,
                    cached: false,
                });
            }
            // With an earlier run's pair, this one's completes the trial.
            (pair * self.earlier?).sqrt()
        } else {
            // A trial that cannot be timed keeps FFmpeg, the safe choice.
            ratio_of(0..MEASURED.len()).unwrap_or(f64::INFINITY)
        };
        let pick = if ratio <= b.margin {
            Pick::Frame
        } else {
            Pick::Ffmpeg
        };
        Some(Decision {
            pick,
            ratio,
            cached: false,
        })
    }

    pub fn decision(&self) -> Option<Decision> {
        self.decided
    }

    /// Whether the decision is FFmpeg's by a near miss of the margin ([`CONFIRM`]), this
    /// trial's measure alone, with one context: kept as a pair for the next run's trial, not
    /// for good (where no trial is asked for: [`measured_again`]).
    pub fn to_confirm(&self) -> bool {
        let (Some(b), Some(d)) = (self.blocks, self.decided) else {
            return false;
        };
        d.pick == Pick::Ffmpeg
            && b.threading == 0
            && self.earlier.is_none()
            && d.ratio > b.margin
            && d.ratio / b.margin <= CONFIRM
    }

    /// Once, where the trial is undecided after its first pair of blocks (its decode ends):
    /// the threading and that pair's ratio, for a later run's trial
    /// ([`super::decisions::store_pair`]).
    fn pair_to_keep(&mut self) -> Option<(usize, f64)> {
        let b = self.blocks?;
        if self.decided.is_some() || !self.pair_unkept || self.earlier.is_some() {
            return None;
        }
        // (Both blocks whole: a frame of the second may still be running.)
        if (0..2).any(|k| self.ends[k].len() + self.untimed[k] < b.frames) {
            return None;
        }
        let timed = |k: usize| self.per_frame(k, &b);
        let (ffmpeg, frame) = (timed(0)?, timed(1)?);
        debug_assert_eq!(&MEASURED[..2], &[Pick::Ffmpeg, Pick::Frame]);
        self.pair_unkept = false;
        let ratio = frame / ffmpeg;
        ratio.is_finite().then_some((b.threading, ratio))
    }
}

/// What this process chose for a class (decoders of one class share it: the
/// measurement is of the device and the decoder, not of a stream).
struct Class {
    /// The decision taken from the cache, where one was.
    cached: Option<Decision>,
    /// The trial, where one runs.
    trial: Option<Trial>,
}

const UNSEEN: Class = Class {
    cached: None,
    trial: None,
};

static TRIALS: Mutex<[Class; CLASSES.len()]> = Mutex::new([UNSEEN; CLASSES.len()]);

impl Class {
    /// The decision the class follows: its trial's, else the cached one.
    fn decision(&self) -> Option<Decision> {
        match &self.trial {
            Some(t) => t.decision(),
            None => self.cached,
        }
    }
}

/// Decoder contexts that choose per frame: a decoder with frame threads has one per thread,
/// and a block should outlast the frames they have in flight.
static CHOOSING: AtomicUsize = AtomicUsize::new(0);

pub fn decoder_attached() {
    CHOOSING.fetch_add(1, Relaxed);
}

/// Whether any choosing decoder context lives.
pub fn any_choosing() -> bool {
    CHOOSING.load(Relaxed) > 0
}

/// Whether other choosing decoder contexts live beside one: frame threads' do.
pub fn others_choosing() -> bool {
    CHOOSING.load(Relaxed) > 1
}

/// A choosing decoder context ends; where it was the last, each trial left undecided after its
/// first pair of blocks keeps that pair for a later run's trial.
pub fn decoder_detached() {
    if CHOOSING.fetch_sub(1, Relaxed) != 1 {
        return;
    }
    let pairs: Vec<(usize, usize, f64)> = {
        let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
        let classes = trials.iter_mut().enumerate();
        classes
            .filter_map(|(class, c)| {
                let (threading, ratio) = c.trial.as_mut()?.pair_to_keep()?;
                Some((class, threading, ratio))
            })
            .collect()
    };
    // (Written outside the lock.)
    for (class, threading, ratio) in pairs {
        super::decisions::store_pair(class, threading, ratio, false);
    }
}

/// Whether `trial`'s decision is measured again by the next run's trial ([`CONFIRM`]): not
/// where trials are asked for (`DAEDALUS_TRIAL_FRAMES`), which take no earlier pair.
fn measured_again(trial: &Trial) -> bool {
    trial.to_confirm() && !crate::config::get().trial_asked()
}

/// A new trial of `class`: blocks of at least `DAEDALUS_TRIAL_FRAMES` (else 16) frames.
fn new_trial(class: usize) -> Trial {
    Trial::new(
        crate::config::get().trial_frames.unwrap_or(16),
        super::decisions::earlier_pairs()[class],
    )
}

/// Frames handed out under `DAEDALUS_TEST_ALTERNATE`.
static ALTERNATED: AtomicUsize = AtomicUsize::new(0);

/// Who takes the next frame of `class`, the `first` its decoder context chooses for, and what
/// to hand back at its end.
pub fn pick(class: usize, first: bool) -> (Pick, Option<Ticket>) {
    if let Some(n) = crate::config::get().testing.alternate {
        // (A context's first frame is FFmpeg's, as wherever decoders choose: with frame
        // threads every context has attached, and counts, before one holds a frame.)
        if first {
            return (Pick::Ffmpeg, None);
        }
        let pick = match (ALTERNATED.fetch_add(1, Relaxed) / n.max(1)) % 2 {
            0 => Pick::Frame,
            _ => Pick::Ffmpeg,
        };
        return (pick, None);
    }
    let contexts = CHOOSING.load(Relaxed);
    let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let c = &mut trials[class];
    if c.trial.is_none() {
        let cached = &super::decisions::cached()[class];
        if let Some(pick) = super::decisions::pick(cached, first, contexts) {
            if !first {
                c.cached = cached[super::decisions::threading(contexts)];
            }
            return (pick, None);
        }
    }
    let trial = c.trial.get_or_insert_with(|| new_trial(class));
    let (pick, block) = trial.next(contexts);
    (pick, block.map(|block| Ticket { class, block }))
}

/// Whether a frame of `class` may go to the GPU: a trial runs or is to run for it, or its
/// decision (this process's, else the cached one for the threading) is the frame path, or
/// frames alternate.
pub fn may_take(class: usize) -> bool {
    if crate::config::get().testing.alternate.is_some() {
        return true;
    }
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(trial) = &trials[class].trial {
        return trial.decision().is_none_or(|d| d.pick == Pick::Frame);
    }
    let threading = super::decisions::threading(CHOOSING.load(Relaxed));
    super::decisions::cached()[class][threading].is_none_or(|d| d.pick == Pick::Frame)
}

/// Whether decoders may still leave frames of `class` to FFmpeg's own decode while several
/// contexts choose (frame threads): a trial runs, its decision is FFmpeg's, or frames
/// alternate. (A context's first frame, which always goes to FFmpeg, precedes the others.)
pub fn declines_among_threads(class: usize) -> bool {
    if CHOOSING.load(Relaxed) < 2 {
        return false;
    }
    if crate::config::get().testing.alternate.is_some() {
        return true;
    }
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    trials[class]
        .decision()
        .is_none_or(|d| d.pick != Pick::Frame)
}

/// The frame of `ticket` ended now.
pub fn ended(ticket: Ticket) {
    end(ticket, Some(Instant::now()));
}

/// The frame of `ticket` ended without a time to count: FFmpeg decoded it after all (the GPU
/// could not take it), or its decoder closed first.
pub fn untimed(ticket: Ticket) {
    end(ticket, None);
}

fn end(ticket: Ticket, at: Option<Instant>) {
    let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let mut decided = None;
    if let Some(trial) = trials[ticket.class].trial.as_mut() {
        let before = trial.decision();
        trial.end(ticket.block, at);
        if let (None, Some(d), Some(b)) = (before, trial.decision(), trial.blocks) {
            let again = measured_again(trial);
            decided = Some((b.threading, d, again));
            let chosen = match d.pick {
                Pick::Frame => "the frame path",
                Pick::Ffmpeg => "FFmpeg's own decode",
            };
            let until = if again {
                "for this run, measured again in the next"
            } else {
                "from now on"
            };
            crate::log::once(
                crate::log::Level::Info,
                DECIDED[ticket.class],
                format_args!(
                    "{}-class frames: {chosen} {until} (the frame path took {:.2} of \
                     FFmpeg's time in the trial)",
                    CLASSES[ticket.class].1, d.ratio,
                ),
            );
        }
    }
    drop(trials);
    // (Written once a class, outside the lock: other frames go on meanwhile.)
    match decided {
        Some((threading, d, true)) => {
            super::decisions::store_pair(ticket.class, threading, d.ratio, true)
        }
        Some((threading, d, false)) => super::decisions::store(ticket.class, threading, &d),
        None => {}
    }
}

/// `trial=` of the stats line: per class, `class:frame|ffmpeg:ratio` as its trial decided,
/// with `:cached` where an earlier run's trial did, `:again` where the next run's trial
/// measures it again ([`CONFIRM`]), or `class:undecided` where the decode ended first; `-`
/// where no class chose.
pub fn describe() -> String {
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let tried: Vec<String> = trials
        .iter()
        .zip(CLASSES)
        .filter_map(|(c, (_, name))| {
            if c.trial.is_none() && c.cached.is_none() {
                return None;
            }
            Some(match c.decision() {
                Some(Decision {
                    pick,
                    ratio,
                    cached,
                }) => {
                    let pick = if pick == Pick::Frame {
                        "frame"
                    } else {
                        "ffmpeg"
                    };
                    let again = c.trial.as_ref().is_some_and(measured_again);
                    let after = match (cached, again) {
                        (true, _) => ":cached",
                        (false, true) => ":again",
                        (false, false) => "",
                    };
                    format!("{name}:{pick}:{ratio:.2}{after}")
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
/// where every class decided chose FFmpeg (or the decode ended at its decoders' first frames,
/// which go to FFmpeg where a decision is kept), `trial` where a trial ran and none decided,
/// or decoders switched (`DAEDALUS_TEST_ALTERNATE`).
pub fn path() -> &'static str {
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let picks: Vec<Pick> = trials
        .iter()
        .filter_map(|c| c.decision().map(|d| d.pick))
        .collect();
    let tried = trials.iter().any(|c| c.trial.is_some());
    if picks.contains(&Pick::Frame) {
        "frame"
    } else if picks.is_empty() && (tried || crate::config::get().testing.alternate.is_some()) {
        "trial"
    } else {
        "ffmpeg"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const NO_PAIRS: [Option<f64>; 2] = [None, None];

    /// Hands out a trial's frames (`contexts` choosing) and ends each `took(pick)` ms after the
    /// one before.
    fn run(
        trial: &mut Trial,
        contexts: usize,
        frames: usize,
        took: impl Fn(Pick) -> u64,
    ) -> Vec<Pick> {
        let mut at = Instant::now();
        let mut picks = Vec::new();
        for _ in 0..frames {
            let (pick, block) = trial.next(contexts);
            at += Duration::from_millis(took(pick));
            if let Some(block) = block {
                trial.end(block, Some(at));
            }
            picks.push(pick);
        }
        picks
    }

    #[test]
    fn classes_split_by_frame_size() {
        assert_eq!(class_of(640, 272, 8), 0);
        assert_eq!(class_of(1280, 720, 8), 1);
        assert_eq!(class_of(1920, 1080, 8), 2);
        assert_eq!(class_of(3840, 2160, 8), 3);
        assert_eq!(class_of(-1, 5, 8), 0);
        assert_eq!(class_of(640, 272, 10), 4);
        assert_eq!(class_of(3840, 2160, 12), 7);
    }

    #[test]
    fn the_trial_runs_its_blocks_then_keeps_the_faster() {
        let mut trial = Trial::new(2, NO_PAIRS);
        let picks = run(&mut trial, 1, 12, |p| if p == Pick::Frame { 5 } else { 10 });
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
    fn a_far_slower_frame_path_stops_the_trial_early() {
        let mut trial = Trial::new(3, NO_PAIRS);
        let picks = run(
            &mut trial,
            1,
            10,
            |p| if p == Pick::Frame { 21 } else { 10 },
        );
        use Pick::*;
        assert_eq!(picks[6..], [Frame, Frame, Frame, Ffmpeg]);
        let d = trial.decision().expect("decided after two measured blocks");
        assert_eq!(d.pick, Ffmpeg);
        assert!((d.ratio - 2.1).abs() < 1e-9, "{d:?}");
    }

    /// With frame threads the first pair decides nothing alone, however slow its frame path.
    #[test]
    fn frame_threads_do_not_stop_early() {
        let mut trial = Trial::new(8, NO_PAIRS);
        run(
            &mut trial,
            4,
            24,
            |p| if p == Pick::Frame { 210 } else { 100 },
        );
        assert_eq!(trial.decision(), None);
    }

    #[test]
    fn a_frame_path_within_the_margin_is_not_chosen() {
        let mut trial = Trial::new(3, NO_PAIRS);
        run(
            &mut trial,
            1,
            20,
            |p| if p == Pick::Frame { 97 } else { 100 },
        );
        let d = trial.decision().expect("decided");
        assert_eq!(d.pick, Pick::Ffmpeg, "{d:?}");
        assert_eq!(trial.next(1), (Pick::Ffmpeg, None));
        assert!(!trial.to_confirm(), "far from the margin: FFmpeg for good");
    }

    /// FFmpeg kept by a near miss of the margin is measured again, once: a trial of its own
    /// only, and not where the frame path won.
    #[test]
    fn a_near_miss_of_the_margin_is_measured_again() {
        let by = |frame: u64| move |p| if p == Pick::Frame { frame } else { 100 };
        let decided = |contexts, earlier, frame| {
            let mut trial = Trial::new(8, earlier);
            run(&mut trial, contexts, 60, by(frame));
            let d = trial.decision().expect("decided");
            (d.pick, trial.to_confirm())
        };
        use Pick::*;
        // one context: margin 0.75, measured again up to 0.9
        assert_eq!(decided(1, NO_PAIRS, 80), (Ffmpeg, true));
        assert_eq!(decided(1, NO_PAIRS, 89), (Ffmpeg, true));
        assert_eq!(decided(1, NO_PAIRS, 91), (Ffmpeg, false));
        assert_eq!(decided(1, NO_PAIRS, 70), (Frame, false));
        // not with frame threads (margin 0.65)
        assert_eq!(decided(4, NO_PAIRS, 72), (Ffmpeg, false));
        // the measure again decides for good, whichever way; another threading's pair is
        // not this one's
        assert_eq!(decided(1, [Some(0.8), None], 80), (Ffmpeg, false));
        assert_eq!(decided(1, [Some(0.8), None], 60), (Frame, false));
        assert_eq!(decided(1, [None, Some(0.8)], 80), (Ffmpeg, true));
    }

    /// With frame threads the frame path must win by more.
    #[test]
    fn frame_threads_ask_a_wider_margin() {
        let mut trial = Trial::new(8, NO_PAIRS);
        run(
            &mut trial,
            4,
            40,
            |p| if p == Pick::Frame { 72 } else { 100 },
        );
        assert_eq!(trial.decision().expect("decided").pick, Pick::Ffmpeg);
        let mut trial = Trial::new(8, NO_PAIRS);
        run(
            &mut trial,
            1,
            40,
            |p| if p == Pick::Frame { 72 } else { 100 },
        );
        assert_eq!(trial.decision().expect("decided").pick, Pick::Frame);
    }

    /// Each frame thread's context attaches at its first frame: the warm-up lasts until the
    /// blocks can be twice as long as there are contexts by then.
    #[test]
    fn the_warm_up_waits_for_the_frame_threads() {
        let mut trial = Trial::new(4, NO_PAIRS);
        // Contexts 1, 2, ... as frames begin, up to 6.
        let handed: Vec<_> = (0..30).map(|i| trial.next((i + 1).min(6))).collect();
        assert!(
            handed[..12].iter().all(|&h| h == (Pick::Frame, None)),
            "{handed:?}"
        );
        assert_eq!(handed[12], (Pick::Ffmpeg, Some(0)));
        assert_eq!(handed[24], (Pick::Frame, Some(1)));
        let b = trial.blocks.expect("fixed");
        assert_eq!(
            (b.start, b.frames, b.settle, b.margin),
            (12, 12, 6, MARGIN_THREADED)
        );
    }

    /// With frame threads the trial's last frames end after later frames were handed out:
    /// those go to FFmpeg until the decision. A block's first frames to end (the switch) go
    /// untimed, in the order they ended; a frame FFmpeg decoded after all counts untimed.
    #[test]
    fn undecided_frames_go_to_ffmpeg_and_the_switch_is_not_timed() {
        let mut trial = Trial::new(4, NO_PAIRS);
        let t0 = Instant::now();
        let ms = |n| Some(t0 + Duration::from_millis(n));
        let handed: Vec<_> = (0..24).map(|_| trial.next(2)).collect();
        assert_eq!(handed[20], (Pick::Ffmpeg, None));
        assert_eq!(handed[23], (Pick::Ffmpeg, None));
        // Each block: two frames late (the switch, 50 ms), then 10 ms apart on the frame path,
        // 20 on FFmpeg; a frame of each ends out of order.
        let mut at = 0;
        for (block, &pick) in MEASURED.iter().enumerate() {
            let step = if pick == Pick::Frame { 10 } else { 20 };
            let mut ends = vec![at + 50, at + 50, at + 50 + 2 * step, at + 50 + step];
            at += 50 + 2 * step;
            if block == 3 {
                // Its first frame is declined after all (untimed); its last is still running.
                let last = ends.pop().expect("four");
                trial.end(block, None);
                ends[1..].iter().for_each(|&e| trial.end(block, ms(e)));
                assert_eq!(
                    trial.decision(),
                    None,
                    "a frame of the last block is running"
                );
                trial.end(block, ms(last));
                break;
            }
            ends.iter().for_each(|&e| trial.end(block, ms(e)));
        }
        let d = trial.decision().expect("decided");
        assert!((d.ratio - 0.5).abs() < 1e-9, "{d:?}");
        assert_eq!(d.pick, Pick::Frame);
        assert_eq!(trial.next(2), (Pick::Frame, None));
    }

    /// A trial that ends after its first pair of blocks (a short clip) keeps that pair's
    /// ratio, once; the next run's trial of the class and threading decides at its own first
    /// pair, on the two pairs' geometric mean.
    #[test]
    fn a_short_decode_keeps_its_first_pair_for_the_next_trial() {
        let took = |p| if p == Pick::Frame { 6 } else { 10 };
        let mut trial = Trial::new(4, NO_PAIRS);
        // warm-up 4, then the first pair of 4-frame blocks: FFmpeg at 10 ms a frame, the
        // frame path at 6; kept only once the second block is whole
        let mut at = Instant::now();
        let mut last = None;
        for i in 0..12 {
            let (pick, block) = trial.next(1);
            at += Duration::from_millis(took(pick));
            match block {
                Some(block) if i == 11 => last = Some((block, at)),
                Some(block) => trial.end(block, Some(at)),
                None => {}
            }
        }
        assert_eq!(trial.pair_to_keep(), None, "a block not whole");
        let (block, at) = last.expect("the pair's last frame");
        trial.end(block, Some(at));
        assert_eq!(trial.decision(), None);
        let (threading, ratio) = trial.pair_to_keep().expect("the first pair");
        assert_eq!(threading, 0);
        assert!((ratio - 0.6).abs() < 1e-9, "{ratio}");
        assert_eq!(trial.pair_to_keep(), None, "kept once");

        let mut next = Trial::new(4, [Some(0.9), None]);
        run(&mut next, 1, 12, took);
        let d = next.decision().expect("decided at the first pair");
        assert!((d.ratio - (0.6f64 * 0.9).sqrt()).abs() < 1e-9, "{d:?}");
        assert_eq!(d.pick, Pick::Frame);
        assert_eq!(next.pair_to_keep(), None);
        // an earlier pair of the other threading is not this one's
        let mut other = Trial::new(4, [None, Some(0.1)]);
        run(&mut other, 1, 12, took);
        assert_eq!(other.decision(), None);
    }
}
