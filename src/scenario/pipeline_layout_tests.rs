//! The layout grammar against what Megatron-LM's parser makes of the same strings, and the
//! checks against a model with the column they point at.

use super::*;

/// The stages as letter strings.
fn stages(text: &str) -> Vec<String> {
    PipelineLayout::parse(text)
        .unwrap()
        .stages()
        .iter()
        .map(|s| {
            s.layers
                .iter()
                .map(|(k, _)| match k {
                    LayoutLayer::Embedding => 'E',
                    LayoutLayer::Decoder => 't',
                    LayoutLayer::Mtp => 'm',
                    LayoutLayer::Loss => 'L',
                })
                .collect()
        })
        .collect()
}

fn err(text: &str) -> LayoutError {
    PipelineLayout::parse(text).unwrap_err()
}

#[test]
fn deepseek_v3_layout_unrolls_to_32_stages() {
    let s = stages("Et*3|(tt|)*29,m|L");
    assert_eq!(s.len(), 32);
    assert_eq!(s[0], "Ettt");
    assert!(s[1..30].iter().all(|x| x == "tt"));
    assert_eq!(s[30], "m");
    assert_eq!(s[31], "L");
}

#[test]
fn the_quirks_megatron_has_are_kept() {
    // Commas are deleted first, anywhere.
    assert_eq!(
        stages("Et*1,2L"),
        vec!["E".to_string() + &"t".repeat(12) + "L"]
    );
    // `*N` repeats any single character, `|` included, and may be 0.
    assert_eq!(stages("E|*2tL"), vec!["E", "", "tL"]);
    assert_eq!(stages("Et*0|tL"), vec!["E", "tL"]);
    assert_eq!(stages("(E|t)*2"), vec!["E", "tE", "t"]);
    // A group's trailing `|` plus an explicit `|` make an empty stage.
    assert_eq!(stages("Et*3|(tt|)*2|L"), vec!["Ettt", "tt", "tt", "", "L"]);
    assert_eq!(stages("Et*8|t*8|t*8|t*8L").len(), 4);
    assert_eq!(stages("Et*007L"), vec!["EtttttttL"]);
}

#[test]
fn wrong_text_is_refused_at_its_column() {
    // Nested groups: the outer `(` takes the inner `(t|` as its group, which leaves the
    // inner `(` invalid, as in Megatron.
    let e = err("((t|)*2)*2");
    assert_eq!(e.column, 2, "{e}");
    assert!(e.reason.contains("group"), "{e}");
    assert_eq!(err("t**2").column, 2);
    assert_eq!(err("()*3").column, 1);
    assert_eq!(err("E t|L").column, 2);
    assert!(err("E t|L").reason.contains("' '"));
    assert_eq!(err("Et*3|(tt|L").column, 6);
    assert_eq!(err("Et|x").column, 4);
    // Columns count characters, not bytes, and commas keep their place.
    assert_eq!(err("E,t,é").column, 5);
}

#[test]
fn huge_repeats_are_refused_not_allocated() {
    let e = err("Et*99999999999999999999999L");
    assert_eq!(e.column, 4);
    assert!(e.reason.contains("unrolls"), "{e}");
    assert_eq!(err("(tttt)*999999999").column, 1);
    assert!(PipelineLayout::parse("Et*2000000L").is_err());
    assert!(PipelineLayout::parse("Et*100000L").is_ok());
}

#[test]
fn chain_gives_each_stage_its_blocks() {
    let l = PipelineLayout::parse("Et*3|t*4|t*4|t*5L").unwrap();
    // 16 layers: blocks 0 (embedding), 1..=32 (layers), 33 (head).
    let c = l.chain(16, 0, 4).unwrap();
    assert_eq!(c, vec![(0, 6), (7, 14), (15, 22), (23, 33)]);
    // Embedding and loss on stages of their own.
    let l = PipelineLayout::parse("E|t*2|t*2|L").unwrap();
    assert_eq!(
        l.chain(4, 0, 4).unwrap(),
        vec![(0, 0), (1, 4), (5, 8), (9, 9)]
    );
    assert_eq!(
        l.per_rank(2),
        vec!["E | t*2".to_string(), "t*2 | L".to_string()]
    );
}

#[test]
fn chain_refuses_what_megatron_refuses() {
    let l = PipelineLayout::parse("Et*3|t*4|t*4|t*5L").unwrap();
    // Stage count: more stages point at the first extra one, fewer at the end.
    let e = l.chain(16, 0, 2).unwrap_err();
    assert_eq!(e.column, 9, "{e}");
    assert!(
        e.reason.contains("4 stages") && e.reason.contains("runs 2"),
        "{e}"
    );
    let e = l.chain(16, 0, 8).unwrap_err();
    assert_eq!(e.column, 18);
    let one = PipelineLayout::parse("Et*16L").unwrap();
    let e = one.chain(16, 0, 2).unwrap_err();
    assert!(e.reason.starts_with("the layout has 1 stage,"), "{e}");
    // Layer count: too many points at the first extra `t`, too few at the end.
    let e = l.chain(15, 0, 4).unwrap_err();
    assert_eq!(e.column, 14, "{e}");
    assert!(e.reason.contains("15 transformer layers"), "{e}");
    let e = l.chain(17, 0, 4).unwrap_err();
    assert_eq!(e.column, 18);
    assert!(e.reason.contains("16 `t`"), "{e}");
    // Embedding first, loss last, each once.
    let e = PipelineLayout::parse("tE|tL")
        .unwrap()
        .chain(2, 0, 2)
        .unwrap_err();
    assert_eq!((e.column, e.reason.contains("first")), (1, true));
    let e = PipelineLayout::parse("Et|Lt")
        .unwrap()
        .chain(2, 0, 2)
        .unwrap_err();
    assert_eq!((e.column, e.reason.contains("last")), (5, true));
    let e = PipelineLayout::parse("EtE|tL")
        .unwrap()
        .chain(2, 0, 2)
        .unwrap_err();
    assert_eq!((e.column, e.reason.contains("once")), (3, true));
    let e = PipelineLayout::parse("EtL|tL")
        .unwrap()
        .chain(2, 0, 2)
        .unwrap_err();
    assert_eq!(e.column, 6);
    // An MTP layer, and an empty stage.
    let e = PipelineLayout::parse("Et|tm|L")
        .unwrap()
        .chain(2, 0, 3)
        .unwrap_err();
    assert_eq!((e.column, e.reason.contains("MTP")), (5, true));
    let e = PipelineLayout::parse("Et||tL")
        .unwrap()
        .chain(2, 0, 3)
        .unwrap_err();
    assert_eq!((e.column, e.reason.contains("stage 2 is empty")), (3, true));
    let e = PipelineLayout::parse("")
        .unwrap()
        .chain(2, 0, 1)
        .unwrap_err();
    assert_eq!(e.column, 1);
}

#[test]
fn the_text_is_kept_as_written() {
    let l = PipelineLayout::parse("E t".replace(' ', "").as_str()).unwrap();
    assert_eq!(l.to_string(), "Et");
    assert_eq!(l.text(), "Et");
}
