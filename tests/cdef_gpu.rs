//! The CDEF exports (`daedalus_av1_cdef_filter_*`) on the GPU against dav1d's own C functions
//! (the static, asm-disabled dav1d that `scripts/setup` builds): a frame of blocks, each with
//! random strengths, direction, damping and edge flags, recorded one after the other as dav1d
//! calls them (each window taken at the call, while the block to its right is still
//! unfiltered) and flushed once; dav1d's C runs the same calls in order on a copy. 8, 10 and 12
//! bits, every block size, frames registered (filtered in place) and not (copied), and calls
//! whose `bottom` rows lie in the frame under blocks recorded before (which then complete
//! early, on the CPU, before the window is taken).

mod common;

use common::{dav1d_c, require_gpu, stats, CdefFn, Rng};
use daedalus::ffi;
use daedalus::kernels::cdef::{BLOCK_SIZES, HAVE_BOTTOM, HAVE_LEFT, HAVE_RIGHT, HAVE_TOP};
use std::sync::Mutex;

/// The tests share the process's counters.
static SERIAL: Mutex<()> = Mutex::new(());

/// One call: block position, its own `left`, `top` and `bottom` inputs (`top` and `bottom`
/// two rows the frame's width apart, as dav1d steps them by the frame's stride; the block's
/// column at `LINE_AT`), its settings.
struct Call {
    x: usize,
    y: usize,
    h: usize,
    left: Vec<[u16; 2]>,
    top: Vec<u16>,
    bottom: Vec<u16>,
    primary: i32,
    secondary: i32,
    dir: i32,
    damping: i32,
    edges: u32,
}

const LINE: usize = 16;
const LINE_AT: usize = 4;

fn calls(rng: &mut Rng, size: usize, width: usize, height: usize, bits: u32) -> Vec<Call> {
    let (w, h) = BLOCK_SIZES[size];
    let max = (1usize << bits) - 1;
    let b = bits as i32 - 8;
    let mut out = Vec::new();
    for y in (0..height).step_by(h) {
        for x in (0..width).step_by(w) {
            let mut edges = 0;
            // A side exists where the frame has one (two pixels for the right: within it).
            for (flag, present) in [
                (HAVE_LEFT, x > 0),
                (HAVE_RIGHT, x + w + 2 <= width),
                (HAVE_TOP, y > 0),
                (HAVE_BOTTOM, y + h < height),
            ] {
                if present && rng.below(8) != 0 {
                    edges |= flag;
                }
            }
            let (primary, secondary) = loop {
                let p = (rng.below(16) as i32) << b;
                let s = [0, 1, 2, 4][rng.below(4)] << b;
                if p + s > 0 {
                    break (p, s);
                }
            };
            let mut px = || rng.below(max + 1) as u16;
            out.push(Call {
                x,
                y,
                h,
                left: (0..h).map(|_| [px(), px()]).collect(),
                top: (0..width + LINE).map(|_| px()).collect(),
                bottom: (0..width + LINE).map(|_| px()).collect(),
                primary,
                secondary,
                dir: rng.below(8) as i32,
                damping: 2 + rng.below(5) as i32 + b,
                edges,
            });
        }
    }
    out
}

/// Runs the calls in order on a frame of 8-bit (held as `u16` here, passed as bytes) or
/// 16-bit pixels through `f`, which gets dav1d's arguments (strides in bytes).
fn run(
    frame: &mut [u16],
    width: usize,
    bits: u32,
    calls: &[Call],
    bottom_in_frame: bool,
    f: &dyn Fn(Args),
) {
    let wide = bits > 8;
    let mut bytes: Vec<u8> = Vec::new();
    if !wide {
        bytes = frame.iter().map(|&v| v as u8).collect();
    }
    let lines: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = calls
        .iter()
        .map(|c| {
            let narrow = |v: &[u16]| v.iter().map(|&x| x as u8).collect::<Vec<u8>>();
            let left: Vec<u16> = c.left.iter().flatten().copied().collect();
            (narrow(&left), narrow(&c.top), narrow(&c.bottom))
        })
        .collect();
    for (c, l8) in calls.iter().zip(&lines) {
        let at = c.y * width + c.x;
        let args = if wide {
            Args {
                dst: unsafe { frame.as_mut_ptr().add(at) } as *mut u8,
                left: c.left.as_ptr() as *const u8,
                top: unsafe { c.top.as_ptr().add(LINE_AT) } as *const u8,
                bottom: unsafe { c.bottom.as_ptr().add(LINE_AT) } as *const u8,
                stride: (width * 2) as isize,
                c,
            }
        } else {
            Args {
                dst: unsafe { bytes.as_mut_ptr().add(at) },
                left: l8.0.as_ptr(),
                top: unsafe { l8.1.as_ptr().add(LINE_AT) },
                bottom: unsafe { l8.2.as_ptr().add(LINE_AT) },
                stride: width as isize,
                c,
            }
        };
        let mut args = args;
        if bottom_in_frame {
            // The rows below the block in the frame itself, as a caller other than dav1d may
            // pass them: blocks there that are filtered already must be read filtered.
            args.bottom = args.dst.wrapping_offset(c.h as isize * args.stride);
        }
        f(args);
    }
    if !wide {
        for (v, &b) in frame.iter_mut().zip(&bytes) {
            *v = b as u16;
        }
    }
}

