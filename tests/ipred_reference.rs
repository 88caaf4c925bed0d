//! The intra-prediction reference (`src/kernels/ipred.rs`) against FFmpeg's own C predictors
//! (the pure-C static build): every mode and transform size on random and extreme edges, the
//! block inside a larger strided area so that a write outside it shows; then the edge
//! construction of `check_intra_mode`, case by case and against a literal transcription that
//! feeds FFmpeg's predictors the way `intra_recon` does (its direct-pointer branch included).

mod common;

use common::*;
use daedalus::kernels::ipred::*;
use daedalus::vp9dsp::{IntraPredFn, Vp9DspContext};

fn ffmpeg_pred(dsp: &Vp9DspContext, mode: u8, size_log2: usize) -> IntraPredFn {
    dsp.intra_pred[size_log2][mode as usize].expect("FFmpeg fills every intra_pred entry")
}

fn name(mode: u8, size_log2: usize) -> String {
    let n = 4 << size_log2;
    format!("{} {n}x{n}", MODE_NAMES[mode as usize])
}

/// One block's edges in FFmpeg's layout: `left[0..n]` (reversed but for HOR_UP), `top[0..2n]`
/// (the 4x4 top-right in `top[4..8]`), `top[-1]`.
struct EdgeSet {
    left: Vec<u8>,
    top: Vec<u8>,
    topleft: u8,
}

/// Runs FFmpeg's predictor and ours on the same edges; the whole strided area must agree.
fn compare(
    dsp: &Vp9DspContext,
    rng: &mut Rng,
    mode: u8,
    size_log2: usize,
    edges: &EdgeSet,
) -> Result<(), String> {
    let n = 4 << size_log2;
    // FFmpeg's buffers as intra_recon allocates them: `a_buf[96]` with `top = &a_buf[32]`,
    // `l[64]`, both 32-byte aligned; what the predictor must not read is random.
    let mut a_buf = vec![0u8; 32 + 64];
    rng.bytes(&mut a_buf);
    a_buf[31] = edges.topleft;
    a_buf[32..32 + 2 * n.min(32)].copy_from_slice(&edges.top[..2 * n.min(32)]);
    let a_buf = Aligned::new(&a_buf);
    let mut l = vec![0u8; 64];
    rng.bytes(&mut l);
    l[..n].copy_from_slice(&edges.left[..n]);
    let l = Aligned::new(&l);

    // The block at (8, 2) of an area with a stride of n + 16..76 (a multiple of 4, as
    // FFmpeg's 4-pixel stores expect).
    let stride = n + 16 + 4 * rng.below(16);
    let (x0, y0) = (8, 2);
    let mut area = vec![0u8; stride * (n + 4)];
    rng.bytes(&mut area);
    let mut ffmpeg = Aligned::new(&area);
    unsafe {
        ffmpeg_pred(dsp, mode, size_log2)(
            ffmpeg.as_mut_slice().as_mut_ptr().add(y0 * stride + x0),
            stride as isize,
            l.as_slice().as_ptr(),
            a_buf.as_slice().as_ptr().add(32),
        );
    }

    // Ours sees exactly the entries it documents, so an over-read panics.
    let mut out = vec![0u8; n * n];
    let tn = top_len(mode, size_log2);
    predict(
        mode,
        size_log2,
        &edges.left[..n],
        &edges.top[..tn],
        edges.topleft,
        &mut out,
    );
    for y in 0..n {
        area[(y0 + y) * stride + x0..][..n].copy_from_slice(&out[y * n..][..n]);
    }

    if let Some(i) = (0..area.len()).find(|&i| area[i] != ffmpeg.as_slice()[i]) {
        let (x, y) = (
            (i % stride) as isize - x0 as isize,
            (i / stride) as isize - y0 as isize,
        );
        return Err(format!(
            "{}: pixel ({x}, {y}) ffmpeg {} ours {}; left {:?} top {:?} topleft {}",
            name(mode, size_log2),
            ffmpeg.as_slice()[i],
            area[i],
            &edges.left[..n],
            &edges.top[..tn],
            edges.topleft
        ));
    }
    Ok(())
}

