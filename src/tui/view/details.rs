//! The details overlay (Enter, or a click on an op): an op's kind, micro-batch, chunk,
//! start, end, duration, the recomputation before it and, for half of an overlapped pair, the
//! other half; a stage's memory and time broken down.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph, Widget};

use crate::Outcome;
use crate::sim::{Lane, Span, SpanKind};
use crate::tui::app::{App, Details};

use super::format;
use super::stage_time;

/// Draws the details overlay, when open, in the lower middle of `area`.
pub fn render(area: Rect, buf: &mut Buffer, app: &App) {
    let (Some(details), Some(solved)) = (app.details, app.shown()) else {
        return;
    };
    let o = &solved.outcome;
    let w = area.width.saturating_sub(4).min(76);
    let (title, lines) = match details {
        Details::Op(span) => (
            format!(
                " op on s{} · ← → ops · [ ] stages · Esc closes ",
                span.device
            ),
            op(o, &span),
        ),
        Details::Stage(s) => (
            format!(" stage s{s} · → its ops · [ ] other stages · Esc closes "),
            stage(o, s, usize::from(w.saturating_sub(2))),
        ),
    };
    let theme = &app.theme;
    // Wrapped here (keeping each line's indent) so the height counts every row.
    let inner_w = usize::from(w.saturating_sub(2)).max(1);
    let lines: Vec<String> = lines
        .iter()
        .flat_map(|l| {
            let indent = l.chars().take_while(|c| *c == ' ').count().min(inner_w / 2);
            super::format::wrap_words(l.trim_start(), inner_w - indent)
                .into_iter()
                .map(move |r| format!("{}{r}", " ".repeat(indent)))
        })
        .collect();
    let h = (lines.len() as u16 + 2).min(area.height.saturating_sub(2));
    let r = Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + area.height.saturating_sub(h + 2),
        width: w,
        height: h,
    };
    Clear.render(r, buf);
    let block = Block::bordered()
        .title(title)
        .border_style(theme.accent())
        .title_style(theme.accent());
    let lines: Vec<Line> = lines
        .into_iter()
        .map(|l| Line::styled(l, theme.text()))
        .collect();
    Paragraph::new(lines).block(block).render(r, buf);
}

fn kind_name(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::F => "forward (F)",
        SpanKind::B => "input-gradient backward (B)",
        SpanKind::W => "weight-gradient backward (W)",
        SpanKind::BW => "backward (B and W fused)",
        SpanKind::R => "recomputation (R)",
        SpanKind::D2H => "offload copy to host",
        SpanKind::H2D => "reload copy from host",
        SpanKind::Send => "send to the next device",
        SpanKind::Kv => "context parallelism's K/V exchange",
        SpanKind::Gather => "ZeRO-3 all-gather of the weights",
        SpanKind::Scatter => "ZeRO-3 reduce-scatter of the gradients",
        SpanKind::A2a => "expert parallelism's dispatch and combine all-to-alls",
    }
}

/// The lines describing one op.
pub fn op(o: &Outcome, span: &Span) -> Vec<String> {
    let recompute: f64 = o
        .simulation
        .timeline
        .spans
        .iter()
        .filter(|s| {
            s.device == span.device
                && s.lane == Lane::Compute
                && s.kind == SpanKind::R
                && s.micro_batch == span.micro_batch
                && s.chunk == span.chunk
        })
        .map(|s| s.end - s.start)
        .sum();
    let recompute = match span.kind {
        SpanKind::B | SpanKind::BW if recompute > 0.0 => {
            format!("recompute before it: {}", format::time(recompute))
        }
        SpanKind::B | SpanKind::BW => "recompute before it: none (all kept)".into(),
        _ => "recompute: not for this kind of op".into(),
    };
    let mut lines = vec![
        format!(
            "{} · micro-batch {} · chunk {}",
            kind_name(span.kind),
            span.micro_batch,
            span.chunk
        ),
        format!(
            "start {}  end {}  duration {}",
            format::time(span.start),
            format::time(span.end),
            format::time(span.end - span.start)
        ),
        recompute,
    ];
    lines.extend(pair_line(o, span));
    lines
}

