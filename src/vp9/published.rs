//! Which submission carried each published superblock row of the frames being decoded on
//! frame threads, by the frame's `data[0]`: a reader of a row waits for it (the submissions
//! of one thread complete in order, so waiting for a row's covers the rows above it).

use std::collections::HashMap;
use std::sync::Mutex;

/// Per frame: (superblock row, serial of the submission that carried it).
type Rows = HashMap<usize, Vec<(i32, u64)>>;

static ROWS: Mutex<Option<Rows>> = Mutex::new(None);

thread_local! {
    /// The rows this thread knows complete, per frame it reads (its frame's references:
    /// none of them is freed or reused before this thread's frame ends, when this is
    /// cleared).
    static COMPLETE: std::cell::RefCell<Vec<(usize, i32)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

fn with<T>(f: impl FnOnce(&mut Rows) -> T) -> T {
    let mut rows = ROWS.lock().unwrap_or_else(|p| p.into_inner());
    f(rows.get_or_insert_with(HashMap::new))
}

/// Whether this thread found rows `..=sb_row` of `frame` complete before.
pub fn known_complete(frame: usize, sb_row: i32) -> bool {
    COMPLETE.with(|c| {
        c.borrow()
            .iter()
            .any(|&(f, row)| f == frame && row >= sb_row)
    })
}

pub fn note_complete(frame: usize, sb_row: i32) {
    COMPLETE.with(|c| {
        let mut c = c.borrow_mut();
        match c.iter_mut().find(|(f, _)| *f == frame) {
            Some(entry) => entry.1 = entry.1.max(sb_row),
            None => c.push((frame, sb_row)),
        }
    })
}

/// This thread starts another frame: what it knew of its references no longer holds.
pub fn forget_known() {
    COMPLETE.with(|c| c.borrow_mut().clear());
}

/// Row `sb_row` of `frame` went out in submission `serial` (0: complete already).
pub fn add(frame: usize, sb_row: i32, serial: u64) {
    with(|rows| rows.entry(frame).or_default().push((sb_row, serial)));
}

/// The frame's work is complete (its end), or it starts again.
pub fn forget(frame: usize) {
    with(|rows| rows.remove(&frame));
}

/// The submission a reader of rows `..=sb_row` of `frame` waits for, if not complete.
pub fn serial_for(frame: usize, sb_row: i32) -> Option<u64> {
    with(|rows| {
        let list = rows.get(&frame)?;
        let serial = list
            .iter()
            .find(|&&(row, _)| row >= sb_row)
            .or(list.last())
            .map(|&(_, serial)| serial)?;
        (serial != 0).then_some(serial)
    })
}
