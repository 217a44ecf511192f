//! Tests of `steps`: the squeeze and the cool-down's edits against the code as first
//! written (kept here verbatim as the reference), over every building block of small p.

use super::super::finish::{release_w, remove_redundancy};
use super::super::search::{test_blocks, warmed_up};
use super::*;

/// Warmed-up rows of `2p` micro-batches cut to `m` as the search cuts them (the redundant
/// micro-batches dropped, W's released, rows padded to one length), then squeezed by
/// `squeeze`.
fn cut_to<T>(
    mut rows: Rows,
    m: usize,
    mut squeeze: impl FnMut(&Rows, usize) -> Option<T>,
) -> Option<T> {
    let p = rows.len();
    remove_redundancy(&mut rows, m);
    release_w(&mut rows, 2 * p as i64);
    let len = rows.iter().map(Vec::len).max().unwrap_or(0);
    for row in &mut rows {
        row.resize(len, EMPTY);
    }
    squeeze(&rows, m)
}

/// The squeeze as first written: every slot of every column looked at twice (once per
/// scan), from the first busy column.
#[allow(clippy::needless_range_loop)] // a column at a time, across the rows
fn reference(rows: &Rows, m: usize) -> Option<Rows> {
    let p = rows.len();
    let max_len = rows.first().map_or(0, Vec::len);
    // A shorter row is an assertion the source fails once the scan reaches its end.
    if rows.iter().any(|r| r.len() < max_len) {
        return None;
    }
    let mut out: Rows = rows.iter().map(|r| vec![EMPTY; r.len()]).collect();
    // Columns with no pass change nothing: scan from the first busy one to the last.
    let busy = |row: &Vec<u8>| row[..max_len].iter().position(|&c| c != EMPTY);
    let Some(lo) = rows.iter().filter_map(busy).min() else {
        return Some(out.into_iter().map(|_| Vec::new()).collect());
    };
    let hi = rows
        .iter()
        .filter_map(|row| row[..max_len].iter().rposition(|&c| c != EMPTY))
        .max()
        .unwrap_or(lo);
    let mut cnt = vec![[0usize; 6]; p];
    // at[c * p + i][k]: the new slot of device i's c-th pass of kind k (-1: not placed yet).
    let mut at = vec![[-1i32; 6]; p * m];
    let mut next = vec![0usize; p];
    for j in lo..=hi {
        // Upper-case passes from the first device down, then lower-case from the last up.
        for dir in 0..2 {
            for step in 0..p {
                let i = if dir == 0 { step } else { p - 1 - step };
                let id = rows[i][j];
                if id == EMPTY || (dir == 0) == matches!(id, b'f' | b'b' | b'w') {
                    continue;
                }
                let k = ix(id);
                let c = cnt[i][k];
                if c >= m {
                    return None;
                }
                let index = if id == b'W'
                    || id == b'w'
                    || (i == 0 && (id == b'F' || id == b'B'))
                    || (i == p - 1 && (id == b'f' || id == b'b'))
                {
                    let local = match (i, id) {
                        (0, b'B') => Some(b'f'),
                        (_, b'f') if i == p - 1 => Some(b'F'),
                        (_, b'b') if i == p - 1 => Some(b'B'),
                        _ => None,
                    };
                    if local.is_some_and(|l| at[c * p + i][ix(l)] < 0) {
                        return None;
                    }
                    next[i]
                } else {
                    let from = if id == b'F' || id == b'B' {
                        i - 1
                    } else {
                        i + 1
                    };
                    let dep = at[c * p + from][k];
                    if dep < 0 {
                        return None;
                    }
                    (dep as usize + 1).max(next[i])
                };
                *out[i].get_mut(index)? = id;
                cnt[i][k] = c + 1;
                at[c * p + i][k] = i32::try_from(index).ok()?;
                next[i] = index + 1;
            }
        }
    }
    let new_len = next.iter().copied().max().unwrap_or(0);
    for row in &mut out {
        row.truncate(new_len);
    }
    Some(out)
}

/// The squeeze gives the rows (or the failure) of the squeeze as first written, on the
/// input of each of the search's squeezes, for every block: the repeated and cleared
/// rows, the rows after the warm-up, those rows cut to m micro-batches, and the rows the
/// cool-down edits.
#[test]
fn squeeze_matches_the_first_written() {
    let (mut compared, mut squeezed) = (0, 0);
    let mut check = |rows: &Rows, m: usize| {
        let fast = squeeze(rows, m);
        assert_eq!(fast, reference(rows, m), "rows {rows:?} m={m}");
        compared += 1;
        squeezed += usize::from(fast.is_some());
        fast
    };
    for p in 2..9 {
        for m in [1, 2, 5, 2 * p, 3 * p + 1] {
            let redundant_m = m.max(2 * p);
            for block in test_blocks(p) {
                let mut rows = repeat(&block, redundant_m);
                if clear_invalid(&mut rows, redundant_m).is_none() {
                    continue;
                }
                let Some(mut rows) = check(&rows, redundant_m) else {
                    continue;
                };
                let peak_mem = peak(&rows);
                if process_warmup(&mut rows, redundant_m, peak_mem).is_none() {
                    continue;
                }
                let Some(mut rows) = check(&rows, redundant_m) else {
                    continue;
                };
                if m < redundant_m {
                    let Some(cut) = cut_to(rows, m, &mut check) else {
                        continue;
                    };
                    rows = cut;
                }
                let peak_mem = peak(&rows);
                // The squeezed rows again, with their slots (a squeeze keeps its output).
                let Some(state) = squeeze_state(&rows, m, SLOTS) else {
                    continue;
                };
                if cooldown_edit(&mut rows, &state, m, peak_mem).is_some() {
                    check(&rows, m);
                }
            }
        }
    }
    assert!(
        compared > 30_000 && squeezed > 20_000,
        "{compared} {squeezed}"
    );
}

