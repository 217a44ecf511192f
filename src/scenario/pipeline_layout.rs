//! A hand-written pipeline layout in Megatron's `--pipeline-model-parallel-layout` grammar:
//! which layers each virtual stage holds, in model order (docs/cli.md, "Pipeline layouts").
//!
//! The text is read exactly as Megatron-LM reads it, so that a layout pipescope accepts means
//! the same split in Megatron, and a layout Megatron refuses is refused here too, with the
//! column and the reason:
//!
//! 1. every `,` is deleted first, wherever it stands (they are cosmetic; `t*1,2` is `t*12`);
//! 2. each `(group)*N` is unrolled (one level: a group cannot hold `(` or `)`, and a
//!    parenthesis without `*N` stays and is refused);
//! 3. each single character followed by `*N` is repeated `N` times (also `|`; `N` may be 0);
//! 4. `|` separates the virtual stages; each stage is a string of `E` (the embedding), `t` (a
//!    transformer layer), `m` (a multi-token-prediction layer) and `L` (the loss and output
//!    layer).
//!
//! [`PipelineLayout::chain`] then checks the layout against a model and a pipeline (the count
//! of stages is `p x chunks`, every layer once, the embedding first and the loss last) and
//! gives each stage's blocks.

use std::fmt;

/// Most characters a layout may unroll to: far above any real model (whose layers are bounded
/// by the scenario's limits), low enough that a stray `*999999999` cannot exhaust memory.
pub const MAX_UNROLLED: usize = 1 << 20;

/// One layer of a layout, as its letter names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutLayer {
    /// `E`: the embedding.
    Embedding,
    /// `t`: one transformer (decoder) layer.
    Decoder,
    /// `m`: one multi-token-prediction layer.
    Mtp,
    /// `L`: the loss with the output layer.
    Loss,
}

impl LayoutLayer {
    fn from_char(c: char) -> Option<Self> {
        match c {
            'E' => Some(Self::Embedding),
            't' => Some(Self::Decoder),
            'm' => Some(Self::Mtp),
            'L' => Some(Self::Loss),
            _ => None,
        }
    }
}

/// Why a layout was refused, and the 1-based column of the text it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError {
    /// 1-based character column in the layout text.
    pub column: usize,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.reason)
    }
}

impl std::error::Error for LayoutError {}

/// One virtual stage: its layers in order, each with the column it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutStage {
    /// The layers with their 1-based source columns.
    pub layers: Vec<(LayoutLayer, usize)>,
    /// Column of the stage's first character (or of the `|` that opens an empty stage).
    pub column: usize,
}

impl LayoutStage {
    /// How many of the stage's layers are `kind`.
    pub fn count(&self, kind: LayoutLayer) -> usize {
        self.layers.iter().filter(|(k, _)| *k == kind).count()
    }
}

/// A parsed layout: the virtual stages in model order, and the text it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PipelineLayout {
    text: String,
    stages: Vec<LayoutStage>,
}

impl fmt::Display for PipelineLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A character of the text being unrolled, with the column it came from.
type Sym = (char, usize);

impl PipelineLayout {
    /// Parses `text` (the grammar above). The meaning against a model is checked by
    /// [`PipelineLayout::chain`].
    pub fn parse(text: &str) -> Result<Self, LayoutError> {
        let syms: Vec<Sym> = text
            .chars()
            .enumerate()
            .map(|(i, c)| (c, i + 1))
            .filter(|&(c, _)| c != ',')
            .collect();
        let end = text.chars().count() + 1;
        let syms = unroll_groups(&syms)?;
        let syms = unroll_single(&syms, end)?;
        let mut stages = vec![LayoutStage {
            layers: Vec::new(),
            column: syms.first().map_or(1, |s| s.1),
        }];
        for (c, col) in syms {
            if c == '|' {
                stages.push(LayoutStage {
                    layers: Vec::new(),
                    column: col,
                });
                continue;
            }
            let Some(kind) = LayoutLayer::from_char(c) else {
                let reason = match c {
                    '(' | ')' => "a group is `(...)*N`: non-empty, not nested, closed by `)` \
                                  and followed by `*` and a count"
                        .to_string(),
                    '*' => "`*` must follow one layer, `|` or a group, and be followed by a \
                            count"
                        .to_string(),
                    _ => format!(
                        "{c:?} is not a layer (E embedding, t transformer layer, m MTP layer, \
                         L loss; `|` between stages, `*N` repeats, `(...)*N` repeats a group)"
                    ),
                };
                return Err(LayoutError {
                    column: col,
                    reason,
                });
            };
            if let Some(last) = stages.last_mut() {
                last.layers.push((kind, col));
            }
        }
        Ok(Self {
            text: text.to_string(),
            stages,
        })
    }

    /// The virtual stages in model order.
    pub fn stages(&self) -> &[LayoutStage] {
        &self.stages
    }

