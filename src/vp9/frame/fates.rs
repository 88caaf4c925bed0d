//! Who reconstructs each frame in flight, and what waits for it.
//!
//! A frame goes to the queue only once each reference the GPU reconstructs has been submitted
//! ([`Fates::wait_references_submitted`]), so that a reference's work is ahead of its readers'
//! and no submission waits on a later one. A frame waits for nothing else: frames of
//! other decoders, and frames it does not read, go on the queue in whatever order they come.
//!
//! With frame threads a frame goes to the GPU while the frames it reads may still be in
//! flight: a reference the GPU reconstructs is read on the queue behind its own work, without
//! waiting for the GPU. But the GPU's result for a frame
//! is final only once its thread has seen its status: a transform whose 16-bit lanes overflow,
//! a failure or a frame parsed only in part sends it to FFmpeg's second pass after all, which
//! writes it again on the CPU. A frame that read it on the GPU before then read pixels that are
//! not FFmpeg's, and must be reconstructed again too, and so must the frames that read that one
//! the same way.
//!
//! So each frame is, until its end:
//! - **pending**: the GPU reconstructs it and its thread has not decided yet; the frames whose
//!   submissions read it meanwhile are noted as its readers;
//! - **on the CPU**: FFmpeg reconstructs it (it was left to FFmpeg from the start, fell back, or
//!   read a frame that fell back). A frame's submission waits for each such reference to end,
//!   and reads FFmpeg's pixels.
//!
//! A frame that falls back takes its readers (and theirs) with it at once, before their own
//! threads decide: frames that begin submitting after that wait for them instead of reading
//! them, which keeps the chain as short as the frames already on the queue. A frame decides
//! only once every pending reference it read has: if one fell back, so does it.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};

/// A frame the GPU reconstructs, by the order frames began ([`next_seq`]); frames FFmpeg takes
/// from the start have none.
pub type Seq = u64;

/// The next frame's [`Seq`].
pub fn next_seq() -> Seq {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Relaxed)
}

enum State {
    /// The GPU reconstructs it; these frames read it before it was decided.
    Pending(Vec<Seq>),
    /// FFmpeg reconstructs it, until its end.
    Cpu,
}

struct Entry {
    /// The frame's `data[0]`, which names its buffer.
    data0: usize,
    seq: Option<Seq>,
    state: State,
    /// The GPU reconstructs it and it is not submitted yet: its readers wait.
    submitting: bool,
}

pub struct Fates {
    /// A few at a time: the frames of the decoders' threads.
    frames: Mutex<Vec<Entry>>,
    changed: Condvar,
}

pub static FATES: Fates = Fates {
    frames: Mutex::new(Vec::new()),
    changed: Condvar::new(),
};