/// The cool-down's edits as first written (a scan of every slot of every row).
fn reference_edit(rows: &mut Rows, m: usize) -> Option<()> {
    let p = rows.len();
    let peak_mem = peak(rows);
    if peak_mem > 2 * p as i64 {
        return None;
    }
    let max_bb = (((peak_mem + 1) / 2) as usize).min(m);
    let max_b = (peak_mem as usize).saturating_sub(max_bb).min(m);
    let mut starting_index: i64 = -1;
    for (i, row) in rows.iter_mut().enumerate() {
        let (mut c_b, mut c_bb, mut c_w, mut c_ww) = (0usize, 0usize, 0usize, 0usize);
        let mut last_ff: i64 = -1;
        for j in (0..row.len()).rev() {
            let c = row[j];
            if c == b'f' && last_ff == -1 {
                last_ff = j as i64;
            }
            if c == b'B' && c_b < i + 1 && c_b < max_b {
                row[j] = EMPTY;
                c_b += 1;
            }
            if c == b'b' && c_bb < max_bb {
                row[j] = EMPTY;
                c_bb += 1;
            }
        }
        for j in (0..row.len()).rev() {
            if c_w >= c_b && c_ww >= c_bb && (c_w + c_ww) as i64 >= peak_mem {
                break;
            }
            match row[j] {
                b'W' => {
                    row[j] = EMPTY;
                    c_w += 1;
                }
                b'w' => {
                    row[j] = EMPTY;
                    c_ww += 1;
                }
                _ => {}
            }
        }
        if i == 0 {
            starting_index = last_ff;
        }
        let (ii, pp) = (i as i64, p as i64);
        for k in 0..c_bb as i64 {
            let at = py_index(row.len(), starting_index - ii + 2 * pp - 2 * k)?;
            if row[at] != EMPTY {
                return None;
            }
            row[at] = b'b';
        }
        for k in 0..c_b as i64 {
            let at = py_index(row.len(), starting_index + 1 + ii - 2 * k)?;
            row[at] = b'B';
        }
    }
    // Put W's back after the last remaining one.
    for row in rows.iter_mut() {
        let (mut c_w, mut c_ww) = (0i64, 0i64);
        let last_w = row.iter().rposition(|&c| c == b'W' || c == b'w');
        for (j, slot) in row.iter_mut().enumerate() {
            match *slot {
                b'B' => c_w += 1,
                b'b' => c_ww += 1,
                b'W' => c_w -= 1,
                b'w' => c_ww -= 1,
                _ => {}
            }
            if *slot == EMPTY && last_w.is_none_or(|l| j > l) {
                if c_w > 0 {
                    *slot = b'W';
                    c_w -= 1;
                } else if c_ww > 0 {
                    *slot = b'w';
                    c_ww -= 1;
                }
            }
        }
        row.extend(std::iter::repeat_n(b'W', c_w.max(0) as usize));
        row.extend(std::iter::repeat_n(b'w', c_ww.max(0) as usize));
    }
    let max_len = rows.iter().map(Vec::len).max().unwrap_or(0);
    for row in rows.iter_mut() {
        row.resize(max_len, EMPTY);
    }
    Some(())
}

