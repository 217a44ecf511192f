//! The last steps of V-ZB's building-block search (`scheduler/v_auto_schedule.py`): release
//! W's in a short warm-up, drop redundant micro-batches, relabel W's, and the final
//! correctness check. Rows as in `steps`.

use super::steps::{EMPTY, Rows, ix, peaks};

/// `release_w_in_warmup_if_under_memory`: with few micro-batches, devices below the peak
/// move their first W's to the end so they hold more in the warm-up.
pub(super) fn release_w(rows: &mut Rows, peak_mem: i64) {
    let all = peaks(rows);
    let peak_mem = if peak_mem == 0 {
        all.iter().copied().max().unwrap_or(0)
    } else {
        peak_mem
    };
    let min_peak = all.iter().copied().min().unwrap_or(0);
    for (row, &own) in rows.iter_mut().zip(&all) {
        let mut padding = vec![EMPTY; (peak_mem - min_peak).max(0) as usize];
        let mut cnt = 0;
        for slot in row.iter_mut() {
            if own + cnt as i64 >= peak_mem {
                break;
            }
            if *slot == b'W' || *slot == b'w' {
                if let Some(pad) = padding.get_mut(cnt) {
                    *pad = *slot;
                }
                *slot = EMPTY;
                cnt += 1;
            }
        }
        row.extend(padding);
    }
}

/// `remove_redundancy`: passes beyond the m-th of each kind become idle.
pub(super) fn remove_redundancy(rows: &mut Rows, m: usize) {
    for row in rows.iter_mut() {
        let mut cnt = [0usize; 6];
        for slot in row.iter_mut().filter(|c| **c != EMPTY) {
            if cnt[ix(*slot)] >= m {
                *slot = EMPTY;
            } else {
                cnt[ix(*slot)] += 1;
            }
        }
    }
}

/// `relabel_w`: W/w slots are relabelled in the order their B/b ran (the search does it
/// slot by slot in `score`; this checks that in tests).
#[cfg(test)]
pub(super) fn relabel_w(rows: &mut Rows, m: usize) -> Option<()> {
    for row in rows.iter_mut() {
        let mut cnt = [0usize; 6];
        for &c in row.iter().filter(|c| **c != EMPTY) {
            cnt[ix(c)] += 1;
        }
        if cnt.iter().any(|&c| c != m) {
            return None;
        }
        let mut queue = std::collections::VecDeque::with_capacity(2 * m);
        for slot in row.iter_mut() {
            match *slot {
                b'B' => queue.push_back(b'W'),
                b'b' => queue.push_back(b'w'),
                b'W' | b'w' => *slot = queue.pop_front()?,
                _ => {}
            }
        }
        if !queue.is_empty() {
            return None;
        }
    }
    Some(())
}

/// `check_correctness`: every pass present m times, W after its B, and every dependency
/// in an earlier slot.
pub(super) fn check_correctness(rows: &Rows, m: usize) -> bool {
    let p = rows.len();
    let mut at = vec![[-1i64; 6]; p * m];
    for (i, row) in rows.iter().enumerate() {
        let mut cnt = [0usize; 6];
        for (j, &c) in row.iter().enumerate().filter(|(_, c)| **c != EMPTY) {
            let k = cnt[ix(c)];
            if k >= m {
                return false;
            }
            at[k * p + i][ix(c)] = j as i64;
            cnt[ix(c)] += 1;
        }
        if cnt.iter().any(|&c| c != m) {
            return false;
        }
    }
    let (f, ff, b, bb, w, ww) = (0, 1, 2, 3, 4, 5);
    for i in 0..p {
        for j in 0..m {
            let a = &at[j * p + i];
            if a.iter().any(|&x| x < 0) || a[b] >= a[w] || a[bb] >= a[ww] {
                return false;
            }
            let ok = if i == 0 {
                a[ff] < a[b]
            } else if i == p - 1 {
                a[f] < a[ff] && a[b] < a[bb]
            } else {
                let (prev, next) = (&at[j * p + i - 1], &at[j * p + i + 1]);
                prev[f] < a[f] && prev[b] < a[b] && next[ff] < a[ff] && next[bb] < a[bb]
            };
            if !ok {
                return false;
            }
        }
    }
    true
}