/// For one half of an overlapped forward-backward pair: the other half, and the pair's span
/// (it runs as one unit, both outputs handed on at its end).
fn pair_line(o: &Outcome, span: &Span) -> Option<String> {
    if !span.paired || span.lane != Lane::Compute {
        return None;
    }
    let spans = &o.simulation.timeline.spans;
    let (f, b) = o
        .simulation
        .timeline
        .pairs()
        .into_iter()
        .find(|&(f, b)| spans[f] == *span || spans[b] == *span)?;
    let other = if spans[f] == *span {
        &spans[b]
    } else {
        &spans[f]
    };
    Some(format!(
        "overlapped pair with the {} of micro-batch {} (chunk {}): one unit, {}–{}",
        kind_name(other.kind),
        other.micro_batch,
        other.chunk,
        format::time(spans[f].start),
        format::time(spans[b].end)
    ))
}

/// The lines describing one stage, at most `room` columns wide where the time parts are
/// concerned: memory, then time.
pub fn stage(o: &Outcome, s: u32, room: usize) -> Vec<String> {
    let Some(st) = o.stages.iter().find(|st| st.stage == s) else {
        return vec![format!("no stage s{s} in this plan")];
    };
    let buffers = st
        .peak_memory_bytes
        .saturating_sub(st.static_bytes + st.activation_bytes);
    let mut per_kind: Vec<(String, u64)> = Vec::new();
    for u in &st.units {
        let kind = u.name.split('.').next().unwrap_or("").to_string();
        let bytes = u.size_bytes * u64::from(u.keep);
        match per_kind.iter_mut().find(|(k, _)| *k == kind) {
            Some(entry) => entry.1 += bytes,
            None => per_kind.push((kind, bytes)),
        }
    }
    let kinds: Vec<String> = per_kind
        .iter()
        .map(|(k, b)| format!("{k} {}", format::bytes(*b)))
        .collect();
    let gib = |b: u64| format!("{} GiB", format::gib(b));
    let mut lines = vec![
        format!(
            "blocks {}–{} · {} micro-batches in flight at peak",
            st.first_block, st.last_block, st.in_flight
        ),
        format!(
            "memory: peak {} of a {} budget{}",
            gib(st.peak_memory_bytes),
            gib(st.budget_bytes),
            if st.peak_memory_bytes > st.budget_bytes {
                " (over!)"
            } else {
                ""
            }
        ),
        format!(
            "  static (weights, gradients, optimizer) {}",
            gib(st.static_bytes)
        ),
        format!("  kept activations {}", gib(st.activation_bytes)),
        format!(
            "    kept per micro-batch by unit kind: {}",
            if kinds.is_empty() {
                "unknown".into()
            } else {
                kinds.join(", ")
            }
        ),
        format!("  buffers (recompute, transient) {}", gib(buffers)),
    ];
    if let Some(text) = &o.layout {
        lines.insert(1, format!("split by the layout {text}"));
    }
    if st.offload_bytes > 0 {
        lines.push(format!("  offloaded to host {}", gib(st.offload_bytes)));
    }
    if let Some(t) = stage_time::of_stage(o, s) {
        // The header's parts (one computation, shown in both); those that are zero left
        // out, so that the overlay fits 80x24.
        let total = t.total().max(f64::MIN_POSITIVE);
        let items: Vec<String> = stage_time::parts(&t)
            .iter()
            .filter(|&&(_, _, x)| x != 0.0)
            .map(|&(name, _, x)| format!("{name} {} ({})", format::time(x), format::pct(x / total)))
            .collect();
        // As many parts to a line as fit; a part never breaks.
        let mut line = String::from("time:");
        for item in items {
            let fresh = line.chars().all(|c| c == ' ') || line == "time:";
            let sep = if fresh { " " } else { " · " };
            if !fresh && line.chars().count() + sep.len() + item.chars().count() > room {
                lines.push(std::mem::replace(&mut line, "     ".into()));
                line.push(' ');
                line.push_str(&item);
            } else {
                line.push_str(sep);
                line.push_str(&item);
            }
        }
        lines.push(line);
    }
    lines.push(format!(
        "per micro-batch: fwd {}  bwd {} (includes recompute {})",
        format::time(st.forward_s),
        format::time(st.backward_s),
        format::time(st.recompute_s)
    ));
    lines
}
