//! What the patched decoder hands over on the frame path (`vp9provider.h`: the
//! `FFVP9BlockRecord`, `FFVP9FrameParse` and `FFVP9ParseBuffers` of ABI 15), and where each of
//! its arrays lies in the one buffer of a frame's data: the header the kernels read first
//! ([`super::header`]), the parsed data, the coefficients' scan orders, then the GPU's job
//! lists and the intra residuals.
//!
//! The decoder packs a block's coefficients: each transform block's first `eob` in its scan
//! order, luma's transform blocks and then each chroma plane's, block after block, so that a
//! frame's coefficients take the room of what it has of them, and the room left over is
//! neither zeroed nor copied (the 2160p clip's first frames: 2.1 MB of data a frame where with
//! every block's whole size it was 11.4). The residual kernel reads them in place
//! ([`super::residuals`]).

use crate::kernels::RESIDUAL_GROUP;
use crate::vp9::abi::DaedalusVp9Frame;
use std::ffi::c_int;

/// The header's words, the buffer's first area ([`super::header`]).
pub const HEADER_WORDS: usize = 512;

/// An intra order's words before its levels and entries ([`super::intra`]).
pub const ORDER_HEAD: usize = 10;

/// `FF_VP9_BLOCK_*`: a record's flags.
pub const BLOCK_INTRA: u8 = 1;
pub const BLOCK_COMP: u8 = 2;
/// No coefficients: its end-of-block positions are not stored.
pub const BLOCK_SKIP: u8 = 4;
/// An inter block with a reference of invalid dimensions: nothing is predicted there.
pub const BLOCK_UNPREDICTED: u8 = 8;

/// One decoded block, in decode order (`FFVP9BlockRecord`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockRecord {
    /// Position, in 8x8 luma blocks.
    pub col: u16,
    pub row: u16,
    /// FFmpeg's `enum BlockSize` (0 = 64x64 .. 12 = 4x4), and the transform sizes of luma and
    /// chroma (`enum TxfmMode`).
    pub bs: u8,
    pub tx: u8,
    pub uvtx: u8,
    /// `BLOCK_*`.
    pub flags: u8,
    /// Luma modes: intra modes per 4x4 of a block under 8x8, or the inter modes.
    pub mode: [u8; 4],
    pub uvmode: u8,
    /// FFmpeg's `enum FilterMode`: smooth, regular, sharp, bilinear.
    pub filter: u8,
    /// References: 0 last, 1 golden, 2 altref.
    pub reference: [u8; 2],
    /// Where its end-of-block positions start, in 8x8 blocks' worth (4 luma positions).
    pub unit: u32,
    /// `[4x4 index][reference][x, y]`, in 1/8 pel.
    pub mv: [[[i16; 2]; 2]; 4],
}

const _: () = assert!(std::mem::size_of::<BlockRecord>() == 52);

/// One of the three references the header names (`FFVP9FrameRef`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FrameRef {
    /// Null where there is none (intra frames).
    pub data: [*mut u8; 3],
    pub linesize: [isize; 3],
    pub width: c_int,
    pub height: c_int,
    /// 0: the frame's size; `0xffff`: invalid; else a Q14 scale.
    pub mvscale: [u16; 2],
    pub mvstep: [u8; 2],
}

/// The frame the decoder parses (`FFVP9FrameParse`).
#[repr(C)]
pub struct FrameParse {
    pub frame: DaedalusVp9Frame,
    pub reference: [FrameRef; 3],
    pub keyframe: c_int,
    pub intraonly: c_int,
    pub lossless: c_int,
    /// 0: no loop filter.
    pub filter_level: c_int,
    /// In 8x8 blocks.
    pub cols: c_int,
    pub rows: c_int,
    pub sb_cols: c_int,
    pub sb_rows: c_int,
    pub log2_tile_cols: c_int,
    pub mblim_lut: [u8; 64],
    pub lim_lut: [u8; 64],
    /// The coefficients' scan orders, `[transform size, 4: lossless][transform type]`
    /// (FFmpeg's `ff_vp9_scans`).
    pub scans: *const [*const i16; 4],
}

/// Where the decoder stores the frame (`FFVP9ParseBuffers`).
#[repr(C)]
pub struct ParseBuffers {
    pub records: *mut BlockRecord,
    pub coefs: *mut i16,
    pub eobs: [*mut u8; 3],
    pub loopfilter: *mut u8,
    pub sb_blocks: *mut u32,
}

