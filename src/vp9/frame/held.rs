//! The frames a decoder context holds while the GPU reconstructs them ([`super::HELD`]), oldest
//! first: those still with its submission thread ([`super::submit_thread`]), which records and
//! submits each while the decoder parses the next, and those back from it, submitted. The
//! decoder finishes and ends the oldest first, taking it back where the thread still has it.

use super::submit_thread::SubmitThread;
use std::collections::VecDeque;

/// A held frame on its way to the GPU.
pub trait Submission: Send + 'static {
    /// Records and submits its work; what fails (a panic included) leaves the frame to
    /// FFmpeg's second pass.
    fn submit(&mut self);
    /// The frame's `data[0]`, which names it.
    fn data0(&self) -> usize;
}

pub(super) struct HeldFrames<S: Submission> {
    /// Submitted, oldest first: older than those the thread has.
    back: VecDeque<S>,
    thread: Option<SubmitThread<S>>,
    /// The `data[0]` of the frames the thread has, oldest first.
    with_thread: VecDeque<usize>,
    /// Set where the thread could not start: frames are submitted on the decoder's thread.
    no_thread: bool,
}

impl<S: Submission> Default for HeldFrames<S> {
    fn default() -> Self {
        HeldFrames {
            back: VecDeque::new(),
            thread: None,
            with_thread: VecDeque::new(),
            no_thread: false,
        }
    }
}

impl<S: Submission> HeldFrames<S> {
    /// Holds a parsed frame, submitted on the thread (started at the first).
    pub fn hold(&mut self, mut s: S) {
        if self.thread.is_none() && !self.no_thread {
            match SubmitThread::start(S::submit) {
                Ok(thread) => self.thread = Some(thread),
                Err(why) => {
                    crate::log::once(
                        crate::log::Level::Warn,
                        "submission thread",
                        format_args!(
                            "no thread to submit frames on ({why}): the decoder's own submits them"
                        ),
                    );
                    self.no_thread = true;
                }
            }
        }
        let data0 = s.data0();
        if let Some(thread) = self.thread.as_mut() {
            match thread.send(s) {
                Ok(()) => {
                    self.with_thread.push_back(data0);
                    return;
                }
                Err(back) => {
                    // (Gone: what it had comes first.)
                    s = back;
                    self.take_all_back();
                    self.thread = None;
                    self.no_thread = true;
                }
            }
        }
        s.submit();
        self.back.push_back(s);
    }

    /// Takes back every frame the thread has, once submitted.
    fn take_all_back(&mut self) {
        while self.take_oldest_back() {}
    }

    /// Takes back the oldest frame the thread has; false where it has none.
    fn take_oldest_back(&mut self) -> bool {
        let Some(s) = self.thread.as_mut().and_then(|t| t.take_oldest()) else {
            if !self.with_thread.is_empty() {
                // (Unreachable while the thread sends back what it received.)
                crate::error!("the submission thread ended with frames it had");
                self.with_thread.clear();
            }
            return false;
        };
        self.with_thread.pop_front();
        self.back.push_back(s);
        true
    }

    /// The oldest held frame, submitted.
    pub fn oldest(&mut self) -> Option<&mut S> {
        if self.back.is_empty() {
            self.take_oldest_back();
        }
        self.back.front_mut()
    }

    /// The oldest held frame, taken out.
    pub fn pop_oldest(&mut self) -> Option<S> {
        self.oldest()?;
        self.back.pop_front()
    }

    /// Every held frame, oldest first, submitted.
    pub fn drain(&mut self) -> std::collections::vec_deque::Drain<'_, S> {
        self.take_all_back();
        self.back.drain(..)
    }

    /// Whether a frame is held.
    pub fn any(&self) -> bool {
        !self.with_thread.is_empty() || !self.back.is_empty()
    }

    /// Whether the frame of `data0` is held.
    pub fn holds(&self, data0: usize) -> bool {
        self.with_thread.contains(&data0) || self.back.iter().any(|s| s.data0() == data0)
    }
}

#[cfg(test)]
mod tests {
    use super::{HeldFrames, Submission};

    /// A frame that counts its submissions.
    struct Counted {
        data0: usize,
        submitted: u32,
    }

    impl Submission for Counted {
        fn submit(&mut self) {
            self.submitted += 1;
        }
        fn data0(&self) -> usize {
            self.data0
        }
    }

    /// Held frames come back oldest first, each submitted once, and are known as held until
    /// taken out, whether the thread still has them or not.
    #[test]
    fn held_frames_come_back_oldest_first_submitted_once() {
        let mut held = HeldFrames::default();
        for data0 in [0x10, 0x20, 0x30] {
            held.hold(Counted {
                data0,
                submitted: 0,
            });
        }
        assert!(held.any() && [0x10, 0x20, 0x30].iter().all(|&d| held.holds(d)));
        assert!(!held.holds(0x40));
        let oldest = held.oldest().expect("held");
        assert_eq!((oldest.data0, oldest.submitted), (0x10, 1));
        let first = held.pop_oldest().expect("held");
        assert_eq!(first.data0, 0x10);
        assert!(!held.holds(0x10) && held.holds(0x20));
        held.hold(Counted {
            data0: 0x40,
            submitted: 0,
        });
        let rest: Vec<_> = held.drain().map(|c| (c.data0, c.submitted)).collect();
        assert_eq!(rest, [(0x20, 1), (0x30, 1), (0x40, 1)]);
        assert!(held.oldest().is_none() && !held.any());
    }
}
