//! Intra prediction on the frame path (`shaders/vp9_intra.comp`, `vp9_ipred.glsl`): FFmpeg
//! predicts each intra transform block from its left column, the row above and the top-left
//! pixel (the top-right of a 4x4 stays inside its block's width), after the one before it in
//! decode order. The host orders each plane of a superblock's transform blocks in levels (each
//! above every block it reads: [`jobs`]), and a workgroup per plane reconstructs a level's
//! blocks side by side, the small ones N invocations each, adding the residuals computed
//! before them ([`super::residuals`]); superblocks go out on the wavefront
//! ([`super::wavefront`]), since a superblock reads only those left of it, above it and above
//! left of it, before their loop filter. Only superblocks with an intra block are in the jobs.
//! The CPU reference of the predictors is [`crate::kernels::ipred`].
//!
//! Job word: where the plane's order is in the job area (it names the superblock and plane).

use super::records::{size8, BlockRecord, SbBlocks, BLOCK_INTRA, ORDER_HEAD, RECORDS_PER_SB};
use super::residuals::{self, Frame};

/// An order's words (`ORDER_*` in the shader): the superblock and its plane (bit 24); the
/// entries and levels (bit 16); the 4x4 cells its intra blocks write, a bit each, 16 a row;
/// then a word per level (its first entry, its 4x4 blocks' count at bit 9, its 8x8 blocks' at
/// bit 18), then the entries (the record in the superblock at bit 8, the transform block in
/// the block's grid).
const ORDER_CELLS: usize = 2;
const ORDER_LEVELS: usize = ORDER_HEAD;

/// The intra jobs of superblock (`row`, `col`): for each plane, where the plane has an intra
/// block, the order its blocks go in, appended to `orders`; the jobs are their places there.
pub fn jobs(
    sb: &SbBlocks,
    records: &[BlockRecord],
    frame: Frame,
    (row, col): (usize, usize),
    orders: &mut Vec<u32>,
    scratch: &mut Scratch,
) -> Vec<u32> {
    let index = row * sb.sb_cols + col;
    let (first, count) = sb.get(index);
    // (The kernel reads a superblock's first 64 records: it has no more.)
    let blocks = records
        .get(first as usize..(first + count.min(RECORDS_PER_SB as u32)) as usize)
        .unwrap_or(&[]);
    if !blocks.iter().any(|b| b.flags & BLOCK_INTRA != 0) {
        return Vec::new();
    }
    (0..3u32)
        .map(|plane| {
            let at = orders.len() as u32;
            plane_order(blocks, frame, plane, (index, col, row), orders, scratch);
            at
        })
        .collect()
}

/// What ordering a plane needs besides its output, kept from plane to plane (a key frame orders
/// thousands): the entries (level, size, word) in decode order, and a count per level and size.
#[derive(Default)]
pub struct Scratch {
    entries: Vec<(u32, u32, u32)>,
    counts: Vec<u32>,
}