/// FFmpeg's `VP9Filter`: a superblock's filter levels and edge masks.
pub const LOOPFILTER_BYTES: usize = 192;
/// Most blocks a superblock can hold: one per 8x8.
pub const RECORDS_PER_SB: usize = 64;

/// The geometry that fixes the parsed data's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub sb_cols: usize,
    pub sb_rows: usize,
    pub bytes_per_pixel: usize,
    pub ss_h: usize,
    pub ss_v: usize,
}

impl Geometry {
    pub fn of(info: &FrameParse) -> Option<Geometry> {
        let g = Geometry {
            sb_cols: usize::try_from(info.sb_cols).ok()?,
            sb_rows: usize::try_from(info.sb_rows).ok()?,
            bytes_per_pixel: if info.frame.bpp > 8 { 2 } else { 1 },
            ss_h: usize::try_from(info.frame.ss_h).ok().filter(|&s| s <= 1)?,
            ss_v: usize::try_from(info.frame.ss_v).ok().filter(|&s| s <= 1)?,
        };
        (g.superblocks() > 0).then_some(g)
    }

    pub fn superblocks(&self) -> usize {
        self.sb_cols * self.sb_rows
    }

    /// Coefficients of a plane per superblock, in 16-bit units (two a coefficient above 8
    /// bits): what the packed coefficients have room for, and the intra residuals' area.
    fn coefs_per_sb(&self, plane: usize) -> usize {
        let luma = 64 * 64 * self.bytes_per_pixel;
        if plane == 0 {
            luma
        } else {
            luma >> (self.ss_h + self.ss_v)
        }
    }

    /// End-of-block positions of a plane per superblock.
    fn eobs_per_sb(&self, plane: usize) -> usize {
        if plane == 0 {
            256
        } else {
            256 >> (self.ss_h + self.ss_v)
        }
    }
}

/// Byte offsets of the arrays in the buffer of a frame's data, each on a 64-byte boundary
/// (FFmpeg's SIMD reads the coefficient blocks aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub geometry: Geometry,
    pub records: usize,
    /// The packed coefficients.
    pub coefs: usize,
    pub eobs: [usize; 3],
    pub loopfilter: usize,
    pub sb_blocks: usize,
    /// The scan orders ([`scan_words`]).
    pub scans: usize,
    /// The frame's job words, and how many there is room for.
    pub job_words: usize,
    pub jobs: usize,
    /// The intra blocks' residuals, which the GPU computes before their prediction: a plane
    /// after another, each block's transform blocks at its end-of-block positions' place (16
    /// residuals a position) in the order the decoder stores those. Last, and never written
    /// by the host.
    pub residuals: usize,
    /// Where each plane's residuals start, from `residuals`.
    pub plane_residuals: [usize; 3],
    pub bytes: usize,
}

impl Layout {
    pub fn new(g: Geometry) -> Layout {
        let sbs = g.superblocks();
        let mut at = 0;
        let mut take = |bytes: usize| {
            let start = at;
            at = (at + bytes).next_multiple_of(64);
            start
        };
        take(HEADER_WORDS * 4);
        let records = take(sbs * RECORDS_PER_SB * std::mem::size_of::<BlockRecord>());
        let plane_bytes = [0, 1, 2].map(|p| sbs * g.coefs_per_sb(p) * 2);
        let coefs = take(plane_bytes.iter().sum());
        let eobs = [0, 1, 2].map(|p| take(sbs * g.eobs_per_sb(p)));
        let loopfilter = take(sbs * LOOPFILTER_BYTES);
        let sb_blocks = take(sbs * SB_WORDS * 4);
        let scans = take(SCAN_WORDS * 4);
        // A superblock's jobs: its three planes' intra jobs, two loop-filter passes each, two
        // words per transform block with coefficients (at most one per end-of-block position:
        // a 4x4 cell is one block's), and per intra transform block an entry of its plane's
        // order and at most a level (a level has a transform block), the orders' heads (an
        // inter block's job word takes the room its transform blocks leave); the residuals'
        // groups of each size filled up in each band (`super::together`).
        let eobs_per_sb: usize = (0..3).map(|p| g.eobs_per_sb(p)).sum();
        let bands = super::together::bands(g.sb_cols, g.sb_rows);
        let job_words = (9 + 3 * ORDER_HEAD + 4 * eobs_per_sb) * sbs + 4 * RESIDUAL_GROUP * bands;
        let jobs = take(job_words * 4);
        let residuals = take(plane_bytes.iter().sum());
        Layout {
            geometry: g,
            records,
            coefs,
            eobs,
            loopfilter,
            sb_blocks,
            scans,
            job_words,
            jobs,
            residuals,
            plane_residuals: [0, plane_bytes[0], plane_bytes[0] + plane_bytes[1]],
            bytes: at,
        }
    }

