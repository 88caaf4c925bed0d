//! Trial decisions kept across runs. A class's trial measures the device, the program's
//! decoder (FFmpeg's SIMD or its C) and the threading, not the stream, so its decision is
//! kept in [`crate::decisions`] (per device, driver, CPU, program, library version) per
//! frame-size class and per threading: one context (one thread, or slice threads) or frame
//! threads. Later decodes then skip the trial, and where FFmpeg won they set no device up at
//! all. A trial that ended undecided after its first pair of blocks keeps that pair's ratio
//! in the decision's place, for the next trial ([`super::choice`]); so does one that kept
//! FFmpeg by a near miss of its margin, to be measured once more. `DAEDALUS_TRIAL_FRAMES`
//! asks for a new trial, whose decision replaces the cached one; deleting `devices.tsv` in the
//! cache directory forgets them all.

use once_cell::sync::OnceCell;

/// Who reconstructs a frame.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pick {
    /// The frame path: parsed whole, reconstructed on the GPU.
    Frame,
    /// FFmpeg's own decode, block by block (the provider declines the frame).
    Ffmpeg,
}

/// The outcome of a class's trial.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Decision {
    pub pick: Pick,
    /// The frame path's time over FFmpeg's, for as many frames.
    pub ratio: f64,
    /// Taken from an earlier run's trial.
    pub cached: bool,
}

/// Frame classes: by luma pixels, up to 640x640, 1280x800 (720p), 2048x1152 (1080p), more; at
/// 8 bits, then at 10 and 12 (`-high`), whose frames cost both sides differently.
pub const CLASSES: [(u64, &str); 8] = [
    (640 * 640, "sd"),
    (1280 * 800, "hd"),
    (2048 * 1152, "fhd"),
    (u64::MAX, "uhd"),
    (640 * 640, "sd-high"),
    (1280 * 800, "hd-high"),
    (2048 * 1152, "fhd-high"),
    (u64::MAX, "uhd-high"),
];

/// The first class of 10 and 12 bits.
pub const HIGH_CLASSES: usize = 4;

/// The threadings a decision is kept for, by how many decoder contexts choose.
const THREADINGS: [&str; 2] = ["one-context", "frame-threads"];

/// A value per class and threading.
pub type PerClass<T> = [[T; THREADINGS.len()]; CLASSES.len()];

/// Cached decisions per class and threading.
pub type Cached = PerClass<Option<Decision>>;

/// The threading of `contexts` choosing contexts (an index of [`THREADINGS`]).
pub fn threading(contexts: usize) -> usize {
    usize::from(contexts > 1)
}

/// The fact's name in `devices.tsv`.
fn fact(class: usize, threading: usize) -> String {
    format!("trial {} {}", CLASSES[class].1, THREADINGS[threading])
}

/// Each class's and threading's kept value, read once: none where a trial is asked for.
fn kept() -> &'static PerClass<Option<String>> {
    static KEPT: OnceCell<PerClass<Option<String>>> = OnceCell::new();
    KEPT.get_or_init(|| {
        let mut kept: PerClass<Option<String>> = Default::default();
        if crate::config::get().trial_asked() {
            return kept;
        }
        let names: Vec<String> = (0..CLASSES.len())
            .flat_map(|c| (0..THREADINGS.len()).map(move |t| fact(c, t)))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let values = crate::decisions::get_all(&names);
        for (i, value) in values.into_iter().enumerate() {
            kept[i / THREADINGS.len()][i % THREADINGS.len()] = value;
        }
        kept
    })
}

/// This process's cached decisions.
pub fn cached() -> &'static Cached {
    static CACHED: OnceCell<Cached> = OnceCell::new();
    CACHED.get_or_init(|| {
        kept()
            .each_ref()
            .map(|values| values.each_ref().map(|v| v.as_deref().and_then(parse)))
    })
}

/// Per class and threading, the first pair's ratio an undecided trial kept.
pub fn earlier_pairs() -> &'static PerClass<Option<f64>> {
    static PAIRS: OnceCell<PerClass<Option<f64>>> = OnceCell::new();
    PAIRS.get_or_init(|| {
        kept()
            .each_ref()
            .map(|values| values.each_ref().map(|v| v.as_deref().and_then(parse_pair)))
    })
}

/// Whether some trial decided on this device before (with this program and library).
pub fn any() -> bool {
    cached().iter().flatten().any(Option::is_some)
}

