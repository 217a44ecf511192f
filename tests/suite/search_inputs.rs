//! Bad inputs to the searched schedules are errors that name the field, the value and what
//! is allowed, never panics.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap

use pipescope::{ScheduleError, ScheduleInput, ScheduleKind, generate};

const SEARCHED: [ScheduleKind; 8] = [
    ScheduleKind::ZbH2,
    ScheduleKind::ZbAuto,
    ScheduleKind::ZbV,
    ScheduleKind::VHalf,
    ScheduleKind::VMin,
    ScheduleKind::VZb,
    ScheduleKind::Gis,
    ScheduleKind::GisOffload,
];

fn unsupported(kind: ScheduleKind, input: &ScheduleInput, needle: &str) {
    let err = generate(kind, input).unwrap_err();
    assert!(
        matches!(err, ScheduleError::Unsupported { .. }),
        "{kind}: {err}"
    );
    let text = err.to_string();
    assert!(text.contains(needle), "{kind}: '{text}' lacks '{needle}'");
}

#[test]
fn zero_sizes() {
    for kind in SEARCHED {
        let needle = "at least one device and one micro-batch";
        unsupported(
            kind,
            &ScheduleInput::uniform(4, 0, 2, 1.0, 1.0, 1.0, 0.0),
            needle,
        );
        unsupported(
            kind,
            &ScheduleInput::uniform(0, 4, 2, 1.0, 1.0, 1.0, 0.0),
            needle,
        );
    }
}

#[test]
fn bad_costs_and_limits() {
    for kind in SEARCHED {
        let mut input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.b[2][0] = -1.0;
        unsupported(kind, &input, "non-negative b costs (got -1)");
        let mut input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.f[1][1] = f64::NAN;
        unsupported(kind, &input, "f costs (got NaN)");
        let input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, f64::INFINITY);
        unsupported(kind, &input, "comm time (got inf)");
        let mut input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.w.truncate(2);
        unsupported(
            kind,
            &input,
            "w cost for each of the 4 devices (got 2 rows)",
        );
    }
    for kind in [ScheduleKind::ZbAuto, ScheduleKind::ZbV, ScheduleKind::VZb] {
        let mut input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.mem_limit = Some(f64::NAN);
        unsupported(kind, &input, "finite mem_limit (got NaN)");
    }
}

#[test]
fn limits_too_small_do_not_fit() {
    for kind in [ScheduleKind::ZbAuto, ScheduleKind::ZbV, ScheduleKind::VZb] {
        let mut input = ScheduleInput::uniform(4, 8, 2, 1.0, 1.0, 1.0, 0.0);
        input.mem_limit = Some(0.0);
        let err = generate(kind, &input).unwrap_err();
        assert!(
            matches!(err, ScheduleError::NoFit { limit, .. } if limit == 0.0),
            "{err}"
        );
        assert!(err.to_string().contains("memory limit 0"), "{err}");
    }
}