fn random_edges(rng: &mut Rng, n: usize) -> EdgeSet {
    let value = {
        // Uniform noise, or a smooth edge (a ramp with a little noise), or a narrow range at
        // either end of the pixel range (where rounding and TM's clip matter).
        let kind = rng.below(4);
        let (base, slope) = (rng.range(0, 255), rng.range(-12, 12));
        move |rng: &mut Rng, i: usize| -> u8 {
            match kind {
                0 | 1 => rng.below(256) as u8,
                2 => (base + slope * i as i64 + rng.range(-3, 3)).clamp(0, 255) as u8,
                _ => {
                    if base < 128 {
                        rng.range(0, 3) as u8
                    } else {
                        rng.range(252, 255) as u8
                    }
                }
            }
        }
    };
    let left = (0..n).map(|i| value(rng, i)).collect();
    let topleft = value(rng, n);
    let top = (0..2 * n).map(|i| value(rng, n + 1 + i)).collect();
    EdgeSet { left, top, topleft }
}

/// [`predict_high`] against FFmpeg's C predictors at 10 and 12 bits: every mode and size on
/// edges spread over the depth's range and at its ends (TM's clip, DC_127/128/129's values),
/// the block inside a larger strided area of 16-bit pixels.
#[test]
fn predict_high_matches_ffmpeg_c_at_10_and_12_bits() {
    for bit_depth in [10u32, 12] {
        let dsp = ffmpeg_c_at(bit_depth as i32);
        let max = (1i64 << bit_depth) - 1;
        let mut rng = Rng::new(0x1b7ed + bit_depth as u64);
        for size_log2 in 0..4 {
            let n = 4 << size_log2;
            for mode in 0..N_MODES as u8 {
                for case in 0..60 {
                    let mut value = |i: usize| -> u16 {
                        match case % 3 {
                            0 => rng.range(0, max) as u16,
                            1 => {
                                (i as i64 * 37 % 5 + if case % 2 == 0 { 0 } else { max - 4 }) as u16
                            }
                            _ => rng.range(max - 8, max) as u16,
                        }
                    };
                    let left: Vec<u16> = (0..n).map(&mut value).collect();
                    let topleft = value(n);
                    let top: Vec<u16> = (0..2 * n).map(&mut value).collect();
                    // FFmpeg's buffers as intra_recon allocates them (16-bit), the rest random.
                    let mut a_buf: Vec<u16> = (0..96).map(|_| rng.range(0, max) as u16).collect();
                    a_buf[31] = topleft;
                    a_buf[32..32 + 2 * n.min(32)].copy_from_slice(&top[..2 * n.min(32)]);
                    let a_buf = Aligned::new(&a_buf);
                    let mut l: Vec<u16> = (0..64).map(|_| rng.range(0, max) as u16).collect();
                    l[..n].copy_from_slice(&left);
                    let l = Aligned::new(&l);
                    let stride = n + 16;
                    let (x0, y0) = (8, 2);
                    let area: Vec<u16> = (0..stride * (n + 4))
                        .map(|_| rng.range(0, max) as u16)
                        .collect();
                    let mut ffmpeg = Aligned::new(&area);
                    unsafe {
                        ffmpeg_pred(&dsp, mode, size_log2)(
                            ffmpeg.as_mut_slice().as_mut_ptr().add(y0 * stride + x0) as *mut u8,
                            2 * stride as isize,
                            l.as_slice().as_ptr() as *const u8,
                            a_buf.as_slice().as_ptr().add(32) as *const u8,
                        );
                    }
                    let tn = top_len(mode, size_log2);
                    let mut out = vec![0u16; n * n];
                    predict_high(
                        mode,
                        size_log2,
                        (&left, &top[..tn], topleft),
                        bit_depth,
                        &mut out,
                    );
                    let mut ours = area.clone();
                    for y in 0..n {
                        ours[(y0 + y) * stride + x0..][..n].copy_from_slice(&out[y * n..][..n]);
                    }
                    if let Some(i) = (0..ours.len()).find(|&i| ours[i] != ffmpeg.as_slice()[i]) {
                        panic!(
                            "{} bits, {}: pixel ({}, {}) ffmpeg {} ours {}",
                            bit_depth,
                            name(mode, size_log2),
                            (i % stride) as isize - x0 as isize,
                            (i / stride) as isize - y0 as isize,
                            ffmpeg.as_slice()[i],
                            ours[i]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn predict_matches_ffmpeg_c_on_random_edges() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(0x1b7ed);
    for size_log2 in 0..4 {
        for mode in 0..N_MODES as u8 {
            for _ in 0..400 {
                let edges = random_edges(&mut rng, 4 << size_log2);
                if let Err(e) = compare(&dsp, &mut rng, mode, size_log2, &edges) {
                    panic!("{e}");
                }
            }
        }
    }
}

/// Constant, alternating and ramped edges, and the TM clip's two ends.
fn pattern_edges(n: usize) -> Vec<EdgeSet> {
    // The edge line from the bottom-left up and then right: left[0..n], topleft, top[0..2n].
    let line = |f: &dyn Fn(usize) -> u8| EdgeSet {
        left: (0..n).map(f).collect(),
        topleft: f(n),
        top: (0..2 * n).map(|i| f(n + 1 + i)).collect(),
    };
    let len = 3 * n + 1;
    let mut sets = vec![
        line(&|_| 0),
        line(&|_| 255),
        line(&|i| if i % 2 == 0 { 0 } else { 255 }),
        line(&|i| if i % 2 == 0 { 255 } else { 0 }),
        line(&|i| (i * 255 / (len - 1)) as u8),
        line(&|i| 255 - (i * 255 / (len - 1)) as u8),
        line(&|i| (i * 37 % 256) as u8),
    ];
    for (l, t, tl) in [(0, 255, 0), (0, 255, 255), (255, 0, 0), (255, 0, 255)] {
        sets.push(EdgeSet {
            left: vec![l; n],
            top: vec![t; 2 * n],
            topleft: tl,
        });
    }
    // The top-right unlike the top (only the 4x4 DDL/VL may see it).
    sets.push(EdgeSet {
        left: vec![0; n],
        top: (0..2 * n).map(|i| if i < n { 0 } else { 255 }).collect(),
        topleft: 0,
    });
    sets
}

#[test]
fn predict_matches_ffmpeg_c_on_extreme_edges() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(0xed9e);
    for size_log2 in 0..4 {
        for mode in 0..N_MODES as u8 {
            for edges in pattern_edges(4 << size_log2) {
                if let Err(e) = compare(&dsp, &mut rng, mode, size_log2, &edges) {
                    panic!("{e}");
                }
            }
        }
    }
}

// ---- check_intra_mode ----

const ALL: Availability = Availability {
    have_left: true,
    have_top: true,
    have_right: true,
    top_px_have: 64,
    left_px_have: 64,
};

fn top_px(i: usize) -> u8 {
    10 + i as u8
}
fn left_px(i: usize) -> u8 {
    100 + i as u8
}
const TOPLEFT_PX: u8 = 200;

/// `check_intra_mode` with accessors that fail the test when asked for a pixel FFmpeg would
/// not read: top beyond `top_ok`, left beyond `left_ok`, or the top-left when `topleft_ok`
/// is false.
fn build(
    mode: u8,
    size_log2: usize,
    avail: Availability,
    top_ok: impl Fn(usize) -> bool,
    left_ok: impl Fn(usize) -> bool,
    topleft_ok: bool,
) -> Edges {
    check_intra_mode(
        mode,
        size_log2,
        avail,
        |i| {
            assert!(top_ok(i), "top pixel {i} read");
            top_px(i)
        },
        |i| {
            assert!(left_ok(i), "left pixel {i} read");
            left_px(i)
        },
        || {
            assert!(topleft_ok, "top-left read");
            TOPLEFT_PX
        },
    )
}

#[test]
fn mode_conversion_for_every_mode_and_edge() {
    // Per coded mode: the mode run with [neither, top only, left only, both].
    let expected: [(u8, [u8; 4]); N_CODED_MODES] = [
        (VERT_PRED, [DC_127_PRED, VERT_PRED, DC_127_PRED, VERT_PRED]),
        (HOR_PRED, [DC_129_PRED, DC_129_PRED, HOR_PRED, HOR_PRED]),
        (DC_PRED, [DC_128_PRED, TOP_DC_PRED, LEFT_DC_PRED, DC_PRED]),
        (
            DIAG_DOWN_LEFT_PRED,
            [
                DC_127_PRED,
                DIAG_DOWN_LEFT_PRED,
                DC_127_PRED,
                DIAG_DOWN_LEFT_PRED,
            ],
        ),
        (DIAG_DOWN_RIGHT_PRED, [DIAG_DOWN_RIGHT_PRED; 4]),
        (VERT_RIGHT_PRED, [VERT_RIGHT_PRED; 4]),
        (HOR_DOWN_PRED, [HOR_DOWN_PRED; 4]),
        (
            VERT_LEFT_PRED,
            [DC_127_PRED, VERT_LEFT_PRED, DC_127_PRED, VERT_LEFT_PRED],
        ),
        (
            HOR_UP_PRED,
            [DC_129_PRED, DC_129_PRED, HOR_UP_PRED, HOR_UP_PRED],
        ),
        (TM_VP8_PRED, [DC_129_PRED, VERT_PRED, HOR_PRED, TM_VP8_PRED]),
    ];
    for (mode, runs) in expected {
        for (k, (have_left, have_top)) in
            [(false, false), (false, true), (true, false), (true, true)]
                .into_iter()
                .enumerate()
        {
            let run = mode_conv(mode, have_left, have_top);
            assert_eq!(
                run, runs[k],
                "{} left {have_left} top {have_top}: {}",
                MODE_NAMES[mode as usize], MODE_NAMES[run as usize]
            );
            // check_intra_mode converts the same way, at every size.
            for size_log2 in 0..4 {
                let avail = Availability {
                    have_left,
                    have_top,
                    ..ALL
                };
                let e = build(
                    mode,
                    size_log2,
                    avail,
                    |_| have_top,
                    |_| have_left,
                    have_left && have_top,
                );
                assert_eq!(e.mode, run);
            }
        }
    }
}

#[test]
fn edge_needs_table() {
    // (left, top, topleft, topright, invert_left) per mode, from check_intra_mode's edges[].
    let expected = [
        (false, true, false, false, false),  // VERT
        (true, false, false, false, false),  // HOR
        (true, true, false, false, false),   // DC
        (false, true, false, true, false),   // DIAG_DOWN_LEFT
        (true, true, true, false, false),    // DIAG_DOWN_RIGHT
        (true, true, true, false, false),    // VERT_RIGHT
        (true, true, true, false, false),    // HOR_DOWN
        (false, true, false, true, false),   // VERT_LEFT
        (true, false, false, false, true),   // HOR_UP
        (true, true, true, false, false),    // TM_VP8
        (true, false, false, false, false),  // LEFT_DC
        (false, true, false, false, false),  // TOP_DC
        (false, false, false, false, false), // DC_128
        (false, false, false, false, false), // DC_127
        (false, false, false, false, false), // DC_129
    ];
    for (mode, (left, top, topleft, topright, invert_left)) in expected.into_iter().enumerate() {
        let want = EdgeNeeds {
            left,
            top,
            topleft,
            topright,
            invert_left,
        };
        assert_eq!(EDGE_NEEDS[mode], want, "{}", MODE_NAMES[mode]);
    }
}

#[test]
fn full_edges_come_from_the_picture() {
    for size_log2 in 0..4 {
        let n = 4 << size_log2;
        let e = build(TM_VP8_PRED, size_log2, ALL, |i| i < n, |i| i < n, true);
        assert_eq!(e.mode, TM_VP8_PRED);
        for i in 0..n {
            assert_eq!(e.top[i], top_px(i));
            // Reversed: the pixel beside row i goes to left[n - 1 - i].
            assert_eq!(e.left[n - 1 - i], left_px(i));
        }
        assert_eq!(e.topleft, TOPLEFT_PX);
        // Past what the mode reads: nothing.
        assert!(e.top[n..].iter().all(|&v| v == 0));
        assert!(e.left[n..].iter().all(|&v| v == 0));
    }
}

#[test]
fn no_top_gives_127_and_no_left_gives_129() {
    for size_log2 in 0..4 {
        let n = 4 << size_log2;
        // DDR, VR and HD keep their mode without edges; the missing ones are constants.
        for mode in [DIAG_DOWN_RIGHT_PRED, VERT_RIGHT_PRED, HOR_DOWN_PRED] {
            // No top: top 127, top-left 127 (the left exists but not the top).
            let avail = Availability {
                have_top: false,
                ..ALL
            };
            let e = build(mode, size_log2, avail, |_| false, |i| i < n, false);
            assert_eq!(e.mode, mode);
            assert_eq!(&e.top[..n], &vec![127; n][..]);
            assert_eq!(e.topleft, 127);
            assert_eq!(e.left[n - 1], left_px(0));

            // No left: left 129, top-left 129 (the top exists).
            let avail = Availability {
                have_left: false,
                ..ALL
            };
            let e = build(mode, size_log2, avail, |i| i < n, |_| false, false);
            assert_eq!(&e.left[..n], &vec![129; n][..]);
            assert_eq!(e.topleft, 129);
            assert_eq!(e.top[0], top_px(0));

            // Neither: top and top-left 127, left 129.
            let avail = Availability {
                have_left: false,
                have_top: false,
                ..ALL
            };
            let e = build(mode, size_log2, avail, |_| false, |_| false, false);
            assert_eq!(&e.top[..n], &vec![127; n][..]);
            assert_eq!(e.topleft, 127);
            assert_eq!(&e.left[..n], &vec![129; n][..]);
        }
        // Modes without a top-left leave it alone and never ask for it.
        for mode in [
            VERT_PRED,
            HOR_PRED,
            DC_PRED,
            DIAG_DOWN_LEFT_PRED,
            VERT_LEFT_PRED,
            HOR_UP_PRED,
        ] {
            let e = build(mode, size_log2, ALL, |_| true, |_| true, false);
            assert_eq!(e.topleft, 0, "{}", MODE_NAMES[mode as usize]);
        }
        // A mode that needs no top (HOR) never reads it, and one that needs no left (VERT).
        let e = build(HOR_PRED, size_log2, ALL, |_| false, |i| i < n, false);
        assert!(e.top.iter().all(|&v| v == 0));
        let e = build(VERT_PRED, size_log2, ALL, |i| i < n, |_| false, false);
        assert!(e.left.iter().all(|&v| v == 0));
    }
}

#[test]
fn frame_edge_truncation_repeats_the_last_pixel() {
    for size_log2 in 1..4 {
        let n = 4 << size_log2;
        for have in (4..n).step_by(4) {
            let avail = Availability {
                top_px_have: have,
                left_px_have: have,
                ..ALL
            };
            let e = build(
                TM_VP8_PRED,
                size_log2,
                avail,
                |i| i < have,
                |i| i < have,
                true,
            );
            for i in 0..n {
                assert_eq!(
                    e.top[i],
                    top_px(i.min(have - 1)),
                    "top {i} of {n}, {have} have"
                );
                assert_eq!(
                    e.left[n - 1 - i],
                    left_px(i.min(have - 1)),
                    "left {i} of {n}"
                );
            }
            assert_eq!(e.topleft, TOPLEFT_PX);

            // HOR_UP: picture order, the last one repeated upwards in the buffer.
            let e = build(
                HOR_UP_PRED,
                size_log2,
                avail,
                |_| false,
                |i| i < have,
                false,
            );
            for i in 0..n {
                assert_eq!(e.left[i], left_px(i.min(have - 1)));
            }
        }
        // Exactly enough is no truncation.
        let avail = Availability {
            top_px_have: n,
            left_px_have: n,
            ..ALL
        };
        let e = build(DC_PRED, size_log2, avail, |i| i < n, |i| i < n, false);
        assert_eq!(e.top[n - 1], top_px(n - 1));
        assert_eq!(e.left[0], left_px(n - 1));
    }
}

#[test]
fn top_right_of_4x4_blocks() {
    for mode in [DIAG_DOWN_LEFT_PRED, VERT_LEFT_PRED] {
        // Present: a column of the block to the right, and the frame wide enough.
        let e = build(mode, 0, ALL, |i| i < 8, |_| false, false);
        assert_eq!(e.top[..8], [10, 11, 12, 13, 14, 15, 16, 17]);

        // Absent: the block's last column, or the frame's right edge, or both; top[3] repeats.
        for (have_right, top_px_have) in [(false, 64), (true, 4), (false, 4)] {
            let avail = Availability {
                have_right,
                top_px_have,
                ..ALL
            };
            let e = build(mode, 0, avail, |i| i < 4, |_| false, false);
            assert_eq!(e.top[..8], [10, 11, 12, 13, 13, 13, 13, 13]);
        }

        // No top: the mode becomes DC_127 and reads nothing.
        let avail = Availability {
            have_top: false,
            ..ALL
        };
        let e = build(mode, 0, avail, |_| false, |_| false, false);
        assert_eq!(e.mode, DC_127_PRED);

        // Larger blocks never read past top[n - 1].
        for size_log2 in 1..4 {
            let n = 4 << size_log2;
            let e = build(mode, size_log2, ALL, |i| i < n, |_| false, false);
            assert!(e.top[n..].iter().all(|&v| v == 0));
        }
    }
    // The other 4x4 modes read no top-right.
    for mode in [VERT_PRED, DC_PRED, DIAG_DOWN_RIGHT_PRED, TM_VP8_PRED] {
        let e = build(mode, 0, ALL, |i| i < 4, |_| true, true);
        assert_eq!(e.top[4..8], [0; 4]);
    }
}

#[test]
fn hor_up_takes_the_left_edge_in_picture_order() {
    for size_log2 in 0..4 {
        let n = 4 << size_log2;
        let up = build(HOR_UP_PRED, size_log2, ALL, |_| false, |i| i < n, false);
        let hor = build(HOR_PRED, size_log2, ALL, |_| false, |i| i < n, false);
        for i in 0..n {
            assert_eq!(up.left[i], left_px(i));
            assert_eq!(hor.left[i], left_px(n - 1 - i));
        }
        // And the predictors agree on what that means: row 0 of HOR is the pixel beside it,
        // which HOR_UP's first average starts from.
        let (mut a, mut b) = (vec![0; n * n], vec![0; n * n]);
        predict(HOR_PRED, size_log2, &hor.left, &hor.top, 0, &mut a);
        predict(HOR_UP_PRED, size_log2, &up.left, &up.top, 0, &mut b);
        assert_eq!(a[0], left_px(0));
        assert_eq!(
            b[0],
            ((left_px(0) as u32 + left_px(1) as u32 + 1) >> 1) as u8
        );
    }
}

// ---- check_intra_mode as FFmpeg runs it ----

/// A luma plane with the block well inside it.
const STRIDE: usize = 96;
const HEIGHT: usize = 72;

/// Where FFmpeg's predictor finds `top`: inside the picture (the direct-pointer branch) or in
/// its `a_buf` (at 32).
enum Top {
    Picture(usize),
    Buffer,
}

/// `check_intra_mode` of vp9recon.c transcribed statement by statement for one 8-bit plane
/// without a separate inner buffer or pre-loop-filter line (so FFmpeg's `top` and `topleft`
/// pointers coincide): fills `a_buf` (`top` at 32) and `l`, returns the mode and where `top`
/// points. Written independently of the module's structured version.
// Index loops on purpose: they follow FFmpeg's C.
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
fn check_intra_mode_literal(
    mode: u8,
    tx: usize,
    avail: Availability,
    pic: &[u8],
    bx: usize,
    by: usize,
    a_buf: &mut [u8],
    l: &mut [u8],
) -> (u8, Top) {
    let Availability {
        have_left,
        have_top,
        have_right,
        ..
    } = avail;
    let mode = mode_conv(mode, have_left, have_top);
    let edges = EDGE_NEEDS[mode as usize];
    let mut a = Top::Buffer;
    if edges.top {
        let top = (by - 1) * STRIDE + bx;
        let n_px_need = 4 << tx;
        let n_px_have = avail.top_px_have;
        let n_px_need_tr = if tx == 0 && edges.topright && have_right {
            4
        } else {
            0
        };
        if have_top
            && (!edges.topleft || have_left)
            && (tx != 0 || !edges.topright || have_right)
            && n_px_need + n_px_need_tr <= n_px_have
        {
            a = Top::Picture(top);
        } else {
            if have_top {
                if n_px_need <= n_px_have {
                    a_buf[32..32 + n_px_need].copy_from_slice(&pic[top..top + n_px_need]);
                } else {
                    a_buf[32..32 + n_px_have].copy_from_slice(&pic[top..top + n_px_have]);
                    let v = a_buf[32 + n_px_have - 1];
                    a_buf[32 + n_px_have..32 + n_px_need].fill(v);
                }
            } else {
                a_buf[32..32 + n_px_need].fill(127);
            }
            if edges.topleft {
                a_buf[31] = if have_left && have_top {
                    pic[top - 1]
                } else if have_top {
                    129
                } else {
                    127
                };
            }
            if tx == 0 && edges.topright {
                if have_top && have_right && n_px_need + n_px_need_tr <= n_px_have {
                    a_buf[36..40].copy_from_slice(&pic[top + 4..top + 8]);
                } else {
                    let v = a_buf[35];
                    a_buf[36..40].fill(v);
                }
            }
        }
    }
    if edges.left {
        let n_px_need = 4 << tx;
        if have_left {
            let n_px_have = avail.left_px_have;
            let px = |i: usize| pic[(by + i) * STRIDE + bx - 1];
            if edges.invert_left {
                for i in 0..n_px_need.min(n_px_have) {
                    l[i] = px(i);
                }
                if n_px_need > n_px_have {
                    let v = l[n_px_have - 1];
                    l[n_px_have..n_px_need].fill(v);
                }
            } else {
                for i in 0..n_px_need.min(n_px_have) {
                    l[n_px_need - 1 - i] = px(i);
                }
                if n_px_need > n_px_have {
                    let v = l[n_px_need - n_px_have];
                    l[..n_px_need - n_px_have].fill(v);
                }
            }
        } else {
            l[..n_px_need].fill(129);
        }
    }
    (mode, a)
}

#[test]
fn edges_and_prediction_match_ffmpeg_as_intra_recon_calls_it() {
    let dsp = ffmpeg_c();
    let mut rng = Rng::new(0xc4ec);
    let mut direct = 0;
    for tx in 0..4 {
        let n = 4 << tx;
        for case in 0..3000 {
            let mode = rng.below(N_CODED_MODES) as u8;
            // FFmpeg's n_px_have are multiples of 4, at least 4; mostly plenty, at times cut.
            let px_have = |rng: &mut Rng| {
                if rng.chance(60) {
                    64
                } else {
                    4 * rng.range(1, 10) as usize
                }
            };
            let avail = Availability {
                have_left: rng.chance(75),
                have_top: rng.chance(75),
                have_right: rng.chance(50),
                top_px_have: px_have(&mut rng),
                left_px_have: px_have(&mut rng),
            };
            let mut pic = vec![0u8; STRIDE * HEIGHT];
            if case % 2 == 0 {
                rng.bytes(&mut pic);
            } else {
                // Smooth content, as pictures mostly are.
                let (gx, gy) = (rng.range(-3, 3), rng.range(-3, 3));
                for (i, p) in pic.iter_mut().enumerate() {
                    let (x, y) = ((i % STRIDE) as i64, (i / STRIDE) as i64);
                    *p = (128 + gx * (x - 40) + gy * (y - 30) + rng.range(-2, 2)).clamp(0, 255)
                        as u8;
                }
            }
            let (bx, by) = (8 + 4 * rng.below(8), 4 + 4 * rng.below(8));

            // FFmpeg: the stale bytes of its buffers are random.
            let mut a_buf = vec![0u8; 96];
            rng.bytes(&mut a_buf);
            let mut l = vec![0u8; 64];
            rng.bytes(&mut l);
            let (run, top) =
                check_intra_mode_literal(mode, tx, avail, &pic, bx, by, &mut a_buf, &mut l);
            let (a_buf, l) = (Aligned::new(&a_buf), Aligned::new(&l));
            let mut ffmpeg = Aligned::new(&pic);
            unsafe {
                let base = ffmpeg.as_mut_slice().as_mut_ptr();
                let top = match top {
                    Top::Picture(at) => {
                        direct += 1;
                        base.add(at) as *const u8
                    }
                    Top::Buffer => a_buf.as_slice().as_ptr().add(32),
                };
                ffmpeg_pred(&dsp, run, tx)(
                    base.add(by * STRIDE + bx),
                    STRIDE as isize,
                    l.as_slice().as_ptr(),
                    top,
                );
            }

            // Ours, reading the picture only through the accessors.
            let edges = check_intra_mode(
                mode,
                tx,
                avail,
                |i| pic[(by - 1) * STRIDE + bx + i],
                |i| pic[(by + i) * STRIDE + bx - 1],
                || pic[(by - 1) * STRIDE + bx - 1],
            );
            assert_eq!(edges.mode, run);
            let mut out = vec![0u8; n * n];
            predict(
                edges.mode,
                tx,
                &edges.left,
                &edges.top,
                edges.topleft,
                &mut out,
            );
            let mut ours = pic.clone();
            for y in 0..n {
                ours[(by + y) * STRIDE + bx..][..n].copy_from_slice(&out[y * n..][..n]);
            }
            if let Some(i) = (0..ours.len()).find(|&i| ours[i] != ffmpeg.as_slice()[i]) {
                panic!(
                    "{} (coded {}) {avail:?}: pixel ({}, {}) ffmpeg {} ours {}",
                    name(run, tx),
                    MODE_NAMES[mode as usize],
                    (i % STRIDE) as isize - bx as isize,
                    (i / STRIDE) as isize - by as isize,
                    ffmpeg.as_slice()[i],
                    ours[i]
                );
            }
        }
    }
    // Both of FFmpeg's branches ran.
    assert!(direct > 1000, "direct-pointer cases: {direct}");
}
