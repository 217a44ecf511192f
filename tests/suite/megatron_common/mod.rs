//! Shared helper of the Megatron export tests: the launch script run by bash with `torchrun`
//! replaced by a function that reports what it would start, Megatron-LM's flag list (kept
//! in `tests/megatron/flags.txt` from Megatron's `arguments.py`) and the cross-flag rules of
//! Megatron's `validate_args` (and of the `TransformerConfig` it builds) that apply.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

/// What the script starts: the launcher's shape, the environment and the arguments of
/// Megatron's training script.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// `CUDA_DEVICE_MAX_CONNECTIONS` as exported (`None`: not set).
    pub connections: Option<String>,
    /// torchrun's `--nproc_per_node`.
    pub per_node: u64,
    /// torchrun's `--nnodes`.
    pub nodes: u64,
    /// The training script, `pretrain_gpt.py`.
    pub script: String,
    /// Its arguments in order: flag and values.
    pub args: Vec<(String, Vec<String>)>,
}

impl Launch {
    /// `per_node x nodes`: the WORLD_SIZE torchrun gives every rank.
    pub fn world(&self) -> u64 {
        self.per_node * self.nodes
    }

    /// The values of `flag` (`None` when absent).
    pub fn get(&self, flag: &str) -> Option<&[String]> {
        self.args
            .iter()
            .find(|(f, _)| f == flag)
            .map(|(_, v)| v.as_slice())
    }

    /// Whether `flag` is given.
    pub fn has(&self, flag: &str) -> bool {
        self.get(flag).is_some()
    }

    /// The one value of `flag`.
    pub fn one(&self, flag: &str) -> Option<&str> {
        self.get(flag).and_then(|v| v.first()).map(String::as_str)
    }

    /// The integer value of `flag`, or `default` when absent.
    pub fn int(&self, flag: &str, default: u64) -> u64 {
        self.one(flag).map_or(default, |v| v.parse().unwrap())
    }

    /// A launch from arguments written as on a command line (for the rules' own tests).
    pub fn from_words(connections: Option<&str>, world: u64, words: &str) -> Launch {
        let words: Vec<String> = words.split_whitespace().map(str::to_string).collect();
        Launch {
            connections: connections.map(str::to_string),
            per_node: world,
            nodes: 1,
            script: "pretrain_gpt.py".into(),
            args: group(&words),
        }
    }
}

/// Words after the training script as `(flag, values)`.
fn group(words: &[String]) -> Vec<(String, Vec<String>)> {
    let mut args: Vec<(String, Vec<String>)> = Vec::new();
    for w in words {
        if w.starts_with("--") {
            args.push((w.clone(), Vec::new()));
        } else {
            args.last_mut()
                .unwrap_or_else(|| panic!("value {w} before any flag"))
                .1
                .push(w.clone());
        }
    }
    args
}

