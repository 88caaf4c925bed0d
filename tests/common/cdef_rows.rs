//! Random frames for the superblock-row CDEF tests (`tests/cdef_row_*.rs`), and the CPU
//! reference run over a whole frame a row at a time.

use super::Rng;
use daedalus::kernels::cdef_row::{self, FrameParams, Layout, PlaneAt, Row, RowInput};
use daedalus::kernels::Pixel;

/// A frame's planes (strides in pixels; rows to a multiple of 8 luma rows, and 8 more so
/// that dav1d's `bottom` pointer of the last strip stays inside).
#[derive(Clone, PartialEq, Debug)]
pub struct Frame<P> {
    pub planes: Vec<Vec<P>>,
    pub strides: Vec<usize>,
    pub rows: Vec<usize>,
}

/// The frame-wide masks that dav1d keeps per 128x128 block, laid out per frame: `cdef_idx`
/// per 64x64 block, the "has coefficients" bits per 8-pixel row and 128 columns.
pub struct Masks {
    pub cdef_idx: Vec<i8>,
    pub noskip: Vec<u32>,
}

pub struct Case<P> {
    pub params: FrameParams,
    pub sb_size: usize,
    pub frame: Frame<P>,
    pub masks: Masks,
}

pub fn random_case<P: Pixel>(rng: &mut Rng, layout: Layout, bits: u32) -> Case<P> {
    // dav1d's bw and bh count 4x4 blocks over whole 8x8 blocks: always even.
    let bw = 2 * rng.range(1, 48) as usize;
    let bh = 2 * rng.range(1, 48) as usize;
    let strengths = 1 << rng.below(4);
    let mut level = || {
        if rng.chance(15) {
            0
        } else {
            rng.below(64) as u8
        }
    };
    let mut y_strength = [0u8; 8];
    let mut uv_strength = [0u8; 8];
    for i in 0..strengths {
        y_strength[i] = level();
        uv_strength[i] = if layout == Layout::I400 { 0 } else { level() };
    }
    let params = FrameParams {
        layout,
        bitdepth: bits,
        damping: rng.range(3, 6) as i32,
        y_strength,
        uv_strength,
        bw,
        bh,
    };
    let max = (1i64 << bits) - 1;
    let mut frame = Frame {
        planes: Vec::new(),
        strides: Vec::new(),
        rows: Vec::new(),
    };
    for p in 0..layout.planes() {
        let (_, ss_ver) = params.shifts(p);
        let width = params.plane_width(p);
        let rows = ((bh.div_ceil(2) * 8) >> ss_ver) + 8;
        let stride = width + 8 * rng.below(2);
        // Smooth ramps with noise and edges, so that directions and strengths vary.
        // (Flat and gently varying frames too: low variances scale luma's strength least.)
        let (gx, gy) = (rng.range(-3, 3), rng.range(-3, 3));
        let noise = [0, 1, 3, max / 64, max / 16][rng.below(5)];
        let edges = if rng.chance(50) { max / 4 } else { 0 };
        let base = rng.range(0, max);
        let px = (0..stride * rows)
            .map(|i| {
                let (x, y) = ((i % stride) as i64, (i / stride) as i64);
                let edge = if (x / 13 + y / 11) % 3 == 0 { edges } else { 0 };
                let v = base + gx * x + gy * y + edge + rng.range(-noise, noise);
                P::from_value(v.rem_euclid(max + 1) as i32)
            })
            .collect();
        frame.planes.push(px);
        frame.strides.push(stride);
        frame.rows.push(rows);
    }
    let sb64_rows = bh.div_ceil(16);
    let cdef_idx = (0..sb64_rows * params.sb64_cols())
        .map(|_| {
            if rng.chance(20) {
                -1
            } else {
                rng.below(strengths) as i8
            }
        })
        .collect();
    let density = rng.range(10, 100) as u64;
    let noskip = (0..bh.div_ceil(2) * params.sb128_cols())
        .map(|_| (0..32).fold(0u32, |m, b| m | ((rng.chance(density) as u32) << b)))
        .collect();
    Case {
        params,
        sb_size: if rng.chance(50) { 16 } else { 32 },
        frame,
        masks: Masks { cdef_idx, noskip },
    }
}

