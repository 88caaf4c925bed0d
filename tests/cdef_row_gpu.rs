//! AV1's CDEF by superblock rows on the GPU (`shaders/cdef_row_copy.comp`, `cdef_row.comp`)
//! against the CPU reference (`src/kernels/cdef_row.rs`, itself checked against dav1d's C
//! functions by `tests/cdef_row_reference.rs`): random frames of every layout, 8, 10 and 12
//! bits, 64x64 and 128x128 superblocks, each row filtered alone as a decoder with one thread
//! hands it over (the lines above kept from the row before, those below from the frame).
//! Run on lavapipe with DAEDALUS_VALIDATION=1 (scripts/test).

mod common;

use common::cdef_rows::{lines, random_case, reference, row_of, to_bytes, Case, Frame};
use common::{assert_validation_clean, Rng};
use daedalus::av1::cdef_apply::filter_row_once;
use daedalus::kernels::cdef_row::Layout;
use daedalus::kernels::Pixel;

/// Every row of the case on the GPU, in order.
fn on_gpu<P: Pixel>(case: &Case<P>) -> Frame<P> {
    let p = &case.params;
    let planes = p.layout.planes();
    let mut frame = case.frame.clone();
    let mut kept_above: Option<Vec<Vec<u8>>> = None;
    for sby in 0..p.bh.div_ceil(case.sb_size) {
        let row = row_of(case, sby);
        let halo = |frame: &Frame<P>, y: &dyn Fn(usize) -> usize| -> Vec<Vec<u8>> {
            (0..planes)
                .map(|pl| to_bytes(&lines(frame, p, pl, y(pl))))
                .collect()
        };
        let above = (row.by_start > 0).then(|| kept_above.clone().expect("rows in order"));
        let below = (row.by_end < p.bh).then(|| halo(&frame, &|pl| row.plane_rows(p, pl).1));
        kept_above = Some(halo(&frame, &|pl| row.plane_rows(p, pl).1 - 2));
        let (bytes, at) = frame.to_bytes();
        let record = row.gpu_record(
            p,
            &at,
            std::mem::size_of::<P>() == 2,
            above.as_deref(),
            below.as_deref(),
        );
        let filtered =
            filter_row_once(&record, &bytes).unwrap_or_else(|e| panic!("the GPU did not run: {e}"));
        frame.set_bytes(&filtered);
    }
    frame
}

fn check<P: Pixel + PartialEq + std::fmt::Debug>(bits: u32, seed: u64) {
    let mut rng = Rng::new(seed);
    let cases = 12;
    let mut changed = 0;
    for n in 0..cases {
        let layout = [Layout::I400, Layout::I420, Layout::I422, Layout::I444][n % 4];
        let case = random_case::<P>(&mut rng, layout, bits);
        let sb_rows = case.params.bh.div_ceil(case.sb_size);
        let want = reference(&case, &(0..sb_rows).collect::<Vec<_>>(), None);
        let got = on_gpu(&case);
        for (pl, (w, g)) in want.planes.iter().zip(&got.planes).enumerate() {
            if let Some(i) = w.iter().zip(g).position(|(a, b)| a != b) {
                let s = case.frame.strides[pl];
                panic!(
                    "{bits} bits, {layout:?}, {}x{} blocks, superblocks of {}, case {n}: plane \
                     {pl} pixel ({}, {}) is {} on the GPU, {} in the reference",
                    case.params.bw,
                    case.params.bh,
                    case.sb_size,
                    i % s,
                    i / s,
                    g[i].value(),
                    w[i].value()
                );
            }
        }
        changed += (want != case.frame) as usize;
    }
    // The comparison must be of filtered frames, not of untouched ones.
    assert!(
        changed > cases * 3 / 4,
        "{changed} of {cases} frames changed"
    );
    assert_validation_clean();
}

#[test]
fn gpu_rows_equal_the_reference_8bit() {
    check::<u8>(8, 31);
}

#[test]
fn gpu_rows_equal_the_reference_10bit() {
    check::<u16>(10, 32);
}

#[test]
fn gpu_rows_equal_the_reference_12bit() {
    check::<u16>(12, 33);
}
