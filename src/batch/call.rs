//! The call as the recorder handles it ([`Op`]), the pixels it touches ([`Area`]), who made
//! it ([`Origin`]), and the words of its jobs ([`Job`]).

use super::levels::Block;
use crate::kernels::cdef::{self, CdefCall};
use crate::kernels::itx::Transform;
use crate::kernels::lf::{LfDir, LfFunction};
use crate::kernels::lf_sb::{self, SbPlane};
use crate::kernels::mc::McFunction;
pub use crate::kernels::Job;
use crate::kernels::Kernel;

/// One call of a DSP function, as the recorder handles it. It lives no longer than the call
/// that records it: what it points to is captured into the batch then.
#[derive(Clone, Copy)]
pub enum Op<'a> {
    Itx {
        tx: Transform,
        block: *mut i16,
        eob: i32,
    },
    Mc {
        f: McFunction,
        src: *const u8,
        src_stride: isize,
        h: i32,
        mx: i32,
        my: i32,
    },
    Lf {
        f: LfFunction,
        e: i32,
        i: i32,
        h: i32,
    },
    /// One plane of a superblock's loop filter (`lf_sb`), its columns pass then its rows
    /// pass; its destination is the superblock's first pixel.
    LfSb { plane: &'a SbPlane<'a> },
    /// AV1's CDEF (dav1d's `fb[]`): its destination is `call.dst`.
    Cdef { call: CdefCall },
}

/// Pixels a call (or a reader of the decoder) reads and writes: `w` x `h` bytes from `at`,
/// rows `stride` apart.
#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub at: *mut u8,
    pub stride: isize,
    pub w: usize,
    pub h: usize,
}

impl Area {
    /// First and one-past-last byte; `first > end` when the block wraps the address space.
    pub(super) fn span(&self) -> (usize, usize) {
        let last_row = (self.h as isize - 1).wrapping_mul(self.stride);
        let first = (self.at as usize).wrapping_add(last_row.min(0) as usize);
        let end = (self.at as usize)
            .wrapping_add(last_row.max(0) as usize)
            .wrapping_add(self.w);
        (first, end)
    }

    pub(super) fn pixel(&self, row: usize, col: usize) -> *mut u8 {
        self.at
            .wrapping_offset(row as isize * self.stride + col as isize)
    }
}

/// An area inside registered region `id` (`start..end`) as the levels see it.
pub(super) fn block_in(id: u64, start: usize, end: usize, a: &Area) -> Block {
    Block {
        region: id,
        region_len: end - start,
        offset: a.at as usize - start,
        stride: a.stride,
        w: a.w,
        h: a.h,
    }
}

pub(super) fn spans_meet(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

impl Op<'_> {
    /// The pixels the call reads and writes when its destination is `dst`.
    pub(super) fn rect(&self, dst: *mut u8, stride: isize) -> Area {
        let (w, h) = match *self {
            Op::Itx { tx, .. } => (tx.size.n(), tx.size.n()),
            Op::Mc { f, h, .. } => (f.width, h.max(1) as usize),
            Op::Cdef { call } => {
                let (w, h) = call.dims();
                (w * call.bytes_per_pixel(), h)
            }
            Op::Lf { f, .. } => {
                let reach = f.reach();
                return match f.dir() {
                    LfDir::H => Area {
                        at: dst.wrapping_sub(reach),
                        stride,
                        w: 2 * reach,
                        h: f.lines(),
                    },
                    LfDir::V => Area {
                        at: dst.wrapping_offset(-(reach as isize) * stride),
                        stride,
                        w: f.lines(),
                        h: 2 * reach,
                    },
                };
            }
            Op::LfSb { plane } => {
                return Area {
                    at: dst.wrapping_offset(plane.top as isize * stride + plane.left as isize),
                    stride,
                    w: (plane.right - plane.left) as usize,
                    h: (plane.bottom - plane.top) as usize,
                };
            }
        };
        Area {
            at: dst,
            stride,
            w,
            h,
        }
    }

    /// The source pixels a motion compensation reads.
    pub(super) fn source(&self) -> Option<Area> {
        let Op::Mc {
            f,
            src,
            src_stride,
            h,
            ..
        } = *self
        else {
            return None;
        };
        let win = f.window();
        Some(Area {
            at: src.wrapping_offset(-(win.above as isize) * src_stride - win.left as isize)
                as *mut u8,
            stride: src_stride,
            w: win.width(f.width),
            h: win.height(h as usize),
        })
    }

    /// The kernel of a decoder's own that a device may lack (see `Pipelines::kernels`).
    pub(super) fn optional_kernel(&self) -> Option<Kernel> {
        match self {
            Op::LfSb { .. } => Some(Kernel::LfSb),
            Op::Cdef { .. } => Some(Kernel::Cdef),
            Op::Itx { .. } | Op::Mc { .. } | Op::Lf { .. } => None,
        }
    }

    /// Arena room (in coefficients) that recording the call takes.
    pub(super) fn room(&self) -> usize {
        match *self {
            Op::Itx { tx, eob, .. } if !tx.is_dc_only_call(eob) => tx.coefs(),
            Op::Mc { .. } => {
                let s = self.source().expect("MC has a source");
                (s.w * s.h).div_ceil(2)
            }
            Op::Cdef { .. } => cdef::WINDOW_LEN,
            Op::LfSb { .. } => lf_sb::RECORD_BYTES / 2,
            _ => 0,
        }
    }
}