/// The record of superblock row `sby`: its span and its slices of the frame's masks.
pub fn row_of(case: &Case<impl Pixel>, sby: usize) -> Row {
    let p = &case.params;
    let sb_rows = p.bh.div_ceil(case.sb_size);
    let mut row = Row::of_superblock_row(sby, sb_rows, case.sb_size, p.bh);
    let first64 = row.by_start >> 4;
    let cols64 = p.sb64_cols();
    row.cdef_idx =
        case.masks.cdef_idx[first64 * cols64..(first64 + row.sb64_rows()) * cols64].to_vec();
    let (first_strip, cols128) = (row.by_start / 2, p.sb128_cols());
    row.noskip =
        case.masks.noskip[first_strip * cols128..(first_strip + row.strips()) * cols128].to_vec();
    row
}

/// Two rows of `plane` from row `y` on, as a halo.
pub fn lines<P: Pixel>(frame: &Frame<P>, params: &FrameParams, plane: usize, y: usize) -> Vec<P> {
    let (w, s) = (params.plane_width(plane), frame.strides[plane]);
    [y, y + 1]
        .iter()
        .flat_map(|&r| frame.planes[plane][r * s..r * s + w].to_vec())
        .collect()
}

/// The reference over every row, in `order`; the halos from `halos` (the deblocked frame) or,
/// where `None`, as a decoder with one thread keeps them: the lines above from the copy of
/// the row before, the lines below from the frame as it is.
pub fn reference<P: Pixel>(case: &Case<P>, order: &[usize], halos: Option<&Frame<P>>) -> Frame<P> {
    let p = &case.params;
    let mut frame = case.frame.clone();
    let mut kept_above: Option<Vec<Vec<P>>> = None;
    for &sby in order {
        let row = row_of(case, sby);
        let planes = p.layout.planes();
        let above = (row.by_start > 0).then(|| match halos {
            Some(h) => (0..planes)
                .map(|pl| lines(h, p, pl, row.plane_rows(p, pl).0 - 2))
                .collect(),
            None => kept_above.clone().expect("rows in order"),
        });
        let below = (row.by_end < p.bh).then(|| {
            let from = halos.unwrap_or(&frame);
            (0..planes)
                .map(|pl| lines(from, p, pl, row.plane_rows(p, pl).1))
                .collect::<Vec<_>>()
        });
        let input = {
            let views: Vec<&[P]> = frame.planes.iter().map(|v| v.as_slice()).collect();
            RowInput::take(
                p,
                &row,
                &views,
                &frame.strides,
                above.as_deref(),
                below.as_deref(),
            )
        };
        kept_above = Some(
            (0..planes)
                .map(|pl| lines(&frame, p, pl, row.plane_rows(p, pl).1 - 2))
                .collect(),
        );
        let mut views: Vec<&mut [P]> = frame.planes.iter_mut().map(|v| v.as_mut_slice()).collect();
        cdef_row::filter_row(p, &row, &input, &mut views, &case.frame.strides);
    }
    frame
}

/// Pixels as the GPU sees them: little-endian bytes of one or two.
pub fn to_bytes<P: Pixel>(px: &[P]) -> Vec<u8> {
    let two = std::mem::size_of::<P>() == 2;
    px.iter()
        .flat_map(|p| {
            let v = p.value() as u16;
            if two {
                v.to_le_bytes().to_vec()
            } else {
                vec![v as u8]
            }
        })
        .collect()
}

impl<P: Pixel> Frame<P> {
    /// The planes one after the other as bytes, and where each is.
    pub fn to_bytes(&self) -> (Vec<u8>, Vec<PlaneAt>) {
        let bpp = std::mem::size_of::<P>();
        let mut bytes = Vec::new();
        let mut at = Vec::new();
        for (plane, &stride) in self.planes.iter().zip(&self.strides) {
            at.push(PlaneAt {
                offset: bytes.len() as u32,
                stride: (stride * bpp) as u32,
            });
            bytes.extend(to_bytes(plane));
        }
        (bytes, at)
    }

    /// The planes back from [`Frame::to_bytes`]'s layout.
    pub fn set_bytes(&mut self, bytes: &[u8]) {
        let bpp = std::mem::size_of::<P>();
        let mut at = 0;
        for plane in &mut self.planes {
            for p in plane.iter_mut() {
                let v = if bpp == 2 {
                    u16::from_le_bytes([bytes[at], bytes[at + 1]]) as i32
                } else {
                    bytes[at] as i32
                };
                *p = P::from_value(v);
                at += bpp;
            }
        }
    }
}