struct Args<'a> {
    dst: *mut u8,
    left: *const u8,
    top: *const u8,
    bottom: *const u8,
    stride: isize,
    c: &'a Call,
}

impl Args<'_> {
    unsafe fn call(&self, f: CdefFn, bits: u32) {
        let c = self.c;
        let strengths = [c.primary, c.secondary, c.dir, c.damping];
        let (edges, max) = (c.edges as i32, (1 << bits) - 1);
        f.call(
            self.dst,
            self.stride,
            self.left,
            self.top,
            self.bottom,
            strengths,
            edges,
            max,
        )
    }
}

fn check(bits: u32, size: usize, register: bool, bottom_in_frame: bool, seed: u64) {
    require_gpu();
    let (width, height) = (64, 48);
    let mut rng = Rng::new(seed);
    let max = (1usize << bits) - 1;
    let frame: Vec<u16> = (0..width * height)
        .map(|_| rng.below(max + 1) as u16)
        .collect();
    let mut calls = calls(&mut rng, size, width, height, bits);
    if bottom_in_frame {
        // Rows from the bottom up: each block's `bottom` then meets blocks already recorded.
        calls.sort_by_key(|c| (usize::MAX - c.y, c.x));
    }

    let dsp = dav1d_c(bits > 8);
    let theirs_fn = CdefFn::of_dav1d(&dsp, size, bits > 8);
    let mut theirs = frame.clone();
    run(
        &mut theirs,
        width,
        bits,
        &calls,
        bottom_in_frame,
        &|a: Args| unsafe { a.call(theirs_fn, bits) },
    );

    let mut ours = frame.clone();
    let ours_fn = CdefFn::of_daedalus(size, bits > 8);
    let before = stats();
    let registered = std::cell::Cell::new(false);
    // Bytes from the frame's start to a call's block.
    let frame_offset = |c: &Call| (c.y * width + c.x) * (1 + (bits > 8) as usize);
    run(
        &mut ours,
        width,
        bits,
        &calls,
        bottom_in_frame,
        &|a: Args| unsafe {
            let c = a.c;
            if register && !registered.get() {
                // The frame's buffer: from the first call's block back to the frame's start.
                let start = a.dst.wrapping_sub(frame_offset(c));
                let len = width * height * (1 + (bits > 8) as usize);
                assert_eq!(ffi::daedalus_register_memory(start.cast(), len), 0);
                registered.set(true);
            }
            a.call(ours_fn, bits);
            if std::ptr::eq(c, calls.last().unwrap()) {
                ffi::daedalus_flush();
                if register {
                    let start = a.dst.wrapping_sub(frame_offset(c));
                    assert_eq!(ffi::daedalus_unregister_memory(start.cast()), 0);
                }
            }
        },
    );
    let after = stats();
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        assert_eq!(
            t,
            o,
            "{bits} bits, {:?}, registered {register}: pixel ({}, {}) differs",
            BLOCK_SIZES[size],
            i % width,
            i / width
        );
    }
    assert_ne!(theirs, frame, "the calls changed pixels");
    let on_gpu = after.gpu_calls - before.gpu_calls;
    assert_eq!(
        on_gpu,
        calls.len() as u64,
        "every call deferred, on the GPU"
    );
    let flushes = after.flushes - before.flushes;
    match (register, bottom_in_frame) {
        (true, false) => assert_eq!(flushes, 1, "in place: one flush"),
        // A row's windows read the blocks below the row above: the batch completes first.
        (true, true) => assert!(flushes > 1, "{flushes} flushes"),
        (false, _) => {}
    }
    common::assert_validation_clean();
}

#[test]
fn cdef_on_the_gpu_equals_dav1d_c() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut seed = 100;
    for bits in [8, 10, 12] {
        for size in 0..3 {
            for (register, bottom_in_frame) in [(true, false), (false, false), (true, true)] {
                seed += 1;
                check(bits, size, register, bottom_in_frame, seed);
            }
        }
    }
}

/// Calls outside what dav1d passes are counted as rejected and leave the pixels alone: both
/// strengths 0, a 16 bpc bit depth other than 10 or 12, an odd 16-bit stride, a misaligned
/// 16-bit block.
#[test]
fn calls_dav1d_never_makes_are_rejected() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut frame = vec![0x155u16; 32 * 16];
    let copy = frame.clone();
    let left = [[0u16; 2]; 8];
    let before = stats();
    let p = frame.as_mut_ptr();
    let none = std::ptr::null();
    unsafe {
        let f = ffi::daedalus_av1_cdef_filter_8x8_16bpc;
        f(p, 64, left.as_ptr(), none, none, 0, 0, 3, 4, 0, 1023);
        f(p, 64, left.as_ptr(), none, none, 5, 2, 3, 4, 0, 65535);
        f(p, 63, left.as_ptr(), none, none, 5, 2, 3, 4, 0, 1023);
        f(
            (p as *mut u8).add(1) as *mut u16,
            64,
            left.as_ptr(),
            none,
            none,
            5,
            2,
            3,
            4,
            0,
            1023,
        );
        ffi::daedalus_flush();
    }
    assert_eq!(stats().rejected - before.rejected, 4);
    assert_eq!(frame, copy);
}