    /// The text as the user wrote it (what `export megatron` writes back).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Megatron's view of the split, one line per pipeline rank: the layers of each of its
    /// virtual stages (stage `i` of the layout runs on rank `i mod p`, as chunk `i / p`).
    pub fn per_rank(&self, p: u32) -> Vec<String> {
        let p = p.max(1) as usize;
        (0..p)
            .map(|rank| {
                self.stages
                    .iter()
                    .skip(rank)
                    .step_by(p)
                    .map(stage_text)
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect()
    }

    /// Checks the layout against a model of `layers` transformer layers and `mtp_layers` MTP
    /// layers on `stages` virtual stages (`p x chunks`), and gives each stage's `(first,
    /// last)` block of the model's chain (block 0 the embedding, blocks `2i+1, 2i+2` layer `i`,
    /// block `2L+1` the head, the `mtp_layers` MTP layers the chain's last layers). Empty
    /// stages are refused: pipescope gives every stage at least one block.
    pub fn chain(
        &self,
        layers: u32,
        mtp_layers: u32,
        stages: usize,
    ) -> Result<Vec<(usize, usize)>, LayoutError> {
        let end = self.text.chars().count() + 1;
        // The stage count after the layout's own mistakes (an empty stage, a misplaced `E`
        // or `L`), so that those are named where they are.
        for (i, stage) in self.stages.iter().enumerate() {
            if stage.layers.is_empty() {
                return Err(LayoutError {
                    column: stage.column,
                    reason: format!(
                        "stage {} is empty (Megatron allows it; pipescope gives every stage at \
                         least one layer)",
                        i + 1
                    ),
                });
            }
        }
        let all = || self.stages.iter().flat_map(|s| s.layers.iter().copied());
        let first = all().next();
        if first.map(|l| l.0) != Some(LayoutLayer::Embedding) {
            return Err(LayoutError {
                column: first.map_or(1, |l| l.1),
                reason: "the first layer must be the embedding `E`".into(),
            });
        }
        let last = all().last();
        if last.map(|l| l.0) != Some(LayoutLayer::Loss) {
            return Err(LayoutError {
                column: last.map_or(end, |l| l.1),
                reason: "the last layer must be the loss `L`".into(),
            });
        }
        for kind in [LayoutLayer::Embedding, LayoutLayer::Loss] {
            if let Some((_, col)) = all().filter(|l| l.0 == kind).nth(1) {
                return Err(LayoutError {
                    column: col,
                    reason: format!("{} must appear exactly once", letter(kind)),
                });
            }
        }
        if self.stages.len() != stages {
            // The first stage too many (or the end, for too few): its `|` opens it.
            let column = self.stages.get(stages).map_or(end, |s| s.column);
            let place = if self.stages.len() > stages {
                format!("stage {} is the first too many, opened here", stages + 1)
            } else {
                "the layout ends here".to_string()
            };
            return Err(LayoutError {
                column,
                reason: format!(
                    "the layout has {} stage{}, the pipeline runs {stages} (p x chunks; on \
                     DualPipe and Chimera p, both directions running the same split); {place}; \
                     stages are separated by `|`",
                    self.stages.len(),
                    if self.stages.len() == 1 { "" } else { "s" }
                ),
            });
        }
        let mut decoders = all().filter(|l| l.0 == LayoutLayer::Decoder);
        if let Some((_, col)) = decoders.nth(layers as usize) {
            return Err(LayoutError {
                column: col,
                reason: format!("more `t` than the model's {layers} transformer layers"),
            });
        }
        let n = all().filter(|l| l.0 == LayoutLayer::Decoder).count();
        if n != layers as usize {
            return Err(LayoutError {
                column: end,
                reason: format!("{n} `t` where the model has {layers} transformer layers"),
            });
        }
        // The chain holds the MTP layers after the transformer layers (each two blocks, as
        // a layer): every `m` after the last `t`, as many as the model has.
        let mtps = || all().filter(|l| l.0 == LayoutLayer::Mtp);
        if let Some((_, col)) = mtps().nth(mtp_layers as usize) {
            return Err(LayoutError {
                column: col,
                reason: format!("more `m` than the model's {mtp_layers} MTP layers"),
            });
        }
        let m = mtps().count();
        if m != mtp_layers as usize {
            return Err(LayoutError {
                column: end,
                reason: format!("{m} `m` where the model has {mtp_layers} MTP layers"),
            });
        }
        let last_t = all().rfind(|l| l.0 == LayoutLayer::Decoder);
        if let (Some((_, first_m)), Some((_, t_col))) = (mtps().next(), last_t)
            && first_m < t_col
        {
            return Err(LayoutError {
                column: first_m,
                reason: "`m` before a `t`: the MTP layers follow every transformer layer".into(),
            });
        }
        let mut out = Vec::with_capacity(stages);
        let mut next = 0usize;
        for stage in &self.stages {
            let blocks: usize = stage
                .layers
                .iter()
                .map(|(k, _)| match k {
                    LayoutLayer::Decoder | LayoutLayer::Mtp => 2,
                    LayoutLayer::Embedding | LayoutLayer::Loss => 1,
                })
                .sum();
            out.push((next, next + blocks - 1));
            next += blocks;
        }
        Ok(out)
    }
}

fn letter(kind: LayoutLayer) -> &'static str {
    match kind {
        LayoutLayer::Embedding => "the embedding `E`",
        LayoutLayer::Decoder => "`t`",
        LayoutLayer::Mtp => "`m`",
        LayoutLayer::Loss => "the loss `L`",
    }
}

/// A stage as `E t*3`-style text (runs of one letter folded).
fn stage_text(stage: &LayoutStage) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run: Option<(char, usize)> = None;
    let ch = |k: LayoutLayer| match k {
        LayoutLayer::Embedding => 'E',
        LayoutLayer::Decoder => 't',
        LayoutLayer::Mtp => 'm',
        LayoutLayer::Loss => 'L',
    };
    let flush = |run: Option<(char, usize)>, parts: &mut Vec<String>| match run {
        Some((c, 1)) => parts.push(c.to_string()),
        Some((c, n)) => parts.push(format!("{c}*{n}")),
        None => {}
    };
    for (k, _) in &stage.layers {
        let c = ch(*k);
        match run {
            Some((r, n)) if r == c => run = Some((r, n + 1)),
            _ => {
                flush(run, &mut parts);
                run = Some((c, 1));
            }
        }
    }
    flush(run, &mut parts);
    if parts.is_empty() {
        "(empty)".into()
    } else {
        parts.join(" ")
    }
}

