//! What the parts' unit tests share: a recorder on the device (lavapipe in CI), registered
//! pixels, and transform calls with their expected result from the CPU reference.

use super::call::{Area, Op, Origin};
use super::recorder::Recorder;
use crate::kernels::itx::{Transform, Tx1d, TxSize};
use crate::kernels::mc::{McFilter, McFunction};
use crate::testing::Rng;
use std::alloc::{self, Layout};

/// A recorder of its own (not the thread's), on the GPU path. A test that needs it fails
/// where no device is usable.
pub(super) fn recorder() -> Recorder {
    let mut r = Recorder::new();
    r.choose_backend();
    assert!(
        r.gpu.is_some(),
        "this test needs a usable Vulkan device (lavapipe will do): none was found"
    );
    r
}

/// Page-aligned pixels registered with daedalus for the value's life and imported, so that the
/// batch addresses them in place, filled from `seed`, rows [`Pixels::STRIDE`] apart.
pub(super) struct Pixels {
    ptr: *mut u8,
    len: usize,
}

impl Pixels {
    pub(super) const STRIDE: usize = 256;
    const ROWS: usize = 64;

    pub(super) fn new(seed: u64) -> Pixels {
        let layout = Layout::from_size_align(Self::STRIDE * Self::ROWS, 4096).unwrap();
        // SAFETY: the layout is not empty.
        let ptr = unsafe { alloc::alloc(layout) };
        assert!(!ptr.is_null(), "out of memory");
        let mut rng = Rng(seed);
        for i in 0..layout.size() {
            // SAFETY: inside the allocation.
            unsafe { *ptr.add(i) = rng.below(256) as u8 };
        }
        crate::regions::register(ptr as usize, layout.size()).expect("registered");
        assert!(
            crate::regions::containing(ptr as usize).is_some_and(|r| r.in_place.is_some()),
            "these tests need a device that imports host memory (lavapipe does) and frames not \
             from the pool (DAEDALUS_TEST_MEMORY unset): the end-to-end tests cover the rest"
        );
        Pixels {
            ptr,
            len: layout.size(),
        }
    }

    /// The pixel at `row`, `col`.
    pub(super) fn at(&self, row: usize, col: usize) -> *mut u8 {
        assert!(row < Self::ROWS && col < Self::STRIDE);
        // SAFETY: inside the allocation.
        unsafe { self.ptr.add(row * Self::STRIDE + col) }
    }

    /// The `w` x `h` block at `row`, `col`.
    pub(super) fn area(&self, row: usize, col: usize, w: usize, h: usize) -> Area {
        Area {
            at: self.at(row, col),
            stride: Self::STRIDE as isize,
            w,
            h,
        }
    }

    pub(super) fn bytes(&self) -> Vec<u8> {
        // SAFETY: the whole allocation, initialised in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }.to_vec()
    }
}

impl Drop for Pixels {
    fn drop(&mut self) {
        // Unregistered, but never freed: a batch may keep its import of them alive after the
        // test (a poisoned recorder leaks its batch on purpose), and imported memory must stay
        // valid while the import exists.
        crate::regions::unregister(self.ptr as usize);
    }
}

/// Records `op` on the pixel at `row`, `col` of `px`, as an entry point does.
///
/// # Safety
/// What `op` points to (coefficients, a source) must be valid, as for [`Recorder::record`].
pub(super) unsafe fn record(r: &mut Recorder, op: &Op, px: &Pixels, row: usize, col: usize) {
    r.begin_entry();
    r.record(op, px.at(row, col), Pixels::STRIDE as isize, Origin::Api);
}

/// A 4x4 `idct_idct` with random coefficients of every position (a full transform).
pub(super) struct Itx4 {
    pub(super) coefs: Vec<i16>,
}

impl Itx4 {
    pub(super) const TX: Transform = Transform::new(TxSize::T4, Tx1d::Dct, Tx1d::Dct);

    pub(super) fn new(seed: u64) -> Itx4 {
        let mut rng = Rng(seed);
        let coefs = (0..16).map(|_| rng.below(256) as i16 - 128).collect();
        Itx4 { coefs }
    }

    /// The call, on this transform's own copy of the coefficients (recording it zeroes them,
    /// as FFmpeg's functions do); its pixels are where it is recorded.
    pub(super) fn op(&mut self) -> Op<'static> {
        Op::Itx {
            tx: Self::TX,
            block: self.coefs.as_mut_ptr(),
            eob: 16,
        }
    }

    /// Applies it with the CPU reference at `row`, `col` of a plain copy of [`Pixels`].
    pub(super) fn apply_reference(&self, pixels: &mut [u8], row: usize, col: usize) {
        let at = row * Pixels::STRIDE + col;
        let mut coefs = self.coefs.clone();
        let op = Op::Itx {
            tx: Self::TX,
            block: coefs.as_mut_ptr(),
            eob: 16,
        };
        assert!(at + 3 * Pixels::STRIDE + 4 <= pixels.len());
        // SAFETY: the block lies inside `pixels` (checked), the coefficients in `coefs`.
        let stride = Pixels::STRIDE as isize;
        unsafe { op.run_at_once(pixels[at..].as_mut_ptr(), stride, Origin::Api) };
    }
}

/// An 8x8 full-pel copy from `src`, rows [`Pixels::STRIDE`] apart (a source that needs no
/// taps: what it reads is the block itself).
pub(super) fn copy8(src: *const u8) -> Op<'static> {
    let f = McFunction {
        width: 8,
        filter: McFilter::Regular,
        avg: false,
        h: false,
        v: false,
    };
    Op::Mc {
        f,
        src,
        src_stride: Pixels::STRIDE as isize,
        h: 8,
        mx: 0,
        my: 0,
    }
}