/// Keeps a trial's decision, unless it could not be timed (a later run tries again).
pub fn store(class: usize, threading: usize, d: &Decision) {
    if d.ratio.is_finite() {
        let pick = match d.pick {
            Pick::Frame => "frame",
            Pick::Ffmpeg => "ffmpeg",
        };
        crate::decisions::keep(&fact(class, threading), &format!("{pick} {:.3}", d.ratio));
    }
}

/// Keeps a trial's ratio as a pair for the next run's trial: an undecided trial's first pair,
/// where no decision is kept (not even one an asked-for trial ignored); or, `over_decision`,
/// in place of the decision of a trial that kept FFmpeg by a near miss of the margin, measured
/// once more ([`super::choice::CONFIRM`]).
pub fn store_pair(class: usize, threading: usize, ratio: f64, over_decision: bool) {
    let name = fact(class, threading);
    let decided = || {
        crate::decisions::get(&name)
            .as_deref()
            .and_then(parse)
            .is_some()
    };
    if ratio.is_finite() && ratio > 0.0 && (over_decision || !decided()) {
        crate::decisions::keep(&name, &format!("pair {ratio:.3}"));
    }
}

/// `pair 0.812`.
fn parse_pair(value: &str) -> Option<f64> {
    let ratio = value.strip_prefix("pair ")?.trim().parse::<f64>().ok()?;
    (ratio.is_finite() && ratio > 0.0).then_some(ratio)
}

/// `frame 0.750` or `ffmpeg 1.640`.
fn parse(value: &str) -> Option<Decision> {
    let (pick, ratio) = value.split_once(' ')?;
    let pick = match pick {
        "frame" => Pick::Frame,
        "ffmpeg" => Pick::Ffmpeg,
        _ => return None,
    };
    let ratio: f64 = ratio.trim().parse().ok().filter(|r: &f64| r.is_finite())?;
    Some(Decision {
        pick,
        ratio,
        cached: true,
    })
}

/// What a frame of a class takes from its cached decisions (`cached`, per threading): the
/// decision of its threading, `contexts` choosing now; `None` where that is not cached, and a
/// trial decides. The `first` frame of a decoder context goes to FFmpeg wherever the class has
/// a decision cached: each frame thread's context attaches at its own first frame, so only
/// after those can the count tell one context from frame threads (and a decoder that probes
/// the stream, as ffmpeg's does, closes after a frame or two).
pub fn pick(
    cached: &[Option<Decision>; THREADINGS.len()],
    first: bool,
    contexts: usize,
) -> Option<Pick> {
    if first && cached.iter().any(Option::is_some) {
        return Some(Pick::Ffmpeg);
    }
    cached[threading(contexts)].map(|d| d.pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(pick: Pick) -> Option<Decision> {
        Some(Decision {
            pick,
            ratio: 0.5,
            cached: true,
        })
    }

    #[test]
    fn cached_values_parse_and_bad_ones_do_not() {
        assert_eq!(parse("frame 0.750").map(|d| d.pick), Some(Pick::Frame));
        assert_eq!(parse("ffmpeg 1.640").map(|d| d.ratio), Some(1.64));
        for bad in ["", "frame", "gpu 0.5", "frame x", "ffmpeg inf", "pair 0.8"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(parse_pair("pair 0.812"), Some(0.812));
        for bad in [
            "",
            "pair",
            "pair x",
            "pair inf",
            "pair 0",
            "pair -1",
            "frame 0.8",
        ] {
            assert_eq!(parse_pair(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_threading_picks_the_decision_after_the_first_frame() {
        let cached = [decision(Pick::Frame), decision(Pick::Ffmpeg)];
        assert_eq!(pick(&cached, true, 1), Some(Pick::Ffmpeg));
        assert_eq!(pick(&cached, false, 1), Some(Pick::Frame));
        assert_eq!(pick(&cached, false, 2), Some(Pick::Ffmpeg));
        assert_eq!(pick(&cached, false, 17), Some(Pick::Ffmpeg));
    }

    #[test]
    fn a_threading_without_a_decision_runs_a_trial() {
        let cached = [decision(Pick::Frame), None];
        assert_eq!(pick(&cached, true, 1), Some(Pick::Ffmpeg));
        assert_eq!(pick(&cached, false, 4), None);
        assert_eq!(pick(&[None, None], true, 1), None);
        assert_eq!(pick(&[None, None], false, 1), None);
    }
}