/// Reads the decimal count after a `*` at `syms[at..]`: the count and the index past it, or
/// `None` when no digit follows.
fn count_at(syms: &[Sym], at: usize) -> Option<(Result<usize, usize>, usize)> {
    let digits = syms[at..]
        .iter()
        .take_while(|(c, _)| c.is_ascii_digit())
        .count();
    if digits == 0 {
        return None;
    }
    let mut n: Option<usize> = Some(0);
    for (c, _) in &syms[at..at + digits] {
        n = n
            .and_then(|v| v.checked_mul(10))
            .and_then(|v| v.checked_add(c.to_digit(10).unwrap_or(0) as usize));
    }
    let col = syms[at].1;
    Some((n.ok_or(col), at + digits))
}

/// Appends `part` repeated `n` times to `out`, refusing an unrolled text over [`MAX_UNROLLED`].
fn repeat_into(out: &mut Vec<Sym>, part: &[Sym], n: usize, col: usize) -> Result<(), LayoutError> {
    let grows = part.len().checked_mul(n);
    if grows.is_none_or(|g| out.len().saturating_add(g) > MAX_UNROLLED) {
        return Err(too_long(col));
    }
    for _ in 0..n {
        out.extend_from_slice(part);
    }
    Ok(())
}

fn too_long(col: usize) -> LayoutError {
    LayoutError {
        column: col,
        reason: format!("the layout unrolls to more than {MAX_UNROLLED} layers"),
    }
}

/// Step 2: unrolls each `(group)*N`, scanning left to right as Megatron's regular expression
/// does (the group is everything up to the first `)`; it must be non-empty and be followed
/// by `*` and a count).
fn unroll_groups(syms: &[Sym]) -> Result<Vec<Sym>, LayoutError> {
    let mut out = Vec::with_capacity(syms.len());
    let mut i = 0;
    while i < syms.len() {
        if syms[i].0 == '(' {
            let close = syms[i + 1..].iter().position(|s| s.0 == ')');
            if let Some(len) = close.filter(|&l| l > 0) {
                let after = i + 1 + len + 1;
                if syms.get(after).map(|s| s.0) == Some('*')
                    && let Some((n, next)) = count_at(syms, after + 1)
                {
                    let n = n.map_err(too_long)?;
                    repeat_into(&mut out, &syms[i + 1..i + 1 + len], n, syms[i].1)?;
                    i = next;
                    continue;
                }
            }
        }
        out.push(syms[i]);
        i += 1;
    }
    Ok(out)
}

/// Step 3: repeats each single character followed by `*N`.
fn unroll_single(syms: &[Sym], end: usize) -> Result<Vec<Sym>, LayoutError> {
    let mut out = Vec::with_capacity(syms.len());
    let mut i = 0;
    while i < syms.len() {
        if syms.get(i + 1).map(|s| s.0) == Some('*')
            && let Some((n, next)) = count_at(syms, i + 2)
        {
            let n = n.map_err(too_long)?;
            repeat_into(&mut out, &syms[i..=i], n, syms[i].1)?;
            i = next;
            continue;
        }
        out.push(syms[i]);
        i += 1;
    }
    if out.len() > MAX_UNROLLED {
        return Err(too_long(end));
    }
    Ok(out)
}

#[cfg(test)]
#[path = "pipeline_layout_tests.rs"]
mod tests;