/// The cool-down edits the rows as first written, and its squeeze, started from the
/// first column its edits changed, gives the rows a squeeze of every column gives, on
/// the rows of every block the search squeezes before its cool-down (with all
/// micro-batches, and cut to fewer).
#[test]
fn the_cooldown_squeezes_as_a_full_squeeze() {
    let (mut compared, mut squeezed, mut skipped) = (0, 0, 0);
    for p in 2..9 {
        for m in [1, 2, 3, 5, 2 * p, 3 * p + 1] {
            let redundant_m = m.max(2 * p);
            for block in test_blocks(p) {
                let Some(mut warmed) = warmed_up(&block, redundant_m) else {
                    continue;
                };
                if m < redundant_m {
                    let cut = cut_to(warmed.rows, m, |r, m| squeeze_state(r, m, SLOTS));
                    let Some(cut) = cut else {
                        continue;
                    };
                    warmed = cut;
                }
                let rows = &warmed.rows;
                let (mut edited, warm) = (rows.clone(), rows.clone());
                let mut slow = rows.clone();
                let fast = process_cooldown(&warmed, m, peak(&warm)).map(|s| s.rows);
                let edit = cooldown_edit(&mut edited, &warmed, m, peak(&warm));
                assert_eq!(edit, reference_edit(&mut slow, m), "p={p} m={m}");
                if edit.is_none() {
                    assert_eq!(fast, None);
                    continue;
                }
                assert_eq!(edited, slow, "p={p} m={m} block {block:?}");
                let full = squeeze(&edited, m);
                assert_eq!(fast, full, "p={p} m={m} block {block:?}");
                compared += 1;
                squeezed += usize::from(full.is_some());
                // The columns the fast squeeze starts after (checked to be many).
                let same = |(a, b): (&Vec<u8>, &Vec<u8>)| {
                    a.iter().zip(b).take_while(|(x, y)| x == y).count()
                };
                let settled = edited.iter().zip(&warm).map(same).min().unwrap_or(0);
                skipped += usize::from(2 * settled > edited[0].len());
            }
        }
    }
    assert!(
        compared > 10_000 && squeezed > 5_000 && skipped > 5_000,
        "{compared} {squeezed} {skipped}"
    );
}

/// The first slots `clear_invalid` gives describe the cleared rows whole: two blocks get
/// the same ones exactly when their rows are the same (the search skips a block whose
/// first slots it has seen).
#[test]
fn the_first_slots_tell_the_rows_apart() {
    use std::collections::HashMap;
    let (mut blocks, mut repeats) = (0, 0);
    for p in 2..7 {
        for m in [1, 2 * p, 3 * p + 1] {
            let redundant_m = m.max(2 * p);
            let mut by_key: HashMap<Vec<u32>, Rows> = HashMap::new();
            let mut by_rows: HashMap<Rows, Vec<u32>> = HashMap::new();
            let mut tried = 0;
            for block in test_blocks(p) {
                let mut rows = repeat(&block, redundant_m);
                let Some(key) = clear_invalid(&mut rows, redundant_m) else {
                    continue;
                };
                let same_rows = by_key.entry(key.clone()).or_insert_with(|| rows.clone());
                assert_eq!(*same_rows, rows, "p={p} m={m} block {block:?}");
                let same_key = by_rows.entry(rows).or_insert_with(|| key.clone());
                assert_eq!(*same_key, key, "p={p} m={m} block {block:?}");
                tried += 1;
            }
            blocks += tried;
            repeats += tried - by_key.len();
        }
    }
    assert!(blocks > 5_000 && repeats > 1_000, "{blocks} {repeats}");
}

/// The block-at-a-time searches find the slots a slot-by-slot search finds.
#[test]
fn busy_ends_match_a_plain_search() {
    for len in [0, 1, 31, 32, 33, 64, 100] {
        for at in [0, 1, 30, 31, 32, 33, 63, 64, 65, 99] {
            let mut row = vec![EMPTY; len];
            if let Some(slot) = row.get_mut(at) {
                *slot = b'F';
            }
            let first = row.iter().position(|&c| c != EMPTY);
            let last = row.iter().rposition(|&c| c != EMPTY);
            assert_eq!(
                (first_busy(&row), last_busy(&row)),
                (first, last),
                "{len} {at}"
            );
        }
    }
}

/// Counting a byte eight at a time counts what a byte-by-byte count does, for every byte
/// value among neighbours that differ from it in one bit or in the top bit (where a carry
/// would go wrong), at every length and offset around the eight-byte chunks.
#[test]
fn byte_counts_match_a_plain_count() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for byte in 0..=255u8 {
        let near: Vec<u8> = (0..8)
            .map(|bit| byte ^ (1 << bit))
            .chain([byte, 0, 0xff, byte ^ 0x80])
            .collect();
        for len in [0, 1, 7, 8, 9, 17, 64, 100] {
            let row: Vec<u8> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    near[(state % near.len() as u64) as usize]
                })
                .collect();
            let plain = row.iter().filter(|&&c| c == byte).count();
            assert_eq!(count_byte(&row, byte), plain, "byte {byte} in {row:?}");
        }
    }
}

/// The peak read off the first slots equals the peak counted slot by slot, on the cleared
/// rows of every block of p 2-8 with few and many micro-batches.
#[test]
fn the_first_slots_give_the_peak() {
    let mut compared = 0;
    for p in 2..9 {
        for m in [1, 3, 2 * p, 3 * p + 1, 40] {
            let redundant_m = m.max(2 * p);
            for block in test_blocks(p) {
                let mut rows = repeat(&block, redundant_m);
                let Some(firsts) = clear_invalid(&mut rows, redundant_m) else {
                    continue;
                };
                let len = rows[0].len();
                assert_eq!(
                    cleared_peak(&firsts, len, redundant_m),
                    peak(&rows),
                    "p={p} m={m} block {block:?}"
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 20_000, "{compared}");
}