/// A job with its pixels' host address: the CPU path's record, run in recorded order at the
/// flush, and the GPU path's record of a job on copied pixels (with its level and where its
/// source is: 0 the arena, else a slot).
pub(super) struct Call {
    pub(super) dst: *mut u8,
    pub(super) stride: isize,
    pub(super) kernel: u8,
    pub(super) job: Job,
    pub(super) level: u32,
    pub(super) source: u8,
}

impl Call {
    /// Its job's kernel (`kernel` is the kernel's index).
    pub(super) fn kernel(&self) -> Kernel {
        Kernel::from_index(self.kernel as usize).expect("a recorded kernel")
    }
}

/// What a call's jobs point at besides their pixels: a transform's coefficients in the arena
/// (or its DC value), a motion compensation's source pixel under the block's top-left and the
/// source's stride.
#[derive(Clone, Copy)]
pub(super) struct Captured {
    pub(super) word: u32,
    pub(super) stride: isize,
}

impl Captured {
    /// What [`Recorder::capture`](super::recorder::Recorder::capture) returned for `op`.
    pub(super) fn of(op: &Op, word: u32) -> Captured {
        Captured {
            word,
            stride: op.source().map_or(0, |win| win.w as isize),
        }
    }
}

/// A job word 0 (its pixel) that tells the shaders to skip the job: a call taken out of the
/// batch again (after a panic while it was placed). No imported buffer reaches 4 GiB, so no
/// pixel has this offset.
pub const SKIP_JOB: u32 = u32::MAX;

/// Who made a call, which decides two things: what happens to a call whose pixels lie outside
/// every registered region, and which function runs a block whose 16-bit lanes overflow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Origin {
    /// The public API: such calls are recorded with their pixels copied through the staging
    /// buffer; every block gets FFmpeg's C result (the reference).
    Api,
    /// FFmpeg's decoder (the provider): calls on transient buffers (which the decoder reads
    /// back right after the call) run at once with FFmpeg's own function, and so do blocks whose
    /// 16-bit lanes overflow (damaged streams), so that the result is the decoder's own.
    Ffmpeg,
}

/// A transform job's flags word: FROM_FFMPEG and the call's eob (shaders/itx_main.glsl).
pub(super) fn job_flags(origin: Origin, eob: i32) -> u32 {
    match origin {
        Origin::Api => 0,
        Origin::Ffmpeg => 1 | ((eob.clamp(0, 0xffff) as u32) << 16),
    }
}

/// A transform job's flag (beside FROM_FFMPEG, which the shaders read): its coefficients did
/// not prove that no 16-bit lane overflows, so FFmpeg's function may redo it after the
/// submission and nothing of the batch comes after it on its pixels.
pub(super) const MAY_REDO: u32 = 2;

pub(super) fn job_eob(flags: u32) -> i32 {
    (flags >> 16) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area(at: usize, stride: isize, w: usize, h: usize) -> Area {
        Area {
            at: at as *mut u8,
            stride,
            w,
            h,
        }
    }

    /// A block's span runs from its first byte to one past its last, whichever way its rows
    /// go, and is reversed where the block wraps the address space; `pixel` steps by the
    /// stride. (The addresses are never read.)
    #[test]
    fn a_span_covers_every_row_either_way_and_a_wrapping_block_is_reversed() {
        assert_eq!(area(1000, 100, 8, 4).span(), (1000, 1308));
        assert_eq!(area(1000, -100, 8, 4).span(), (700, 1008));
        assert_eq!(area(1000, 100, 8, 1).span(), (1000, 1008));
        let (first, end) = area(usize::MAX - 100, 100, 8, 4).span();
        assert!(first > end);
        assert_eq!(area(1000, -100, 8, 4).pixel(2, 3) as usize, 803);
        assert_eq!(area(1000, 100, 8, 4).pixel(3, 7) as usize, 1307);
        // Spans meet where they share a byte; adjacent ones do not.
        assert!(spans_meet((1000, 1308), (1307, 2000)));
        assert!(!spans_meet((1000, 1308), (1308, 2000)));
    }

    /// A transform job's flags carry FROM_FFMPEG and the eob (clamped to 16 bits) for FFmpeg's
    /// decoder and nothing for the API, and MAY_REDO beside them changes neither.
    #[test]
    fn a_transform_job_s_flags_give_back_its_eob_beside_may_redo() {
        for eob in [0, 1, 10, 1024, 0xffff] {
            let flags = job_flags(Origin::Ffmpeg, eob);
            assert_eq!(flags & 1, 1, "FROM_FFMPEG");
            assert_eq!(job_eob(flags), eob);
            assert_eq!(job_eob(flags | MAY_REDO), eob);
            assert_eq!(flags & MAY_REDO, 0);
        }
        assert_eq!(job_eob(job_flags(Origin::Ffmpeg, 0x1_0000)), 0xffff);
        assert_eq!(job_eob(job_flags(Origin::Ffmpeg, -5)), 0);
        assert_eq!(job_flags(Origin::Api, 1024), 0);
    }
}