    /// The decoder's pointers into a buffer of this layout at `base`.
    ///
    /// # Safety
    /// `base` must be valid for `self.residuals` bytes (what the host writes) and 64-byte
    /// aligned.
    pub unsafe fn buffers(&self, base: *mut u8) -> ParseBuffers {
        ParseBuffers {
            records: base.add(self.records) as *mut BlockRecord,
            coefs: base.add(self.coefs) as *mut i16,
            eobs: self.eobs.map(|o| base.add(o)),
            loopfilter: base.add(self.loopfilter),
            sb_blocks: base.add(self.sb_blocks) as *mut u32,
        }
    }
}

/// A block's share of the end-of-block arrays, in units of 4 luma positions: the 8x8 blocks
/// (at least one per side) it covers, none where it is skipped (the decoder stores no
/// coefficients for it, and the next block starts where it would have).
pub fn units(b: &BlockRecord) -> u32 {
    if b.flags & BLOCK_SKIP != 0 {
        return 0;
    }
    let (w, h) = size8(b.bs);
    w * h
}

/// The width and height in 8x8 luma blocks (at least one) of a block of FFmpeg's
/// `enum BlockSize` (`ff_vp9_bwh_tab[1]`); (0, 0) for a size there is none of.
pub fn size8(bs: u8) -> (u32, u32) {
    // ff_vp9_bwh_tab[1]: width, height in 8x8 blocks, 64x64 first
    const WH: [(u32, u32); 13] = [
        (8, 8),
        (8, 4),
        (4, 8),
        (4, 4),
        (4, 2),
        (2, 4),
        (2, 2),
        (2, 1),
        (1, 2),
        (1, 1),
        (1, 1),
        (1, 1),
        (1, 1),
    ];
    WH.get(bs as usize).copied().unwrap_or((0, 0))
}

impl Layout {
    /// The planes' end-of-block arrays (FFmpeg's, 16 bits a position from 16x16 on: read
    /// with [`end_of_block`]).
    ///
    /// # Safety
    /// `base` is the buffer this layout is of, the decoder done writing what is read.
    pub unsafe fn end_of_block_arrays<'a>(&self, base: *const u8) -> [&'a [u8]; 3] {
        [0, 1, 2].map(|plane| {
            let len = self.geometry.superblocks() * self.geometry.eobs_per_sb(plane);
            std::slice::from_raw_parts(base.add(self.eobs[plane]), len)
        })
    }

    /// The decoder's words per superblock (`sb_blocks`, [`SbBlocks`]) and its records, in the
    /// buffer at `base`.
    ///
    /// # Safety
    /// `base` is the buffer this layout is of, the decoder done writing what is read.
    pub unsafe fn parsed<'a>(&self, base: *const u8) -> (&'a [u32], &'a [BlockRecord]) {
        let sbs = self.geometry.superblocks();
        (
            std::slice::from_raw_parts(base.add(self.sb_blocks) as *const u32, SB_WORDS * sbs),
            std::slice::from_raw_parts(
                base.add(self.records) as *const BlockRecord,
                RECORDS_PER_SB * sbs,
            ),
        )
    }

    /// Bytes of a frame's data the decoder wrote for the GPU: the header, the records of
    /// `blocks` blocks, `coefs` packed coefficients, the end-of-block positions of `units` 8x8
    /// blocks, and every superblock's loop-filter data and words.
    pub fn written_bytes(&self, blocks: u64, units: u64, coefs: u64) -> u64 {
        let g = &self.geometry;
        let shift = g.ss_h + g.ss_v;
        let eobs = 4 + 2 * (4 >> shift) as u64;
        (HEADER_WORDS * 4) as u64
            + blocks * std::mem::size_of::<BlockRecord>() as u64
            + coefs * 2 * g.bytes_per_pixel as u64
            + units * eobs
            + g.superblocks() as u64 * (LOOPFILTER_BYTES as u64 + SB_WORDS as u64 * 4)
    }
}

