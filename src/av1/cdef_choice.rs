//! Whether a picture's CDEF rows go to the GPU or stay with dav1d, where `DAEDALUS_PATH`
//! does not say: measured on the decode itself, per picture.
//!
//! What wins depends on the device, the CPU's SIMD, the content (how many blocks CDEF
//! filters) and how the rows are handed over, so a workload apart from the decode cannot
//! say. Rows come in two kinds with a trial each: rows left on their way (one thread) and
//! rows the caller waits for (dav1d's task threads). A trial's first pictures count for
//! nothing ([`UNTIMED`]: one with dav1d, two warming the GPU up), then pictures alternate in the order of [`MEASURED`] until
//! each side has [`PER_SIDE`] of them. A picture's time is the host's time in its rows: for
//! the GPU, the row hooks and the end-of-frame wait; for dav1d, its `dav1d_cdef_brow` calls
//! (from the hook's decline to `cdef_row_filtered`). It counts once the picture is released,
//! when all its rows are done. The GPU is kept where its pictures took less time.
//!
//! A decision is kept for later runs in [`crate::decisions`] (per device, driver, CPU,
//! program, library version), per kind; one kind's decision may settle the other's where this
//! run has none for it (`implied`).
//! Where both kinds keep dav1d, a later decode sets no device up at all; where one kind
//! decided, the device is set up when a row first goes to the GPU. `DAEDALUS_TRIAL_FRAMES` asks for new trials, as for VP9's frame path.
//!
//! Every row of a picture gets its picture's answer, so that no picture is filtered partly
//! by each (dav1d's backups between rows would not match); pictures are independent.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Who filters a picture's rows.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pick {
    Gpu,
    Dav1d,
}

/// The kinds of rows: left on their way (one thread), or waited for (task threads).
pub const KINDS: [&str; 2] = ["deferred", "waited"];

/// The kind of a row.
pub fn kind(deferrable: bool) -> usize {
    usize::from(!deferrable)
}

/// A trial's first pictures, untimed: one left to dav1d, so that a decode of one picture
/// (FFmpeg's probe) sets no device up where the device waits for the GPU's first row; then
/// the GPU's warm-up (pipelines, buffers).
const UNTIMED: [Pick; 3] = [Pick::Dav1d, Pick::Gpu, Pick::Gpu];

/// The measured pictures' order, repeated: each side as often early as late.
const MEASURED: [Pick; 4] = [Pick::Dav1d, Pick::Gpu, Pick::Gpu, Pick::Dav1d];

/// Timed pictures each side needs.
pub const PER_SIDE: usize = 8;

/// A picture in the trial: its pick, whether it is timed, and its host time so far.
#[derive(Clone, Copy, Debug)]
struct Picture {
    pick: Pick,
    timed: bool,
    ns: u64,
}

/// The outcome of a trial: the pick, and the GPU's time per picture over dav1d's.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Decision {
    pub pick: Pick,
    pub ratio: f64,
}

/// One kind's trial (or its decision, kept from an earlier run).
#[derive(Debug, Default)]
pub struct Trial {
    handed: usize,
    pictures: HashMap<usize, Picture>,
    /// Per side (GPU, dav1d): total nanoseconds and pictures counted.
    sums: [(u64, usize); 2],
    decided: Option<Decision>,
}

impl Trial {
    /// The pick of the picture whose luma starts at `picture`: its own once it has one.
    pub fn pick(&mut self, picture: usize) -> Pick {
        if let Some(p) = self.pictures.get(&picture) {
            return p.pick;
        }
        if let Some(d) = self.decided {
            return d.pick;
        }
        let i = self.handed;
        self.handed += 1;
        let (pick, timed) = match i.checked_sub(UNTIMED.len()) {
            None => (UNTIMED[i], false),
            Some(k) => (MEASURED[k % MEASURED.len()], true),
        };
        self.pictures
            .insert(picture, Picture { pick, timed, ns: 0 });
        pick
    }

    /// Host time spent on the picture's rows.
    pub fn add(&mut self, picture: usize, ns: u64) {
        if let Some(p) = self.pictures.get_mut(&picture) {
            p.ns += ns;
        }
    }