/// Appends the order of plane `plane` of superblock `index` (`col`, `row`) whose records are
/// `blocks`: its intra transform blocks in decode order, each a level above every block it
/// reads (those left of it, above it, above left, and above right of a 4x4 inside its block),
/// then by level and in a level by size (4x4, 8x8, bigger), each size in decode order.
fn plane_order(
    blocks: &[BlockRecord],
    frame: Frame,
    plane: u32,
    (index, col, row): (usize, usize, usize),
    orders: &mut Vec<u32>,
    scratch: &mut Scratch,
) {
    let (ss_h, ss_v) = if plane == 0 {
        (0, 0)
    } else {
        (frame.ss_h, frame.ss_v)
    };
    let (cells, cell_rows) = (16 >> ss_h, 16 >> ss_v);
    let origin = ((col as u32 * 64) >> ss_h, (row as u32 * 64) >> ss_v);
    // per 4x4 cell (16 a row), the level of the transform block that writes it (0: none), and
    // a bit per cell written
    let mut level_of = [0u32; 256];
    let mut cell_bits = [0u32; 8];
    // (level, size, record << 8 | transform block)
    let entries = &mut scratch.entries;
    entries.clear();
    for (i, b) in blocks.iter().enumerate() {
        if b.flags & BLOCK_INTRA == 0 {
            continue;
        }
        let size_log2 = if plane == 0 { b.tx } else { b.uvtx }.min(3) as u32;
        let (across, down) = residuals::grid(b, frame, ss_h, ss_v, size_log2);
        let k = 1 << size_log2;
        let w4 = (2 * size8(b.bs).0) >> ss_h;
        // (A record outside its superblock is the decoder's error: its blocks have no cells.)
        let (Some(x0), Some(y0)) = (
            ((b.col as u32 * 8) >> ss_h).checked_sub(origin.0),
            ((b.row as u32 * 8) >> ss_v).checked_sub(origin.1),
        ) else {
            continue;
        };
        for t in 0..across * down {
            let (bx, by) = ((t % across) * k, (t / across) * k);
            let (cx, cy) = (x0 / 4 + bx, y0 / 4 + by);
            if cx >= cells || cy >= cell_rows {
                continue;
            }
            let at = |x: u32, y: u32| level_of[(y * 16 + x) as usize];
            let mut level = 0;
            for j in 0..k {
                if cx > 0 && cy + j < cell_rows {
                    level = level.max(at(cx - 1, cy + j));
                }
                if cy > 0 && cx + j < cells {
                    level = level.max(at(cx + j, cy - 1));
                }
            }
            if cx > 0 && cy > 0 {
                level = level.max(at(cx - 1, cy - 1));
            }
            if k == 1 && cy > 0 && bx + 1 < w4 && cx + 1 < cells {
                level = level.max(at(cx + 1, cy - 1));
            }
            level += 1;
            for y in cy..(cy + k).min(cell_rows) {
                for x in cx..(cx + k).min(cells) {
                    let cell = (y * 16 + x) as usize;
                    level_of[cell] = level;
                    cell_bits[cell / 32] |= 1 << (cell % 32);
                }
            }
            entries.push((level, size_log2.min(2), (i as u32) << 8 | t));
        }
    }
    let levels = entries.iter().map(|e| e.0).max().unwrap_or(0);
    let head = orders.len();
    orders.extend([
        index as u32 | plane << 24,
        entries.len() as u32 | levels << 16,
    ]);
    orders.extend(cell_bits);
    debug_assert_eq!(orders.len(), head + ORDER_CELLS + 8);
    debug_assert_eq!(ORDER_CELLS + 8, ORDER_LEVELS);
    // By level, and in a level by size, each in decode order: a count per (level, size), then
    // where each starts.
    let counts = &mut scratch.counts;
    counts.clear();
    counts.resize(3 * levels as usize, 0);
    for e in entries.iter() {
        counts[3 * (e.0 - 1) as usize + e.1 as usize] += 1;
    }
    let mut start = 0;
    for level in counts.chunks_mut(3) {
        orders.push(start | level[0] << 9 | level[1] << 18);
        for n in level.iter_mut() {
            let count = *n;
            *n = start;
            start += count;
        }
    }
    let first = orders.len();
    orders.resize(first + entries.len(), 0);
    for e in entries.iter() {
        let at = &mut counts[3 * (e.0 - 1) as usize + e.1 as usize];
        orders[first + *at as usize] = e.2;
        *at += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decoder's `sb_blocks` words for (first record, count) pairs (no coefficients).
    fn words(pairs: &[(u32, u32)]) -> Vec<u32> {
        pairs.iter().flat_map(|&(f, c)| [f, c, 0, 0]).collect()
    }

    fn block(flags: u8) -> BlockRecord {
        BlockRecord {
            flags,
            ..Default::default()
        }
    }

    const FRAME: Frame = Frame {
        cols: 32,
        rows: 32,
        ss_h: 1,
        ss_v: 1,
    };

    #[test]
    fn superblocks_with_intra_blocks() {
        // 3 x 2 superblocks, a block each; intra at (col 0, row 0), (2, 0), (1, 1)
        let records = [BLOCK_INTRA, 0, BLOCK_INTRA, 0, BLOCK_INTRA, 0].map(block);
        let counts: Vec<(u32, u32)> = (0..6).map(|i| (i, 1)).collect();
        let w = words(&counts);
        let sb = SbBlocks::new(3, &w);
        let (mut orders, mut scratch) = (Vec::new(), Scratch::default());
        let with_intra: Vec<(usize, usize)> = (0..2)
            .flat_map(|row| (0..3).map(move |col| (row, col)))
            .filter(|&(row, col)| {
                !jobs(&sb, &records, FRAME, (row, col), &mut orders, &mut scratch).is_empty()
            })
            .collect();
        assert_eq!(with_intra, [(0, 0), (0, 2), (1, 1)]);
        let j = jobs(&sb, &records, FRAME, (1, 1), &mut orders, &mut scratch);
        let heads: Vec<u32> = j.iter().map(|&at| orders[at as usize]).collect();
        assert_eq!(
            heads.iter().map(|h| h & 0xffffff).collect::<Vec<_>>(),
            [4, 4, 4]
        );
        assert_eq!(heads.iter().map(|h| h >> 24).collect::<Vec<_>>(), [0, 1, 2]);
    }

    /// A transform block goes a level after every one it reads, the sizes apart in a level.
    #[test]
    fn transform_blocks_in_levels() {
        let at = |col, row, bs, tx, uvtx, flags| {
            super::super::records::test_record(col, row, bs, tx, uvtx, flags, 0)
        };
        // superblock (1, 1): an intra 8x8 of 4x4 transforms, an inter 8x8 right of it, an
        // intra 16x16 right of that
        let records = [
            at(8, 8, 9, 0, 0, BLOCK_INTRA),
            at(9, 8, 9, 0, 0, 0),
            at(10, 8, 6, 2, 1, BLOCK_INTRA),
        ];
        let mut counts = vec![(0, 0); 16];
        counts[5] = (0, 3);
        let w = words(&counts);
        let sb = SbBlocks::new(4, &w);
        let (mut orders, mut scratch) = (Vec::new(), Scratch::default());
        let j = jobs(&sb, &records, FRAME, (1, 1), &mut orders, &mut scratch);
        let luma = &orders[j[0] as usize..j[1] as usize];
        // the 8x8's four 4x4s: each reads the one before (the third the second, its above
        // right); the 16x16 reads none
        let cells = [
            1 << 0 | 1 << 1 | 0xf << 4 | 1 << 16 | 1 << 17 | 0xf << 20,
            0xf << 4 | 0xf << 20,
        ];
        let mut expected = vec![5, 5 | 4 << 16, cells[0], cells[1], 0, 0, 0, 0, 0, 0];
        expected.extend([1 << 9, 2 | 1 << 9, 3 | 1 << 9, 4 | 1 << 9]);
        expected.extend([0, 2 << 8, 1, 2, 3]);
        assert_eq!(luma, expected);
        // chroma: a 4x4 and an 8x8 in one level
        let chroma = &orders[j[1] as usize..j[2] as usize];
        assert_eq!(chroma[1], 2 | 1 << 16);
        assert_eq!(chroma[ORDER_LEVELS], 1 << 9 | 1 << 18);
        assert_eq!(&chroma[ORDER_LEVELS + 1..], [0, 2 << 8]);
    }
}