impl Layout {
    /// The byte ranges of the data the decoder wrote for superblock rows `rows`, whose records
    /// are the runs `runs` of `records`: the records, their packed coefficients and
    /// end-of-block positions (a region's blocks take the 8x8 units after one another), the
    /// rows' loop-filter data and words.
    pub fn bytes_of_rows(
        &self,
        records: &[BlockRecord],
        runs: &[Run],
        rows: std::ops::Range<usize>,
    ) -> Vec<std::ops::Range<usize>> {
        let g = &self.geometry;
        let record = std::mem::size_of::<BlockRecord>();
        let coef = 2 * g.bytes_per_pixel;
        let mut bytes = Vec::new();
        for run in runs {
            let coefs = run.first_coef as usize..(run.first_coef + run.coefs) as usize;
            bytes.push(self.coefs + coefs.start * coef..self.coefs + coefs.end * coef);
            let Some(units) = run.unit_span(records) else {
                continue;
            };
            let (first, end) = (run.first as usize, (run.first + run.count) as usize);
            bytes.push(self.records + first * record..self.records + end * record);
            for p in 0..3 {
                let shift = if p == 0 { 0 } else { g.ss_h + g.ss_v };
                // per 8x8 unit: 4 end-of-block positions, fewer where subsampled
                let eobs = |unit: usize| self.eobs[p] + ((unit * 4) >> shift);
                bytes.push(eobs(units.start)..eobs(units.end));
            }
        }
        let sbs = rows.start * g.sb_cols..rows.end * g.sb_cols;
        bytes.push(
            self.loopfilter + sbs.start * LOOPFILTER_BYTES
                ..self.loopfilter + sbs.end * LOOPFILTER_BYTES,
        );
        let sb_bytes = SB_WORDS * 4;
        bytes.push(self.sb_blocks + sbs.start * sb_bytes..self.sb_blocks + sbs.end * sb_bytes);
        bytes.retain(|r| !r.is_empty());
        bytes
    }
}

/// The end-of-block position at byte `at` of a plane's array `eobs` (16 bits where `wide`,
/// as FFmpeg stores them from 16x16 on); 0 outside the array.
pub fn end_of_block(eobs: &[u8], at: usize, wide: bool) -> u32 {
    match (wide, eobs.get(at..at + 2)) {
        (true, Some(&[lo, hi])) => u16::from_ne_bytes([lo, hi]) as u32,
        (true, _) => 0,
        (false, _) => eobs.get(at).map_or(0, |&e| e as u32),
    }
}

/// A record for the tests: a block at (`col`, `row`) of FFmpeg's size `bs`, its transform
/// sizes, flags and first coefficient unit.
#[cfg(test)]
pub fn test_record(
    col: u16,
    row: u16,
    bs: u8,
    tx: u8,
    uvtx: u8,
    flags: u8,
    unit: u32,
) -> BlockRecord {
    BlockRecord {
        col,
        row,
        bs,
        tx,
        uvtx,
        flags,
        unit,
        ..Default::default()
    }
}

/// The decoder's words per superblock in `sb_blocks`.
pub const SB_WORDS: usize = 4;

/// Where each superblock's records and packed coefficients are (the decoder's `sb_blocks`,
/// [`SB_WORDS`] each): the first record's index and the count, the first coefficient's index
/// and the count; 0 for a superblock not parsed.
pub struct SbBlocks<'a> {
    pub sb_cols: usize,
    words: &'a [u32],
}

impl<'a> SbBlocks<'a> {
    pub fn new(sb_cols: usize, words: &'a [u32]) -> SbBlocks<'a> {
        SbBlocks { sb_cols, words }
    }

    fn words(&self, index: usize) -> &[u32] {
        let at = SB_WORDS * index;
        self.words.get(at..at + SB_WORDS).unwrap_or(&[0; SB_WORDS])
    }

    /// Superblock `index` (raster order): its first record and its record count.
    pub fn get(&self, index: usize) -> (u32, u32) {
        let w = self.words(index);
        (w[0], w[1])
    }

    /// Superblock `index`: its first packed coefficient and their count.
    pub fn coefs(&self, index: usize) -> (u32, u32) {
        let w = self.words(index);
        (w[2], w[3])
    }
}

/// Records the decoder stored one after another (a region's superblocks in decode order), and
/// their packed coefficients, which follow one another alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Run {
    pub first: u32,
    pub count: u32,
    pub first_coef: u32,
    pub coefs: u32,
}