    /// Some of the picture's rows went elsewhere than its pick.
    pub fn untimed(&mut self, picture: usize) {
        if let Some(p) = self.pictures.get_mut(&picture) {
            p.timed = false;
        }
    }

    /// The picture takes no more rows: counts it, and decides once each side has enough;
    /// returns the decision taken now.
    pub fn released(&mut self, picture: usize) -> Option<Decision> {
        let p = self.pictures.remove(&picture)?;
        if !p.timed || self.decided.is_some() {
            return None;
        }
        let side = &mut self.sums[usize::from(p.pick == Pick::Dav1d)];
        side.0 += p.ns;
        side.1 += 1;
        if self.sums.iter().all(|&(_, n)| n >= PER_SIDE) {
            let mean = |(ns, n): (u64, usize)| ns as f64 / n as f64;
            let ratio = mean(self.sums[0]) / mean(self.sums[1]).max(1.0);
            let pick = if ratio < 1.0 { Pick::Gpu } else { Pick::Dav1d };
            self.decided = Some(Decision { pick, ratio });
            return self.decided;
        }
        None
    }

    /// The mean host microseconds per picture of each side so far.
    pub fn means(&self) -> [Option<f64>; 2] {
        self.sums
            .map(|(ns, n)| (n > 0).then(|| ns as f64 / n as f64 / 1e3))
    }

    pub fn decision(&self) -> Option<Decision> {
        self.decided
    }
}

static TRIALS: Mutex<[Option<Trial>; 2]> = Mutex::new([None, None]);

fn with_trial<T>(kind: usize, f: impl FnOnce(&mut Trial) -> T) -> T {
    let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    f(trials[kind].get_or_insert_with(|| Trial {
        decided: cached()[kind],
        ..Trial::default()
    }))
}

/// The fact's name in `devices.tsv`.
fn fact(kind: usize) -> String {
    format!("cdef rows {}", KINDS[kind])
}

/// The decisions kept from earlier runs, per kind, read once: none where a trial is asked for.
pub fn cached() -> &'static [Option<Decision>; 2] {
    static CACHED: once_cell::sync::OnceCell<[Option<Decision>; 2]> =
        once_cell::sync::OnceCell::new();
    CACHED.get_or_init(|| {
        if crate::config::get().trial_asked() {
            return [None, None];
        }
        let names = [fact(0), fact(1)];
        let values = crate::decisions::get_all(&[&names[0], &names[1]]);
        [0, 1].map(|k| values[k].as_deref().and_then(parse))
    })
}

/// `gpu 0.850` or `dav1d 2.130`.
fn parse(value: &str) -> Option<Decision> {
    let (pick, ratio) = value.split_once(' ')?;
    let pick = match pick {
        "gpu" => Pick::Gpu,
        "dav1d" => Pick::Dav1d,
        _ => return None,
    };
    let ratio = ratio.trim().parse().ok().filter(|r: &f64| r.is_finite())?;
    Some(Decision { pick, ratio })
}

/// Whether every kind's decision kept from earlier runs is dav1d: no row will go to the GPU.
pub fn dav1d_kept() -> bool {
    cached()
        .iter()
        .all(|d| d.is_some_and(|d| d.pick == Pick::Dav1d))
}

/// Who filters the rows of the picture whose luma starts at `picture`.
pub fn pick(kind: usize, picture: usize) -> Pick {
    let pick = with_trial(kind, |t| t.pick(picture));
    LAST.with(|l| l.set(Some((kind, picture))));
    pick
}

/// Some of the picture's rows went elsewhere than its pick: it counts for nothing.
pub fn untimed(kind: usize, picture: usize) {
    with_trial(kind, |t| t.untimed(picture));
}