/// Runs `text` in bash with `torchrun` replaced by a function that prints
/// CUDA_DEVICE_MAX_CONNECTIONS and its arguments, NUL-separated.
pub fn launch(text: &str) -> Launch {
    let mut child = Command::new("bash")
        .arg("-s")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs the exported script");
    let stub = "torchrun() { printf '%s\\0' \"${CUDA_DEVICE_MAX_CONNECTIONS-<unset>}\" \"$@\"; }\n";
    {
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(stub.as_bytes()).unwrap();
        stdin.write_all(text.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.is_empty(),
        "bash: {stderr}\n{text}"
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let words: Vec<String> = stdout.split('\0').map(str::to_string).collect::<Vec<_>>();
    let words = &words[..words.len() - 1];
    let connections = (words[0] != "<unset>").then(|| words[0].clone());
    let script = words
        .iter()
        .position(|w| w.ends_with(".py"))
        .expect("a training script");
    let launcher = group(&words[1..script]);
    let value = |flag: &str| -> u64 {
        let (_, v) = launcher.iter().find(|(f, _)| f == flag).unwrap();
        v[0].parse().unwrap()
    };
    Launch {
        connections,
        per_node: value("--nproc_per_node"),
        nodes: value("--nnodes"),
        script: words[script].clone(),
        args: group(&words[script + 1..]),
    }
}

/// What a flag takes, from the flag list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagKind {
    /// `switch`, `int`, `float`, `str`, or `list(T)`.
    pub kind: String,
    /// The allowed values, when the parser has choices.
    pub choices: Option<Vec<String>>,
}

/// Megatron-LM's flags (`tests/megatron/flags.txt`) and the commit they were taken from.
pub fn flag_list() -> (String, BTreeMap<String, FlagKind>) {
    let text = include_str!("../../megatron/flags.txt");
    let mut commit = String::new();
    let mut flags = BTreeMap::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Megatron-LM ") {
            if commit.is_empty() {
                commit = rest.split(':').next().unwrap().to_string();
            }
            continue;
        }
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let mut parts = line.splitn(3, ' ');
        let flag = parts.next().unwrap().to_string();
        let kind = parts.next().unwrap().to_string();
        let choices = parts.next().map(|c| {
            c.trim_matches(|ch| ch == '{' || ch == '}')
                .split(',')
                .map(str::to_string)
                .collect()
        });
        flags.insert(flag, FlagKind { kind, choices });
    }
    (commit, flags)
}