impl Run {
    /// The 8x8 units of end-of-block positions the run's blocks take, one after another (a
    /// skipped block none); `None` where its records are not all among `records`.
    pub fn unit_span(&self, records: &[BlockRecord]) -> Option<std::ops::Range<usize>> {
        let first = records.get(self.first as usize)?;
        let last = (self.first + self.count)
            .checked_sub(1)
            .and_then(|l| records.get(l as usize))?;
        Some(first.unit as usize..(last.unit + units(last)) as usize)
    }
}

/// The scan orders' words: per transform size (4: lossless) and type, where its order starts
/// (in words from the first), then the orders each once, inverted: a word per position of the
/// block (row-major), its index in the order.
pub const SCAN_WORDS: usize = 20 + 3 * (16 + 64 + 256) + 1024;

/// The scan orders' words from the decoder's table, `None` where it has none, an order is not
/// one of its block's positions, or there are more orders than [`SCAN_WORDS`] holds.
///
/// # Safety
/// `scans` is null or FFmpeg's `ff_vp9_scans`: 5 rows of 4 orders of `16 << 2 * size` entries
/// (4x4 for the lossless row).
pub unsafe fn scan_words(scans: *const [*const i16; 4]) -> Option<Vec<u32>> {
    if scans.is_null() {
        return None;
    }
    let mut words = vec![0u32; 20];
    let mut seen: Vec<(*const i16, u32)> = Vec::new();
    for size in 0..5 {
        let entries = 16usize << (2 * (size % 4));
        for kind in 0..4 {
            let order = (*scans.add(size))[kind];
            if order.is_null() {
                return None;
            }
            let at = match seen.iter().find(|s| s.0 == order) {
                Some(&(_, at)) => at,
                None => {
                    let at = words.len() as u32 - 20;
                    let order = std::slice::from_raw_parts(order, entries);
                    let mut index = vec![None; entries];
                    for (i, &position) in order.iter().enumerate() {
                        *index.get_mut(position as usize)? = Some(i as u32);
                    }
                    for i in index {
                        words.push(i?);
                    }
                    seen.push((order.as_ptr(), at));
                    at
                }
            };
            words[size * 4 + kind] = at;
        }
    }
    (words.len() <= SCAN_WORDS).then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Positions are a byte each below 16x16 and 16 bits from it on; none outside the array.
    #[test]
    fn end_of_block_positions() {
        let eobs = 300u16
            .to_ne_bytes()
            .into_iter()
            .chain([7, 9])
            .collect::<Vec<u8>>();
        assert_eq!(end_of_block(&eobs, 0, true), 300);
        assert_eq!(end_of_block(&eobs, 2, false), 7);
        assert_eq!(end_of_block(&eobs, 3, false), 9);
        assert_eq!(end_of_block(&eobs, 3, true), 0);
        assert_eq!(end_of_block(&eobs, 4, false), 0);
    }

    /// A run's packed coefficients are copied as the decoder counted them, its end-of-block
    /// positions from its first block's to the end of its last one with coefficients: a
    /// skipped block takes none (the decoder stores none for it).
    #[test]
    fn a_run_copies_its_packed_coefficients() {
        let g = Geometry {
            sb_cols: 2,
            sb_rows: 1,
            bytes_per_pixel: 1,
            ss_h: 1,
            ss_v: 1,
        };
        let l = Layout::new(g);
        // a 64x64 block with coefficients (64 units), then two 8x8s (FFmpeg's BS_8x8, 9)
        // skipped, where the next block would start
        let records = [
            test_record(0, 0, 0, 3, 3, 0, 0),
            test_record(8, 0, 9, 0, 0, BLOCK_SKIP, 64),
            test_record(9, 0, 9, 0, 0, BLOCK_SKIP, 64),
        ];
        assert_eq!(units(&records[0]), 64);
        assert_eq!(units(&records[1]), 0);
        let run = Run {
            first: 0,
            count: 3,
            first_coef: 100,
            coefs: 40,
        };
        let bytes = l.bytes_of_rows(&records, &[run], 0..1);
        assert!(bytes.contains(&(l.coefs + 200..l.coefs + 280)), "{bytes:?}");
        assert!(bytes.contains(&(l.eobs[0]..l.eobs[0] + 256)), "{bytes:?}");
        assert!(bytes.contains(&(l.eobs[1]..l.eobs[1] + 64)), "{bytes:?}");
        assert!(
            bytes.contains(&(l.sb_blocks..l.sb_blocks + 2 * SB_WORDS * 4)),
            "{bytes:?}"
        );
        // at 10 bits a coefficient takes 4 bytes
        let l = Layout::new(Geometry {
            bytes_per_pixel: 2,
            ..g
        });
        let bytes = l.bytes_of_rows(&records, &[run], 0..1);
        assert!(bytes.contains(&(l.coefs + 400..l.coefs + 560)), "{bytes:?}");
    }

    #[test]
    fn layout_of_a_1080p_frame() {
        let g = Geometry {
            sb_cols: 30,
            sb_rows: 17,
            bytes_per_pixel: 1,
            ss_h: 1,
            ss_v: 1,
        };
        let l = Layout::new(g);
        let sbs = 510;
        assert_eq!(l.records, 2048);
        assert_eq!(l.coefs - l.records, sbs * 64 * 52);
        assert_eq!(l.eobs[0] - l.coefs, sbs * (4096 + 2 * 1024) * 2);
        assert_eq!(l.eobs[1] - l.eobs[0], sbs * 256);
        assert_eq!(l.loopfilter - l.eobs[2], sbs * 64);
        assert_eq!(l.scans - l.sb_blocks, (sbs * 16).next_multiple_of(64));
        assert_eq!(l.jobs, (l.scans + SCAN_WORDS * 4).next_multiple_of(64));
        // (12 bands of 4 superblock diagonals, 30 + 17 - 1 of them)
        let job_words = (9 + 3 * ORDER_HEAD + 4 * (256 + 2 * 64)) * sbs + 4 * RESIDUAL_GROUP * 12;
        assert_eq!(l.job_words, job_words);
        assert_eq!(l.residuals, (l.jobs + job_words * 4).next_multiple_of(64));
        assert_eq!(l.bytes, l.residuals + sbs * (4096 + 2 * 1024) * 2);
        assert_eq!(
            l.plane_residuals,
            [0, sbs * 4096 * 2, sbs * (4096 + 1024) * 2]
        );
        for o in [
            l.records,
            l.coefs,
            l.eobs[2],
            l.loopfilter,
            l.sb_blocks,
            l.scans,
            l.jobs,
        ] {
            assert_eq!(o % 64, 0);
        }
    }

    /// The scan orders' words: each order once, inverted, every size and type pointing at its
    /// own; an order that is not one of its block's positions is refused.
    #[test]
    fn scan_orders_each_once_inverted() {
        // order (size, kind): index i scans position i + 1 + kind + 3 size (wrapping)
        let shift = |size: usize, kind: usize| 1 + kind + 3 * size;
        let mut orders: Vec<Vec<i16>> = (0..4)
            .flat_map(|size| {
                let kinds = if size == 3 { 1 } else { 3 };
                let n = 16usize << (2 * size);
                (0..kinds).map(move |k| (0..n).map(|i| ((i + shift(size, k)) % n) as i16).collect())
            })
            .collect();
        let table = |orders: &Vec<Vec<i16>>| -> Vec<[*const i16; 4]> {
            let at = |size: usize, kind: usize| orders[3 * size + kind].as_ptr();
            (0..5)
                .map(|size| match size {
                    3 => [at(3, 0); 4],
                    4 => [at(0, 0); 4],
                    _ => [at(size, 0), at(size, 1), at(size, 2), at(size, 0)],
                })
                .collect()
        };
        let words = unsafe { scan_words(table(&orders).as_ptr()) }.expect("a table");
        assert_eq!(words.len(), SCAN_WORDS);
        // position 0's index in each: n - shift
        let index_of_first = |size: usize, kind: usize| words[20 + words[4 * size + kind] as usize];
        assert_eq!(index_of_first(1, 2), 64 - shift(1, 2) as u32);
        assert_eq!(index_of_first(2, 3), 256 - shift(2, 0) as u32);
        assert_eq!(index_of_first(3, 1), 1024 - shift(3, 0) as u32);
        assert_eq!(index_of_first(4, 2), 16 - shift(0, 0) as u32);
        assert_eq!(words[4 * 3], words[4 * 3 + 3]);
        assert_eq!(unsafe { scan_words(std::ptr::null()) }, None);
        // a position twice
        orders[4][5] = orders[4][6];
        assert_eq!(unsafe { scan_words(table(&orders).as_ptr()) }, None);
    }
}