thread_local! {
    /// The picture whose row this thread handed over last (the end-of-frame wait counts for it).
    static LAST: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// When this thread declined a row to dav1d, for `cdef_row_filtered`.
    static DECLINED_AT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Host time the calling thread spent on the picture it handed over last.
pub fn add_to_last(ns: u64) {
    if let Some((kind, picture)) = LAST.with(|l| l.get()) {
        with_trial(kind, |t| t.add(picture, ns));
    }
}

/// The calling thread left its row to dav1d now.
pub fn declined_now() {
    DECLINED_AT.with(|d| d.set(Some(Instant::now())));
}

/// dav1d finished the row the calling thread declined.
pub fn dav1d_filtered() {
    if let Some(at) = DECLINED_AT.with(|d| d.take()) {
        add_to_last(at.elapsed().as_nanos() as u64);
    }
}

/// The picture whose luma starts at `picture` was released.
pub fn released(picture: usize) {
    let kept = {
        let mut trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
        release(&mut trials, cached(), picture)
    };
    for (kind, d, implied) in kept {
        if implied {
            crate::info!(
                "CDEF rows ({}): {} kept too (a row waited for costs the host what one left on its way does, and the wait)",
                KINDS[kind],
                name(d.pick)
            );
        } else {
            crate::info!(
                "CDEF rows ({}): {} kept (the GPU's pictures took {:.2} times dav1d's time)",
                KINDS[kind],
                name(d.pick),
                d.ratio
            );
        }
        // An implied decision keeps the ratio the measured kind gives as its bound.
        crate::decisions::keep(&fact(kind), &format!("{} {:.3}", name(d.pick), d.ratio));
    }
}

/// [`released`] on the trials, under their lock: the decisions taken now, as (kind, decision,
/// implied by the other kind's). A kind implied here is decided for this process at once,
/// before another thread can decide it otherwise.
fn release(
    trials: &mut [Option<Trial>; 2],
    cached: &[Option<Decision>; 2],
    picture: usize,
) -> Vec<(usize, Decision, bool)> {
    let mut kept = Vec::new();
    for kind in 0..KINDS.len() {
        let Some(d) = trials[kind].as_mut().and_then(|t| t.released(picture)) else {
            continue;
        };
        kept.push((kind, d, false));
        if let Some((other, pick)) = implied(kind, d.pick) {
            let t = trials[other].get_or_insert_with(|| Trial {
                decided: cached[other],
                ..Trial::default()
            });
            if t.decision().is_none() {
                let d = Decision {
                    pick,
                    ratio: d.ratio,
                };
                t.decided = Some(d);
                kept.push((other, d, true));
            }
        }
    }
    kept
}

fn name(pick: Pick) -> &'static str {
    match pick {
        Pick::Gpu => "gpu",
        Pick::Dav1d => "dav1d",
    }
}

/// What one kind's decision says of the other's: a waited row costs the GPU's side its
/// deferred cost and the wait, dav1d's side the same, so dav1d kept for deferred rows is kept
/// for waited ones, and the GPU kept for waited rows is kept for deferred ones. (Without this
/// a decode with one thread, which tries only deferred rows, would leave waited rows undecided
/// and every later decode would set a device up in case one came.)
fn implied(kind: usize, pick: Pick) -> Option<(usize, Pick)> {
    match (KINDS[kind], pick) {
        ("deferred", Pick::Dav1d) => Some((1, Pick::Dav1d)),
        ("waited", Pick::Gpu) => Some((0, Pick::Gpu)),
        _ => None,
    }
}

