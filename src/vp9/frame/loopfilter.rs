//! The loop filter on the frame path (`shaders/vp9_lf.comp`, with the superblock loop filter
//! of the per-call path, `lf_sb_pass.glsl`): the levels and edge masks FFmpeg's `mask_edges`
//! builds, which the decoder builds while parsing. FFmpeg filters superblock by superblock in
//! raster order, each plane's columns pass then its rows pass. A superblock's columns pass
//! reaches 8 pixels into the one left of it; its rows pass reaches 8 lines into the one above,
//! where the columns pass of the superblock above right reached before. So a superblock's
//! passes must follow those of the superblock left of it, above it and above right of it, and
//! go out as a wavefront on the lines column + 2 row: a level per line, a workgroup per plane
//! of each superblock on it running both its passes. The CPU reference of the filters is
//! [`crate::kernels::lf`].
//!
//! Job word: the superblock, its plane at bit 24.

/// The job words of the loop filter of superblock rows `rows` (`sb_cols` across), by level.
pub fn levels(sb_cols: usize, rows: std::ops::Range<usize>) -> Vec<Vec<u32>> {
    if rows.is_empty() {
        return Vec::new();
    }
    let first = rows.start;
    let mut levels = vec![Vec::new(); sb_cols + 2 * (rows.len() - 1)];
    for row in rows {
        for col in 0..sb_cols {
            let sb = (row * sb_cols + col) as u32;
            for plane in 0..3u32 {
                levels[col + 2 * (row - first)].push(sb | plane << 24);
            }
        }
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of superblocks whose passes touch the same pixels keeps FFmpeg's order; no
    /// two on one level do.
    #[test]
    fn superblocks_follow_the_decoders_order_where_they_meet() {
        let (cols, rows) = (5, 3);
        let l = levels(cols, 0..rows);
        let level_of = |sb: usize| l.iter().position(|lv| lv.contains(&(sb as u32))).unwrap();
        for r in 0..rows {
            for c in 0..cols {
                let sb = r * cols + c;
                // after the left neighbour (its columns pass reaches into it)
                if c > 0 {
                    assert!(level_of(sb - 1) < level_of(sb));
                }
                if r > 0 {
                    // after the one above and the one above right (this rows pass reaches
                    // where that columns pass reached)
                    assert!(level_of(sb - cols) < level_of(sb));
                    if c + 1 < cols {
                        assert!(level_of(sb - cols + 1) < level_of(sb));
                    }
                }
            }
        }
        assert_eq!(l.len(), cols + 2 * (rows - 1));
        assert!(l.iter().all(|lv| lv.len() % 3 == 0));
        // a part of later rows starts its own wavefront
        assert_eq!(levels(cols, 2..3).len(), cols);
    }
}