impl Fates {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        self.frames.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn wait<'a>(
        &self,
        guard: std::sync::MutexGuard<'a, Vec<Entry>>,
    ) -> std::sync::MutexGuard<'a, Vec<Entry>> {
        self.changed.wait(guard).unwrap_or_else(|p| p.into_inner())
    }

    /// A new frame in the buffer at `data0`: the entry of a frame that was there is over.
    fn insert(&self, entry: Entry) {
        let mut f = self.lock();
        f.retain(|e| e.data0 != entry.data0);
        f.push(entry);
        self.changed.notify_all();
    }

    /// Frame `seq` in the buffer at `data0` is reconstructed on the GPU: pending.
    pub fn on_gpu(&self, seq: Seq, data0: usize) {
        self.insert(Entry {
            data0,
            seq: Some(seq),
            state: State::Pending(Vec::new()),
            submitting: true,
        });
    }

    /// The frame in the buffer at `data0` is FFmpeg's to reconstruct, until [`Fates::end`].
    pub fn on_cpu(&self, data0: usize) {
        self.insert(Entry {
            data0,
            seq: None,
            state: State::Cpu,
            submitting: false,
        });
    }

    /// Frame `seq` is submitted (or will not be): its readers may submit.
    pub fn submitted(&self, seq: Seq) {
        let mut f = self.lock();
        if let Some(e) = f.iter_mut().find(|e| e.seq == Some(seq) && e.submitting) {
            e.submitting = false;
            self.changed.notify_all();
        }
    }

    /// Waits until every one of `references` (by `data[0]`; 0: none) the GPU reconstructs is
    /// submitted. (They are earlier frames of the same decoder, whose submissions wait for
    /// nothing later.)
    pub fn wait_references_submitted(&self, references: &[usize]) {
        let mut f = self.lock();
        while any_submitting(&f, references) {
            f = self.wait(f);
        }
    }

    /// The frame in the buffer at `data0` ended: whatever reads it now reads it whole.
    pub fn end(&self, data0: usize) {
        let mut f = self.lock();
        let before = f.len();
        f.retain(|e| e.data0 != data0);
        if f.len() != before {
            self.changed.notify_all();
        }
    }

    /// Before frame `seq`'s submission reads its references (by `data[0]`; 0: none): waits for
    /// those FFmpeg reconstructs to end, and notes `seq` as a reader of those still pending.
    /// Returns the pending ones (their place in the order, and `data[0]`), which
    /// [`Fates::decide`] waits for.
    pub fn read_references(&self, seq: Seq, references: &[usize]) -> Vec<(Seq, usize)> {
        let mut f = self.lock();
        while any_on_cpu(&f, references) {
            f = self.wait(f);
        }
        note_reader(&mut f, seq, references)
    }

    /// Frame `seq`, whose GPU work is over, decides: once each pending reference it read has
    /// decided, it keeps the GPU's result where `gpu_done` and nothing it read fell back
    /// (true), else it falls back (false) and takes its readers with it.
    pub fn decide(&self, seq: Seq, gpu_done: bool, read: &[(Seq, usize)]) -> bool {
        let mut f = self.lock();
        let pending = |f: &[Entry], s: Seq| {
            f.iter()
                .any(|e| e.seq == Some(s) && matches!(e.state, State::Pending(_)))
        };
        while read.iter().any(|&(r, _)| pending(&f, r)) {
            f = self.wait(f);
        }
        let Some(at) = f.iter().position(|e| e.seq == Some(seq)) else {
            // (Not registered: nothing read it.)
            return gpu_done;
        };
        let kept = gpu_done && matches!(f[at].state, State::Pending(_));
        if kept {
            f.swap_remove(at);
        } else {
            fall_back(&mut f, seq);
        }
        self.changed.notify_all();
        kept
    }

    /// Whether frame `seq` has been taken along by a reference that fell back.
    #[cfg(test)]
    fn fell_back(&self, seq: Seq) -> bool {
        self.lock()
            .iter()
            .any(|e| e.seq == Some(seq) && matches!(e.state, State::Cpu))
    }
}

/// Whether one of `references` (by `data[0]`; 0: none) is still to be submitted.
fn any_submitting(frames: &[Entry], references: &[usize]) -> bool {
    references
        .iter()
        .any(|&d| d != 0 && frames.iter().any(|e| e.data0 == d && e.submitting))
}

/// Whether one of `references` (by `data[0]`; 0: none) is FFmpeg's to reconstruct.
fn any_on_cpu(frames: &[Entry], references: &[usize]) -> bool {
    references.iter().any(|&d| {
        d != 0
            && frames
                .iter()
                .any(|e| e.data0 == d && matches!(e.state, State::Cpu))
    })
}

/// Notes `seq` as a reader of those of `references` still pending, and returns them.
fn note_reader(frames: &mut [Entry], seq: Seq, references: &[usize]) -> Vec<(Seq, usize)> {
    let mut pending = Vec::new();
    for e in frames.iter_mut().filter(|e| references.contains(&e.data0)) {
        if let (State::Pending(readers), Some(r)) = (&mut e.state, e.seq) {
            if r != seq && !readers.contains(&seq) {
                readers.push(seq);
                pending.push((r, e.data0));
            }
        }
    }
    pending
}