/// The stats line's part: each kind's trial, as `kind:pick(ratio)` or its means so far.
pub fn describe() -> String {
    let trials = TRIALS.lock().unwrap_or_else(|p| p.into_inner());
    let parts: Vec<String> = trials
        .iter()
        .zip(KINDS)
        .filter_map(|(t, name)| {
            let t = t.as_ref()?;
            Some(match t.decision() {
                Some(d) => format!("{name}:{:?}({:.2})", d.pick, d.ratio).to_lowercase(),
                None => {
                    let [g, c] = t
                        .means()
                        .map(|m| m.map_or("-".into(), |m| format!("{m:.0}")));
                    format!("{name}:undecided({g}/{c}us)")
                }
            })
        })
        .collect();
    match parts.is_empty() {
        true => "-".into(),
        false => parts.join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `n` pictures through a trial, each taking `gpu` or `dav1d` ns.
    fn run(t: &mut Trial, n: usize, gpu: u64, dav1d: u64) {
        for i in 0..n {
            let picture = 0x1000 * (i + 1);
            let ns = match t.pick(picture) {
                Pick::Gpu => gpu,
                Pick::Dav1d => dav1d,
            };
            t.add(picture, ns);
            t.released(picture);
        }
    }

    #[test]
    fn the_faster_side_is_kept_after_its_pictures() {
        let mut t = Trial::default();
        run(&mut t, UNTIMED.len() + 2 * PER_SIDE - 1, 700, 1000);
        assert_eq!(t.decision(), None, "one picture short");
        run(&mut t, 1, 700, 1000);
        let d = t.decision().expect("decided");
        assert_eq!(d.pick, Pick::Gpu);
        assert!((d.ratio - 0.7).abs() < 1e-9, "{d:?}");
        let mut t = Trial::default();
        run(&mut t, UNTIMED.len() + 2 * PER_SIDE, 1000, 1000);
        assert_eq!(t.decision().map(|d| d.pick), Some(Pick::Dav1d), "ties stay");
    }

    #[test]
    fn a_decision_implies_the_other_kind_only_where_the_wait_cannot_change_it() {
        assert_eq!(implied(0, Pick::Dav1d), Some((1, Pick::Dav1d)));
        assert_eq!(implied(1, Pick::Gpu), Some((0, Pick::Gpu)));
        assert_eq!(implied(0, Pick::Gpu), None);
        assert_eq!(implied(1, Pick::Dav1d), None);
    }

    /// A deferred trial that keeps dav1d decides waited rows too, in memory at once, unless
    /// they have a decision of their own (kept, or measured in this run).
    #[test]
    fn dav1d_kept_for_deferred_rows_is_kept_for_waited_ones_without_their_own() {
        let decide = |waited: Option<Trial>, cached: [Option<Decision>; 2]| {
            let mut trials = [Some(Trial::default()), waited];
            let mut kept = Vec::new();
            for p in 0..UNTIMED.len() + 2 * PER_SIDE {
                let t = trials[0].as_mut().unwrap();
                let pick = t.pick(p);
                t.add(p, if pick == Pick::Gpu { 300 } else { 100 });
                kept.extend(release(&mut trials, &cached, p));
            }
            (kept, trials[1].as_ref().and_then(|t| t.decision()))
        };
        let (kept, waited) = decide(None, [None, None]);
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(matches!(
            kept[0],
            (
                0,
                Decision {
                    pick: Pick::Dav1d,
                    ..
                },
                false
            )
        ));
        assert!(matches!(
            kept[1],
            (
                1,
                Decision {
                    pick: Pick::Dav1d,
                    ..
                },
                true
            )
        ));
        assert_eq!(waited.map(|d| d.pick), Some(Pick::Dav1d));
        let own = Decision {
            pick: Pick::Gpu,
            ratio: 0.5,
        };
        let (kept, waited) = decide(None, [None, Some(own)]);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(waited, Some(own));
    }

    #[test]
    fn kept_decisions_parse_and_bad_ones_do_not() {
        assert_eq!(parse("gpu 0.850").map(|d| d.pick), Some(Pick::Gpu));
        assert_eq!(parse("dav1d 2.130").map(|d| d.ratio), Some(2.13));
        for bad in ["gpu", "cpu 0.5", "dav1d inf", "dav1d x", ""] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_picture_keeps_its_pick_and_the_warm_up_is_not_counted() {
        let mut t = Trial::default();
        // The first picture goes to dav1d, the warm-up's to the GPU; none counts, however slow.
        for (i, pick) in UNTIMED.into_iter().enumerate() {
            assert_eq!(t.pick(i + 1), pick);
            t.add(i + 1, 1 << 40);
            t.released(i + 1);
        }
        assert_eq!(t.means(), [None, None]);
        let first = t.pick(77);
        for _ in 0..5 {
            assert_eq!(t.pick(77), first, "every row of a picture alike");
        }
        // A picture not timed whole (some rows went elsewhere) counts for nothing either.
        t.add(77, 5);
        t.untimed(77);
        t.released(77);
        assert_eq!(t.means(), [None, None]);
    }
}
