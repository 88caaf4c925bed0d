//! The CDEF reference (`src/kernels/cdef.rs`) against dav1d's own C functions (the static,
//! asm-disabled dav1d 1.0.0 that `scripts/setup` builds): every block size, edge-flag
//! combination and direction, random strengths and damping in the ranges dav1d passes, 8, 10
//! and 12 bits, random pixels and the extremes. The whole buffer is compared, so a write
//! outside the block fails too.

mod common;

use common::{dav1d_c, CdefFn, Rng};
use daedalus::kernels::cdef::{self, Strengths, BLOCK_SIZES, WINDOW_LEN};
use daedalus::kernels::Pixel;

/// A frame area with the block at (16, 16), and dav1d's separate `left`, `top` and `bottom`
/// inputs, all random (or extreme) pixels of `bits` bits.
struct Case<P> {
    frame: Vec<P>,
    left: Vec<[P; 2]>,
    /// Two rows each, with the frame's stride (dav1d steps them by the frame stride).
    top: Vec<P>,
    bottom: Vec<P>,
}

const STRIDE: usize = 48;
const BLOCK: usize = 16 * STRIDE + 16;
const LINE_START: usize = 8; // the block's column in `top` and `bottom`

fn case<P: Pixel>(rng: &mut Rng, bits: u32, extreme: Option<i32>) -> Case<P> {
    let max = (1i32 << bits) - 1;
    let mut pixel = || {
        let v = match extreme {
            Some(0) => 0,
            Some(1) => max,
            Some(_) => {
                if rng.below(2) == 0 {
                    0
                } else {
                    max
                }
            }
            None => rng.below(max as usize + 1) as i32,
        };
        P::from_value(v)
    };
    Case {
        frame: (0..STRIDE * 40).map(|_| pixel()).collect(),
        left: (0..8).map(|_| [pixel(), pixel()]).collect(),
        top: (0..2 * STRIDE).map(|_| pixel()).collect(),
        bottom: (0..2 * STRIDE).map(|_| pixel()).collect(),
    }
}

/// Strengths as dav1d's `cdef_brow` derives them: primary level 0..15 and secondary 0, 1, 2,
/// 4 (not both 0), shifted up by the bit depth above 8; damping 2..6 (chroma is one below
/// the frame's 3..6), likewise raised.
fn strengths(rng: &mut Rng, dir: i32, bitdepth_min_8: i32) -> Strengths {
    loop {
        let primary = (rng.below(16) as i32) << bitdepth_min_8;
        let secondary = [0, 1, 2, 4][rng.below(4)] << bitdepth_min_8;
        if primary == 0 && secondary == 0 {
            continue;
        }
        return Strengths {
            primary,
            secondary,
            dir,
            damping: 2 + rng.below(5) as i32 + bitdepth_min_8,
            bitdepth_min_8,
        };
    }
}

/// Runs dav1d's C function and the reference on copies of one case; returns the two frames.
unsafe fn both<P: Pixel + PartialEq + std::fmt::Debug>(
    c: &Case<P>,
    size: usize,
    s: &Strengths,
    edges: u32,
    dav1d: &dyn Fn(&mut [P], &Case<P>),
) -> (Vec<P>, Vec<P>) {
    let mut theirs = c.frame.clone();
    dav1d(&mut theirs, c);
    let mut ours = c.frame.clone();
    let (w, h) = BLOCK_SIZES[size];
    let mut window = [0i16; WINDOW_LEN];
    cdef::pad(
        &mut window,
        ours.as_ptr().add(BLOCK),
        STRIDE as isize,
        c.left.as_ptr(),
        c.top.as_ptr().add(LINE_START),
        c.bottom.as_ptr().add(LINE_START),
        w,
        h,
        edges,
    );
    cdef::filter(
        &window,
        ours.as_mut_ptr().add(BLOCK),
        STRIDE as isize,
        w,
        h,
        s,
    );
    (theirs, ours)
}

fn check<P: Pixel + PartialEq + std::fmt::Debug>(bits: u32, seed: u64) {
    let dsp = dav1d_c(bits > 8);
    let bitdepth_min_8 = bits as i32 - 8;
    let mut rng = Rng::new(seed);
    let mut checked = 0;
    let mut changed = 0;
    for (size, &dims) in BLOCK_SIZES.iter().enumerate() {
        let fb = CdefFn::of_dav1d(&dsp, size, bits > 8);
        for edges in 0..16u32 {
            for dir in 0..8 {
                for draw in 0..8 {
                    let extreme = match draw {
                        0 => Some(0),
                        1 => Some(1),
                        2 => Some(2),
                        _ => None,
                    };
                    let c = case::<P>(&mut rng, bits, extreme);
                    let s = strengths(&mut rng, dir, bitdepth_min_8);
                    let call = |frame: &mut [P], c: &Case<P>| unsafe {
                        let dst = frame.as_mut_ptr().add(BLOCK);
                        let stride = (STRIDE * std::mem::size_of::<P>()) as isize;
                        let top = c.top.as_ptr().add(LINE_START);
                        let bottom = c.bottom.as_ptr().add(LINE_START);
                        let strengths = [s.primary, s.secondary, s.dir, s.damping];
                        let (left, max) = (c.left.as_ptr().cast(), (1 << bits) - 1);
                        let (top, bottom) = (top.cast(), bottom.cast());
                        fb.call(
                            dst.cast(),
                            stride,
                            left,
                            top,
                            bottom,
                            strengths,
                            edges as i32,
                            max,
                        )
                    };
                    let (theirs, ours) = unsafe { both(&c, size, &s, edges, &call) };
                    assert_eq!(
                        theirs, ours,
                        "{bits} bits, size {:?}, edges {edges}, {s:?}, draw {draw}",
                        dims
                    );
                    checked += 1;
                    changed += (theirs != c.frame) as usize;
                }
            }
        }
    }
    // The test must exercise the filter, not compare untouched buffers.
    assert!(
        changed > checked / 2,
        "{changed} of {checked} calls changed pixels"
    );
}

#[test]
fn cdef_8bit_equals_dav1d_c() {
    check::<u8>(8, 1);
}

#[test]
fn cdef_10bit_equals_dav1d_c() {
    check::<u16>(10, 2);
}

#[test]
fn cdef_12bit_equals_dav1d_c() {
    check::<u16>(12, 3);
}