/// Frame `seq` goes to the CPU, and every pending frame that read it, transitively.
fn fall_back(frames: &mut [Entry], seq: Seq) {
    let mut doomed = vec![seq];
    while let Some(s) = doomed.pop() {
        if let Some(e) = frames.iter_mut().find(|e| e.seq == Some(s)) {
            if let State::Pending(readers) = std::mem::replace(&mut e.state, State::Cpu) {
                doomed.extend(readers);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fates() -> Fates {
        Fates {
            frames: Mutex::new(Vec::new()),
            changed: Condvar::new(),
        }
    }

    #[test]
    fn a_fallback_takes_the_frames_that_read_it_along() {
        let f = fates();
        f.on_gpu(1, 0x1000);
        f.on_gpu(2, 0x2000);
        f.on_gpu(3, 0x3000);
        assert_eq!(f.read_references(2, &[0x1000, 0, 0]), vec![(1, 0x1000)]);
        assert_eq!(
            f.read_references(3, &[0x2000, 0x1000]),
            vec![(1, 0x1000), (2, 0x2000)]
        );
        assert!(!f.decide(1, false, &[]));
        // Taken along before their own threads decide.
        assert!(f.fell_back(2) && f.fell_back(3));
        assert!(!f.decide(2, true, &[(1, 0x1000)]));
        assert!(!f.decide(3, true, &[(1, 0x1000), (2, 0x2000)]));
    }

    #[test]
    fn frames_that_read_kept_references_keep_theirs() {
        let f = fates();
        f.on_gpu(1, 0x1000);
        f.on_gpu(2, 0x2000);
        assert_eq!(f.read_references(2, &[0x1000]), vec![(1, 0x1000)]);
        assert!(f.decide(1, true, &[]));
        assert!(f.decide(2, true, &[(1, 0x1000)]));
        // A frame decided on the GPU is final: nothing waits for it, nothing reads it pending.
        f.on_gpu(3, 0x3000);
        assert!(f.read_references(3, &[0x1000, 0x2000]).is_empty());
    }

    #[test]
    fn a_frame_decides_after_the_references_it_read() {
        let f = std::sync::Arc::new(fates());
        f.on_gpu(1, 0x1000);
        f.on_gpu(2, 0x2000);
        assert_eq!(f.read_references(2, &[0x1000]), vec![(1, 0x1000)]);
        let g = f.clone();
        let second = std::thread::spawn(move || g.decide(2, true, &[(1, 0x1000)]));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!second.is_finished(), "decided before its reference");
        assert!(!f.decide(1, false, &[]));
        assert!(!second.join().unwrap());
    }

    #[test]
    fn a_frame_waits_only_for_the_references_still_to_submit() {
        let f = std::sync::Arc::new(fates());
        f.on_gpu(1, 0x1000);
        f.on_gpu(2, 0x2000);
        // A frame that reads frame 2 only: frame 1 (of any decoder) may stay behind it.
        f.submitted(2);
        f.wait_references_submitted(&[0x2000, 0]);
        let g = f.clone();
        let reader = std::thread::spawn(move || g.wait_references_submitted(&[0x1000, 0x2000]));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!reader.is_finished(), "submitted before its reference");
        f.submitted(1);
        reader.join().unwrap();
    }

    #[test]
    fn a_submission_waits_for_references_ffmpeg_reconstructs() {
        let f = std::sync::Arc::new(fates());
        f.on_gpu(1, 0x1000);
        assert!(!f.decide(1, false, &[]));
        f.on_gpu(2, 0x2000);
        let g = f.clone();
        let reader = std::thread::spawn(move || g.read_references(2, &[0x1000]));
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !reader.is_finished(),
            "read a frame FFmpeg still reconstructs"
        );
        f.end(0x1000);
        assert!(reader.join().unwrap().is_empty());
        assert!(f.decide(2, true, &[]));
    }
}