/// Every argument is one of Megatron's flags with values of its kind: the problems found.
pub fn check_flags(launch: &Launch) -> Vec<String> {
    let (_, flags) = flag_list();
    let mut problems = Vec::new();
    for (flag, values) in &launch.args {
        let Some(kind) = flags.get(flag) else {
            problems.push(format!("{flag} is not a Megatron-LM flag"));
            continue;
        };
        let (list, base) = match kind.kind.strip_prefix("list(") {
            Some(inner) => (true, inner.trim_end_matches(')')),
            None => (false, kind.kind.as_str()),
        };
        let count_ok = match (base, list) {
            ("switch", _) => values.is_empty(),
            (_, true) => !values.is_empty(),
            (_, false) => values.len() == 1,
        };
        if !count_ok {
            problems.push(format!("{flag} ({}) given {values:?}", kind.kind));
            continue;
        }
        for v in values {
            let typed = match base {
                "int" => v.parse::<i64>().is_ok(),
                "float" => v.parse::<f64>().is_ok(),
                _ => true,
            };
            if !typed {
                problems.push(format!("{flag} takes {base}, given {v}"));
            }
            if let Some(choices) = &kind.choices
                && !choices.contains(v)
            {
                problems.push(format!("{flag} takes one of {choices:?}, given {v}"));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (flag, _) in &launch.args {
        if !seen.insert(flag) {
            problems.push(format!("{flag} given twice"));
        }
    }
    problems
}

/// One virtual stage of a decoded layout: embedding, decoder layers, loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decoded {
    /// `E` is in it.
    pub embedding: bool,
    /// `t` count.
    pub layers: u32,
    /// `m` count (multi-token-prediction layers).
    pub mtp: u32,
    /// `L` is in it.
    pub loss: bool,
}

/// Expands `(X)*n` (innermost first) and then `x*n` for single characters; commas and
/// spaces are ignored as Megatron ignores them.
pub fn expand(layout: &str) -> String {
    let mut s: String = layout.chars().filter(|&c| c != ',' && c != ' ').collect();
    while let Some(close) = s.find(')') {
        let open = s[..close].rfind('(').expect("matching (");
        let inner = s[open + 1..close].to_string();
        let rest = &s[close + 1..];
        let (n, used) = count_after_star(rest);
        s = format!("{}{}{}", &s[..open], inner.repeat(n), &rest[used..]);
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i + 1..].iter().collect();
        let (n, used) = count_after_star(&rest);
        out.push_str(&c.to_string().repeat(n));
        i += 1 + rest[..used].chars().count();
    }
    out
}

/// `*n` at the start of `rest`: (n, bytes used); (1, 0) when absent.
fn count_after_star(rest: &str) -> (usize, usize) {
    let Some(tail) = rest.strip_prefix('*') else {
        return (1, 0);
    };
    let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
    assert!(!digits.is_empty(), "* without a count in {rest}");
    (digits.parse().unwrap(), 1 + digits.len())
}

/// Megatron's decoding of a layout: one entry per virtual stage, in order.
pub fn decode(layout: &str) -> Vec<Decoded> {
    expand(layout)
        .split('|')
        .map(|s| {
            assert!(
                s.chars().all(|c| "EtmL".contains(c)),
                "unknown layer type in {s}"
            );
            Decoded {
                embedding: s.contains('E'),
                layers: s.matches('t').count() as u32,
                mtp: s.matches('m').count() as u32,
                loss: s.contains('L'),
            }
        })
        .collect()
}

/// Megatron's `--recompute-modules` names (TransformerConfig's allowed set).
const RECOMPUTE_MODULES: &[&str] = &[
    "core_attn",
    "moe_act",
    "layernorm",
    "mla_up_proj",
    "mlp",
    "moe",
    "shared_experts",
    "gdn_norm_out",
    "gdp_in_proj",
    "gdp_qkv",
    "mhc",
];

/// The cross-flag rules of Megatron's `validate_args`, of the `TransformerConfig` it builds
/// and of the interleaved schedule's first step that apply to a GPT run on GPUs before
/// Blackwell: the problems found, each in Megatron's words. Rules on flags the export does
/// not write yet (context and expert parallelism, FSDP, fp8, overlaps) are here so that the
/// flags' arrival is checked at once.
pub fn check_rules(l: &Launch) -> Vec<String> {
    let mut p = Vec::new();
    let mut rule = |ok: bool, text: &str| {
        if !ok {
            p.push(text.to_string());
        }
    };
    let tp = l.int("--tensor-model-parallel-size", 1);
    let pp = l.int("--pipeline-model-parallel-size", 1);
    let cp = l.int("--context-parallel-size", 1);
    let ep = l.int("--expert-model-parallel-size", 1);
    let model = tp * pp * cp;
    rule(
        l.world().is_multiple_of(model),
        "world size is not divisible by total_model_size",
    );
    let dp = l.world() / model.max(1);
    let micro = l.int("--micro-batch-size", 0);
    rule(micro > 0, "micro_batch_size must be > 0");
    let global = l.int("--global-batch-size", micro * dp);
    rule(
        micro * dp > 0 && global.is_multiple_of(micro * dp),
        "eval_global_batch_size must be divisible by eval_micro_batch_size * data_parallel_size",
    );
    for required in [
        "--num-layers",
        "--hidden-size",
        "--num-attention-heads",
        "--max-position-embeddings",
    ] {
        rule(l.has(required), &format!("{required} argument is None"));
    }
    let seq = l.int("--seq-length", 0);
    rule(
        l.int("--max-position-embeddings", 0) >= seq,
        "max_position_embeddings must be greater than or equal to seq_length",
    );
    rule(
        cp == 1 || seq.is_multiple_of(2 * cp),
        "seq-length should be a multiple of 2 * context-parallel-size",
    );
    rule(
        !(l.has("--bf16") && l.has("--fp16")),
        "--bf16 and --fp16 are exclusive",
    );

    // Pipeline layout and virtual stages.
    rule(
        [
            "--num-layers-per-virtual-pipeline-stage",
            "--num-virtual-stages-per-pipeline-rank",
            "--pipeline-model-parallel-layout",
        ]
        .iter()
        .filter(|f| l.has(f))
        .count()
            <= 1,
        "No more than one of --num-layers-per-virtual-pipeline-stage, \
         --num-virtual-stages-per-pipeline-rank, --pipeline-model-parallel-layout",
    );
    let layers = l.int("--num-layers", 0);
    let mut vpp = 1;
    if let Some(layout) = l.one("--pipeline-model-parallel-layout") {
        rule(
            [
                "--decoder-first-pipeline-num-layers",
                "--decoder-last-pipeline-num-layers",
                "--account-for-embedding-in-pipeline-split",
                "--account-for-loss-in-pipeline-split",
            ]
            .iter()
            .all(|f| !l.has(f)),
            "pipeline_model_parallel_layout cannot be set with other pipeline layout arguments",
        );
        let stages = decode(layout);
        let n = stages.len() as u64;
        rule(
            n.is_multiple_of(pp),
            "The length of pipeline_model_parallel_layout must be divisible by pipeline_model_parallel_size",
        );
        vpp = n / pp.max(1);
        let flat = expand(layout).replace('|', "");
        rule(flat.starts_with('E'), "The first layer must be embedding");
        rule(flat.ends_with('L'), "The last layer must be loss");
        rule(
            flat.matches('E').count() == 1,
            "Embedding must be specified exactly once",
        );
        rule(
            flat.matches('L').count() == 1,
            "Loss must be specified exactly once",
        );
        rule(
            flat.matches('t').count() as u64 == layers,
            "Number of decoder layers must match num_layers",
        );
    } else {
        rule(
            layers.is_multiple_of(pp),
            "Number of layers should be divisible by the pipeline-model-parallel size",
        );
    }
    if vpp > 1 {
        let overlap_p2p = !l.has("--no-overlap-p2p-communication");
        rule(
            if overlap_p2p { pp > 1 } else { pp > 2 },
            "When interleaved schedule is used, pipeline-model-parallel size should be greater than 1 (2 without p2p overlap)",
        );
        // The interleaved schedule's first step (microbatch_group_size_per_vp_stage = pp).
        let m = global / (micro * dp).max(1);
        rule(
            m >= pp && m.is_multiple_of(pp),
            "The number of contiguous micro-batches in a virtual pipeline stage should range in [PP, M], \
             and M divided by it leave 0 or at least PP",
        );
    }

    // Attention shape (TransformerConfig).
    let heads = l.int("--num-attention-heads", 1);
    rule(
        heads.is_multiple_of(tp),
        "num_attention_heads must be a multiple of tensor_model_parallel_size",
    );
    let groups = l.int("--num-query-groups", heads);
    rule(
        groups.is_multiple_of(tp) || tp.is_multiple_of(groups),
        "num_query_groups must be a multiple or divisor of tensor_model_parallel_size",
    );
    rule(
        l.has("--kv-channels") || l.int("--hidden-size", 0).is_multiple_of(heads),
        "hidden_size must divide by num_attention_heads without --kv-channels",
    );
    rule(
        !(l.has("--multi-latent-attention") && l.has("--group-query-attention")),
        "Group query attention is mutually exclusive with multi latent attention.",
    );
    if let Some(e) = l.one("--num-experts") {
        let e: u64 = e.parse().unwrap();
        rule(
            e.is_multiple_of(ep),
            "Number of experts should be a multiple of expert model parallel_size.",
        );
        // Expert tensor parallelism defaults to t; the expert layout folds into t x cp x d.
        let etp = l.int("--expert-tensor-parallel-size", tp);
        let stage = tp * cp * dp;
        rule(
            stage.is_multiple_of(ep * etp),
            "expert tensor parallel size x expert model parallel size must divide              tensor x context x data parallel size",
        );
        rule(
            !(ep > 1 && tp > 1) || l.has("--sequence-parallel"),
            "When using expert parallelism and tensor parallelism, sequence parallelism must              be used.",
        );
    } else {
        rule(
            ep == 1,
            "num_experts must be non None to use expert model parallelism",
        );
    }

    // Environment (GPUs before Blackwell).
    let fsdp = l.has("--use-torch-fsdp2") || l.has("--use-megatron-fsdp");
    if fsdp {
        rule(
            l.connections.as_deref() != Some("1"),
            "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset.",
        );
    } else if tp > 1 || cp > 1 {
        rule(
            l.connections.as_deref() == Some("1"),
            "Using tensor model parallelism or context parallelism require setting the \
             environment variable CUDA_DEVICE_MAX_CONNECTIONS to 1",
        );
    }
    if l.has("--use-torch-fsdp2") {
        rule(
            pp == 1,
            "--use-torch-fsdp2 is not supported with pipeline parallelism",
        );
        rule(
            ep == 1,
            "--use-torch-fsdp2 is not supported with expert parallelism",
        );
        rule(
            !l.has("--use-distributed-optimizer"),
            "--use-torch-fsdp2 is not supported with MCore's distributed optimizer",
        );
        rule(
            l.has("--untie-embeddings-and-output-weights"),
            "--use-torch-fsdp2 requires --untie-embeddings-and-output-weights",
        );
        rule(
            l.has("--no-gradient-accumulation-fusion"),
            "--use-torch-fsdp2 is not supported with gradient accumulation fusion",
        );
        rule(
            matches!(l.one("--ckpt-format"), Some("torch_dist" | "torch_dcp")),
            "--use-torch-fsdp2 requires --ckpt-format torch_dist or torch_dcp",
        );
    }
    if l.has("--use-megatron-fsdp") {
        rule(
            l.one("--ckpt-format") == Some("fsdp_dtensor"),
            "Megatron-FSDP requires the `fsdp_dtensor` checkpointing format.",
        );
    }

    // Data-parallel overlaps and tensor-parallel overlap.
    if l.has("--overlap-param-gather") {
        rule(
            l.has("--use-distributed-optimizer") || l.has("--use-megatron-fsdp"),
            "--overlap-param-gather only supported with distributed optimizer, megatron fsdp, or dist_muon",
        );
        rule(
            l.has("--overlap-grad-reduce"),
            "Must use --overlap-param-gather with --overlap-grad-reduce",
        );
    }
    if l.has("--tp-comm-overlap") {
        rule(
            l.has("--sequence-parallel"),
            "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled",
        );
    }
    // Megatron turns sequence parallelism off at t = 1 with a warning: a flag that does
    // nothing is not written.
    rule(
        !l.has("--sequence-parallel") || tp > 1,
        "--sequence-parallel at t 1 is disabled by Megatron",
    );

    // Recomputation (validate_args and TransformerConfig).
    match l.one("--recompute-granularity") {
        None => rule(
            !l.has("--recompute-method")
                && !l.has("--recompute-num-layers")
                && !l.has("--recompute-modules"),
            "recompute method, layers or modules without --recompute-granularity do nothing",
        ),
        Some("selective") => {
            rule(
                !l.has("--recompute-method"),
                "recompute method is not yet supported for selective recomputing granularity",
            );
            rule(
                !l.has("--recompute-num-layers"),
                "When using recompute_granularity: selective recompute_num_layers must be None.",
            );
            let modules = l.get("--recompute-modules").unwrap_or(&[]);
            rule(
                modules
                    .iter()
                    .all(|m| RECOMPUTE_MODULES.contains(&m.as_str())),
                "Invalid choices for recompute_modules",
            );
            rule(
                !modules.iter().any(|m| m == "moe_act") || l.has("--moe-grouped-gemm"),
                "moe_act in recompute_modules is only supported with moe_grouped_gemm.",
            );
            rule(
                !modules.iter().any(|m| m == "mla_up_proj") || l.has("--multi-latent-attention"),
                "mla_up_proj in recompute_modules is only supported with multi_latent_attention.",
            );
        }
        Some(_) => {
            rule(
                matches!(l.one("--recompute-method"), Some("uniform" | "block")),
                "Using recompute_granularity: full so recompute_method must be \"block\" or \"uniform\"",
            );
            rule(
                l.int("--recompute-num-layers", 0) >= 1,
                "When using recompute_granularity: full recompute_num_layers must be between 1 and num_layers_per_pipeline_rank",
            );
            rule(
                !l.has("--recompute-modules"),
                "--recompute-modules is read only with selective granularity",
            );
        }
    }
    p
}
