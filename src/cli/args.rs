//! Command-line arguments (clap derive). No work is done here.
// The model commands' arguments are unused in an engine-only build.
#![cfg_attr(not(feature = "models"), allow(dead_code))]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Exact context-free constraints for diffusion and infilling language models.
#[derive(Debug, Parser)]
#[command(name = "cdiff", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide whether a partial output (text with holes) can be completed to
    /// a word of the grammar, and show a completion.
    Check(CheckArgs),
    /// Show a grammar: terminals, rules, normal form and lexer size.
    Grammar(GrammarArgs),
    /// Benchmark the checks on partial outputs cut out of valid documents.
    Bench(BenchArgs),
    /// Generate with a diffusion language model, constrained to a grammar.
    #[cfg(feature = "models")]
    Decode(DecodeArgs),
    /// Write a model directory with random weights (for tests and timing).
    #[cfg(feature = "models")]
    InitRandom(InitArgs),
    /// Fill the regions of a template (code with holes) with an infilling
    /// model, constrained to a grammar.
    #[cfg(feature = "models")]
    Infill(InfillArgs),
    /// Train a small masked-diffusion LM (LLaDA architecture, byte-level
    /// tokenizer) on a file of texts, one per line, on CPU.
    #[cfg(feature = "models")]
    Train(TrainArgs),
    /// Evaluate a model as in Mündler et al.: run a benchmark task in each
    /// mode and seed (records in JSON lines), merge shards, print tables.
    #[cfg(feature = "models")]
    #[command(subcommand)]
    Eval(EvalCommand),
}

/// Arguments of `cdiff train`.
#[derive(Debug, Args)]
pub struct TrainArgs {
    /// Training texts, one per line (`.jsonl`: one JSON value per line,
    /// re-serialized compactly; `.csv`: the `smiles` column; otherwise the
    /// first whitespace-separated field). Repeatable.
    #[arg(long, value_name = "FILE", required = true)]
    pub data: Vec<PathBuf>,

    /// Output model directory (checkpoints are written here). A directory
    /// that already holds a model needs --resume or --force.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Total optimizer steps.
    #[arg(long, default_value_t = 2000)]
    pub steps: usize,

    /// Sequences per batch.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,

    /// Context length in tokens (bytes); longer texts are skipped.
    #[arg(long, default_value_t = 64)]
    pub ctx: usize,

    /// Transformer blocks.
    #[arg(long, default_value_t = 4)]
    pub layers: usize,

    /// Width of the residual stream.
    #[arg(long, default_value_t = 192)]
    pub hidden: usize,

    /// Attention heads.
    #[arg(long, default_value_t = 4)]
    pub heads: usize,

    /// Width of the SwiGLU MLP (default: 8/3 of hidden, rounded to 32).
    #[arg(long)]
    pub mlp: Option<usize>,

    /// Peak learning rate.
    #[arg(long, default_value_t = 1e-3)]
    pub lr: f64,

    /// Warmup steps.
    #[arg(long, default_value_t = 100)]
    pub warmup: usize,

    /// Seed of initialization, data order and masks.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Checkpoint every N steps (and at the end).
    #[arg(long, default_value_t = 100)]
    pub checkpoint_every: usize,

    /// Print progress every N steps.
    #[arg(long, default_value_t = 10)]
    pub log_every: usize,

    /// Continue from the checkpoint in --out: weights, step, data and mask
    /// streams, and the AdamW moments when its optimizer.safetensors is there
    /// (else they restart from zero); the saved hyperparameters are used.
    #[arg(long)]
    pub resume: bool,

    /// Train from scratch into an --out that already holds a model,
    /// overwriting it (without --force or --resume that is refused).
    #[arg(long, conflicts_with = "resume")]
    pub force: bool,

    /// Where training runs: auto (CUDA when built with --features cuda and
    /// a GPU is there, Metal likewise, else the CPU), cpu, cuda[:N],
    /// metal[:N].
    #[arg(long, default_value = "auto", value_name = "DEVICE")]
    pub device: String,
}

/// Constraint modes of `cdiff decode`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModeArg {
    /// No constraint.
    Vanilla,
    /// Constrained; gives up after too many rejections.
    ConMinus,
    /// Constrained; finishes from the witness after too many rejections.
    Con,
}

/// Dream's position-selection rules.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum AlgArg {
    /// Lowest entropy first.
    Entropy,
    /// Highest probability first.
    MaskgitPlus,
    /// Largest top-1/top-2 margin first.
    TopkMargin,
    /// Random order.
    Random,
    /// Dream's `origin`: each masked position unmasked with probability
    /// 1 − s/t per step, in random order.
    Origin,
}

/// LLaDA's remasking rules.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum RemaskingArg {
    /// Keep the most confident tokens.
    LowConfidence,
    /// Keep random tokens.
    Random,
}

/// Member order of the objects of a JSON Schema (`--property-order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PropertyOrderArg {
    /// Any order, as JSON Schema means (exact up to 12 properties per
    /// object; in larger ones optional properties may repeat, reported).
    Any,
    /// Declared properties in schema order, extra ones after them.
    Schema,
}

/// Options of the grammar generated from `--json-schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// With --json-schema: the order object members may be written in.
    /// `any` (default): any order, each declared property at most once,
    /// exact for objects of up to 12 properties (in larger ones optional
    /// properties may repeat, listed by --explain); `schema`: schema order
    /// (a smaller grammar).
    #[arg(long, value_enum, value_name = "ORDER", default_value = "any")]
    pub property_order: PropertyOrderArg,
}

/// Arguments of `cdiff decode`.
#[derive(Debug, Args)]
pub struct DecodeArgs {
    /// Model directory (Hugging Face layout) or alias: dream-7b,
    /// dream-coder-7b, diffucoder-7b, llada-8b (looked up offline in the
    /// Hugging Face cache).
    /// Default: cdiff's own `models/smiles-tiny` (with
    /// `grammars/smiles.ebnf` when no grammar is given). A shipped model's
    /// name (smiles-tiny, json-tiny) without --grammar uses its grammar.
    #[arg(long, value_name = "DIR_OR_ALIAS")]
    pub model: Option<String>,

    /// The grammar the output must be in (Lark dialect, or GBNF for `.gbnf`).
    #[arg(long, short = 'g', value_name = "FILE")]
    pub grammar: Option<PathBuf>,

    /// A JSON Schema instead of a grammar (`FILE#/POINTER`: the schema at
    /// that JSON pointer of the file).
    #[arg(long, value_name = "FILE[#/POINTER]", conflicts_with_all = ["grammar", "start"])]
    pub json_schema: Option<PathBuf>,

    /// JSON Schema options.
    #[command(flatten)]
    pub schema: SchemaArgs,

    /// The start rule (default: `start`).
    #[arg(long, value_name = "RULE")]
    pub start: Option<String>,

    /// The user prompt (rendered with the model's chat template).
    #[arg(long, value_name = "TEXT", conflicts_with = "prompt_file")]
    pub prompt: Option<String>,

    /// Read the prompt from a file.
    #[arg(long, value_name = "FILE")]
    pub prompt_file: Option<PathBuf>,

    /// Answer length in tokens (default: 256; 64 for the default model).
    #[arg(long)]
    pub max_tokens: Option<usize>,

    /// Sampling and constraint settings.
    #[command(flatten)]
    pub sampler: SamplerArgs,

    /// Text that starts the answer and is the first chunk of the constrained
    /// text (e.g. headers and a function signature).
    #[arg(long, value_name = "TEXT")]
    pub prefill: Option<String>,

    /// The answer opens with a markdown code fence of this language, outside
    /// the constrained text.
    #[arg(long, value_name = "LANG")]
    pub fence: Option<String>,

    /// Print one JSON record instead of the text.
    #[arg(long)]
    pub json: bool,

    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Sampling and constraint settings shared by `decode` and `infill`.
#[derive(Debug, Args)]
pub struct SamplerArgs {
    /// Constraint mode.
    #[arg(long, value_enum, default_value = "con")]
    pub mode: ModeArg,

    /// Denoising steps of a diffusion model (default: as many as masked
    /// tokens; half as many for a shipped model).
    #[arg(long)]
    pub steps: Option<usize>,

    /// Dream's position-selection rule.
    #[arg(long, value_enum, default_value = "entropy")]
    pub alg: AlgArg,

    /// Sampling temperature (default: 0.2 for Dream, 0 for LLaDA and for
    /// autoregressive models, the model card's for a shipped model).
    #[arg(long)]
    pub temperature: Option<f64>,

    /// Dream's nucleus mass.
    #[arg(long, default_value_t = 0.95)]
    pub top_p: f64,

    /// Dream's top-k filter, applied after top-p.
    #[arg(long, value_name = "K")]
    pub top_k: Option<usize>,

    /// Dream's alg_temp: above 0, positions are drawn with probabilities
    /// softmax(confidence / alg_temp) instead of the most confident first.
    #[arg(long, default_value_t = 0.0, value_name = "T")]
    pub alg_temp: f64,

    /// LLaDA's classifier-free guidance scale (0: off; each step then runs
    /// the model twice, once with the prompt masked).
    #[arg(long, default_value_t = 0.0, value_name = "W")]
    pub cfg_scale: f64,

    /// LLaDA's logits_eos_inf: never sample EOS.
    #[arg(long)]
    pub logits_eos_inf: bool,

    /// LLaDA's confidence_eos_eot_inf: positions whose sampled token is EOS
    /// or padding are committed last.
    #[arg(long)]
    pub confidence_eos_eot_inf: bool,

    /// LLaDA's block length (default: 32; one block for the default model).
    #[arg(long)]
    pub block_length: Option<usize>,

    /// LLaDA's remasking rule (default: low-confidence; random for the
    /// default model, as in its model card).
    #[arg(long, value_enum)]
    pub remasking: Option<RemaskingArg>,

    /// Rejections before con-minus gives up / con uses the witness.
    #[arg(long, default_value_t = 100)]
    pub max_rejections: usize,

    /// Diffusion models: a proposal is also refused when some hole could no
    /// longer be filled within its masks (k masks hold at most k tokens);
    /// off by default, as in the paper.
    #[arg(long)]
    pub limit_holes: bool,

    /// After N rejections at one position, compute the position's
    /// allowed-token mask and sample from it (rejections then no longer end
    /// a decode or an infill); `0` (masks ahead): autoregressive infilling
    /// computes every position's mask while the model's forward pass for it
    /// runs (a second thread) and never proposes a refused token (diffusion
    /// models: as 1); `off`: rejection sampling only, as in the paper.
    /// Default: 0 for autoregressive models, 8 for diffusion models.
    #[arg(long, value_name = "N|off", value_parser = parse_mask_after)]
    pub mask_after: Option<MaskAfter>,

    /// Diffusion models: try a step's proposals one by one even where one
    /// check of them all committed decides them (the same tokens, more
    /// checks; for comparison).
    #[arg(long)]
    pub one_by_one: bool,

    /// Answer every proposal by a fresh check, as in the paper: no
    /// proposals together, no insertion-point answers, no replayed hole
    /// exits (the same tokens; for comparison).
    #[arg(long)]
    pub fresh_checks: bool,

    /// Diffusion models on a GPU: start the next forward pass on the
    /// guessed canvas (the step's first proposals committed) while the
    /// step's checks run, instead of after them (the same tokens; off by
    /// default, see the README).
    #[arg(long)]
    pub overlap: bool,

    /// Seed of all randomness.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Decode exactly as the authors' code (Dream's generation_utils.py,
    /// LLaDA's generate.py) where cdiff's rules differ: the mask id and ids
    /// past the tokenizer may be sampled, confidences over the whole
    /// vocabulary, LLaDA's uneven block splits refused (README: "Reference
    /// compatibility").
    #[arg(long)]
    pub reference_compat: bool,

    /// Weights' dtype: f32, bf16 or f16.
    #[arg(long, default_value = "f32")]
    pub dtype: String,

    /// Where the model runs: auto (CUDA when built with --features cuda and
    /// a GPU is there, Metal likewise, else the CPU), cpu, cuda[:N],
    /// metal[:N].
    #[arg(long, default_value = "auto", value_name = "DEVICE")]
    pub device: String,
}

/// Arguments of `cdiff infill`.
#[derive(Debug, Args)]
pub struct InfillArgs {
    /// The template: the partial-output JSON of `cdiff check` (strings and
    /// nulls, each null a region), or with --hole-marker a text file in
    /// which each occurrence of the marker is a region. `-`: standard input.
    #[arg(value_name = "TEMPLATE")]
    pub template: PathBuf,

    /// Read TEMPLATE as text; each occurrence of this string is a region.
    #[arg(long, value_name = "STR")]
    pub hole_marker: Option<String>,

    /// Model directory (Hugging Face layout) or alias: an autoregressive
    /// FIM model (starcoder2-7b, codegemma-7b, deepseek-coder-1.3b,
    /// deepseek-coder-6.7b, deepseek-coder-33b, qwen2.5-coder-7b, ... or a
    /// directory with model_type starcoder2, llama, gemma or qwen2) or a
    /// diffusion model (as for decode, shipped models included). Default:
    /// the shipped model of the grammar.
    #[arg(long, value_name = "DIR_OR_ALIAS")]
    pub model: Option<String>,

    /// The grammar the filled template must be in. Default: the grammar of
    /// the shipped model named by --model, else, with --hole-marker, of the
    /// shipped model for the template's extension (.cpp and other C++
    /// extensions: grammars/cpp.ebnf with cpp-tiny; .json; .smi).
    #[arg(long, short = 'g', value_name = "FILE")]
    pub grammar: Option<PathBuf>,

    /// A JSON Schema instead of a grammar.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["grammar", "start"])]
    pub json_schema: Option<PathBuf>,

    /// JSON Schema options.
    #[command(flatten)]
    pub schema: SchemaArgs,

    /// The start rule (default: `start`).
    #[arg(long, value_name = "RULE")]
    pub start: Option<String>,

    /// Autoregressive models: tokens per region at most.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,

    /// Autoregressive models: what stands for a later, unfilled region in
    /// a prompt's suffix.
    #[arg(long, value_name = "STR", default_value = "")]
    pub placeholder: String,

    /// Diffusion models: mask tokens per region (a region may end early).
    #[arg(long, default_value_t = 16)]
    pub hole_tokens: usize,

    /// Diffusion models: a user prompt before the template (rendered with
    /// the model's chat template); none by default.
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,

    /// Sampling and constraint settings.
    #[command(flatten)]
    pub sampler: SamplerArgs,

    /// Print one JSON record instead of the text.
    #[arg(long)]
    pub json: bool,

    /// No progress lines on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Model architectures of `cdiff init-random`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ArchArg {
    /// Dream (Qwen2 body).
    Dream,
    /// LLaDA (LLaMA body, OLMo names).
    Llada,
    /// StarCoder2 (autoregressive FIM; full size: StarCoder2-7B).
    Starcoder2,
    /// LLaMA architecture (autoregressive FIM; full size: DeepSeek-Coder-6.7B).
    Llama,
    /// Gemma (autoregressive FIM; full size: CodeGemma-7B).
    Gemma,
    /// Qwen2 (autoregressive FIM; full size: Qwen2.5-Coder-7B).
    Qwen2,
}

/// Model sizes of `cdiff init-random`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum SizeArg {
    /// A few layers of width 64 with a byte-level tokenizer.
    Tiny,
    /// The real size (Dream 7B / LLaDA 8B / the 7B FIM models).
    #[value(alias = "7b", alias = "8b", alias = "real")]
    Full,
}

/// Arguments of `cdiff init-random`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Architecture.
    #[arg(long, value_enum)]
    pub arch: ArchArg,

    /// Size.
    #[arg(long, value_enum, default_value = "tiny")]
    pub size: SizeArg,

    /// Output directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// Seed of the weights.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Copy this tokenizer (e.g. ../shared/tokenizers/dream-v0-instruct-7b)
    /// instead of writing a byte-level one.
    #[arg(long, value_name = "DIR")]
    pub tokenizer: Option<PathBuf>,
}

/// Arguments of `cdiff check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The grammar, in the Lark dialect.
    #[arg(
        long,
        short = 'g',
        value_name = "FILE",
        required_unless_present = "json_schema"
    )]
    pub grammar: Option<PathBuf>,

    /// A JSON Schema (draft 2020-12) instead of a grammar: outputs must be
    /// JSON texts valid for it. Keywords not enforced are listed on stderr.
    /// `FILE#/POINTER` takes the schema at that JSON pointer of the file
    /// (e.g. `case.json#/schema` for a schema wrapped in a test case).
    #[arg(long, value_name = "FILE[#/POINTER]", conflicts_with_all = ["grammar", "start"])]
    pub json_schema: Option<PathBuf>,

    /// JSON Schema options.
    #[command(flatten)]
    pub schema: SchemaArgs,

    /// With --json-schema: print the property order, the keywords not (or
    /// only approximately) enforced, each with its JSON pointer (among them
    /// `properties` of an object with more than 12 properties, whose
    /// optional members may repeat under `--property-order any`), and
    /// the generated grammar.
    #[arg(long, requires = "json_schema")]
    pub explain: bool,

    /// The start rule (default: `start`).
    #[arg(long, value_name = "RULE")]
    pub start: Option<String>,

    /// Print one JSON object instead of text for a person.
    #[arg(long)]
    pub json: bool,

    /// Check every case of a JSON-lines file: one object per line with a
    /// "partial" array; the other fields are copied to the output line. A
    /// line that cannot be checked gets a record with "completable": null
    /// and an "error", and the run goes on (exit code 2 at the end).
    #[arg(long, value_name = "CASES.jsonl", conflicts_with = "partial")]
    pub jsonl: Option<PathBuf>,

    /// With --jsonl: stop at the first line that cannot be checked (exit
    /// code 2, nothing written for that line).
    #[arg(long, requires = "jsonl")]
    pub fail_fast: bool,

    /// Also decide whether every hole can be filled with at most N bytes
    /// (a diffusion canvas's run of N masks of a byte-level model): "no" is
    /// exact (no such fill exists), "yes" may be optimistic (each terminal
    /// counts its shortest lexeme); limits above 8 count as none.
    #[arg(long, value_name = "N")]
    pub hole_bytes: Option<usize>,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// The partial output: a JSON array of strings and nulls (null = hole; a
    /// trailing null leaves the end open). `-` reads standard input.
    #[arg(value_name = "PARTIAL.json", required_unless_present = "jsonl")]
    pub partial: Option<PathBuf>,
}

/// Arguments of `cdiff grammar`.
#[derive(Debug, Args)]
pub struct GrammarArgs {
    /// The grammar, in the Lark dialect.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The start rule (default: `start`).
    #[arg(long, value_name = "RULE")]
    pub start: Option<String>,
}

/// Arguments of `cdiff bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The grammar, in the Lark dialect.
    #[arg(
        long,
        short = 'g',
        value_name = "FILE",
        required_unless_present = "json_schema"
    )]
    pub grammar: Option<PathBuf>,

    /// A JSON Schema instead of a grammar (see `cdiff check --json-schema`;
    /// `FILE#/POINTER` takes the schema at that JSON pointer).
    #[arg(long, value_name = "FILE[#/POINTER]", conflicts_with_all = ["grammar", "start"])]
    pub json_schema: Option<PathBuf>,

    /// JSON Schema options.
    #[command(flatten)]
    pub schema: SchemaArgs,

    /// The start rule (default: `start`).
    #[arg(long, value_name = "RULE")]
    pub start: Option<String>,

    /// The documents: every file of a directory (not recursive), one file, or
    /// a `.jsonl` file with one JSON string per line. Documents the grammar
    /// does not accept are skipped.
    #[arg(long, value_name = "DIR_OR_FILE")]
    pub docs: PathBuf,

    /// With a `.jsonl` of objects: the string fields forming a document,
    /// joined by `+` (e.g. `declaration+canonical_solution`).
    #[arg(long, value_name = "NAME[+NAME...]")]
    pub field: Option<String>,

    /// How many spans to cut out of each document: `N` or `LO..HI` (inclusive).
    #[arg(long, value_name = "LO..HI", default_value = "1..3", value_parser = parse_holes)]
    pub holes: (usize, usize),

    /// Mask a diffusion canvas instead: about this fraction of each
    /// document's bytes (0 to 1), in random spans of 1 to 8 bytes merged where
    /// they touch (replaces `--holes`).
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub canvas: Option<f64>,

    /// Make each case's document at least this many bytes long by joining
    /// random documents of the corpus with `--join`, inside `--prefix` and
    /// `--suffix` (e.g. `--join , --prefix [ --suffix ]` for JSON).
    #[arg(long, value_name = "BYTES")]
    pub size: Option<usize>,

    /// The separator of joined documents (with `--size`).
    #[arg(long, value_name = "TEXT", default_value = "\n", requires = "size")]
    pub join: String,

    /// Text before the joined documents (with `--size`).
    #[arg(long, value_name = "TEXT", default_value = "", requires = "size")]
    pub prefix: String,

    /// Text after the joined documents (with `--size`).
    #[arg(long, value_name = "TEXT", default_value = "", requires = "size")]
    pub suffix: String,

    /// Number of cases.
    #[arg(long, value_name = "N", default_value_t = 300)]
    pub samples: usize,

    /// Seed of the pseudo-random choices.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,

    /// Time `completable_best` (the witness a decoder finishes from: the
    /// search goes on toward its fixpoint for up to half the budget)
    /// instead of `completable`.
    #[arg(long)]
    pub best: bool,

    /// Times each case's `check` and `completable` are run; the fastest run
    /// is the case's time ("warm, best of N"; 1: one cold run per case).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,

    /// Number of grammar compilations timed (the median is reported).
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub compiles: u32,

    #[command(flatten)]
    pub limits: LimitArgs,

    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// The subcommands of `cdiff eval`.
#[cfg(feature = "models")]
#[derive(Debug, Subcommand)]
pub enum EvalCommand {
    /// Run a task: one JSON record per (instance, mode, seed), appended to
    /// --out as each finishes.
    Run(Box<EvalRunArgs>),
    /// Merge result files (shards): one record per key, in canonical order.
    Merge(EvalMergeArgs),
    /// Print markdown tables of result files.
    Report(EvalReportArgs),
}

/// Benchmark tasks of `cdiff eval run`.
#[cfg(feature = "models")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalTaskArg {
    /// Multi-region infilling on HumanEval-X C++: random spans removed.
    MriCpp,
    /// Multi-region infilling on HumanEval-X C++: whole lines removed.
    MriCppLines,
    /// C++ generation with a diffusion LM: HumanEval-X from its instruction
    /// and signature.
    DlmCpp,
    /// JSON Schema extraction with a diffusion LM: json-mode-eval.
    Json,
    /// SMILES generation with a diffusion LM.
    Smiles,
}

/// When to compile and run programs (functional correctness).
#[cfg(feature = "models")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FunctionalArg {
    /// When g++ is found; otherwise `null` and a warning.
    Auto,
    /// Always; a missing g++ is an error.
    On,
    /// Never (`functional_ok` and `gxx_syntax_ok` are `null`).
    Off,
}

/// Arguments of `cdiff eval run`.
#[cfg(feature = "models")]
#[derive(Debug, Args)]
pub struct EvalRunArgs {
    /// The task.
    #[arg(long, value_enum)]
    pub task: EvalTaskArg,

    /// Regions (spans or lines) removed per instance.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=3))]
    pub spans: u64,

    /// The model: `gold` (the removed text: validates the harness), an
    /// autoregressive FIM model (directory or alias, as for infill) or a
    /// diffusion model (directory, alias or shipped name).
    #[arg(long, value_name = "gold|DIR_OR_ALIAS")]
    pub model: String,

    /// Modes, comma-separated: vanilla, con-minus, con, gp (grammar
    /// prompting: unconstrained, the grammar in the instruction, or before
    /// the code in a comment for the MRI tasks).
    #[arg(long, value_name = "LIST", default_value = "vanilla,con-minus,con", value_parser = cdiff::eval::parse_modes)]
    pub modes: ::std::vec::Vec<cdiff::eval::EvalMode>,

    /// Decoding seeds: `LO..HI` (inclusive), `N` or a comma-separated list.
    #[arg(long, value_name = "LO..HI", default_value = "0..3", value_parser = cdiff::eval::parse_seeds)]
    pub seeds: ::std::vec::Vec<u64>,

    /// Only the first N instances (before sharding).
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,

    /// Read the instances from this JSON-lines file instead of making them:
    /// MRI, the fields of eth-sri/HumanEval-MRI-Cpp (a missing `test` is
    /// taken from --humaneval); dlm-cpp, HumanEval-X rows (as
    /// --humaneval); json, `instance_id, input, schema, output`
    /// (eth-sri/json-mode-eval-extended); smiles, `instance_id, input,
    /// output` (eth-sri/smiles-eval).
    #[arg(long, value_name = "FILE")]
    pub data: Option<PathBuf>,

    /// HumanEval-X C++ (default: the shipped
    /// datasets/humaneval-x-cpp/humaneval_cpp.jsonl).
    #[arg(long, value_name = "FILE")]
    pub humaneval: Option<PathBuf>,

    /// Seed of the instances (MRI: which spans are removed; smiles: the
    /// order of the shipped sample).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub data_seed: u64,

    /// The grammar (default: the shipped grammars/cpp.ebnf, for smiles
    /// grammars/smiles.ebnf; json uses each instance's schema).
    #[arg(long, value_name = "FILE")]
    pub grammar: Option<PathBuf>,

    /// The results file (JSON lines).
    #[arg(long, value_name = "RESULTS.jsonl")]
    pub out: PathBuf,

    /// Continue --out: skip the records already in it.
    #[arg(long)]
    pub resume: bool,

    /// Take every N-th instance starting at I (0-based).
    #[arg(long, value_name = "I/N", value_parser = cdiff::eval::parse_shard)]
    pub shard: Option<(usize, usize)>,

    /// Sampling temperature (default: 1 for autoregressive models, as in
    /// the paper; the diffusion defaults of `decode` otherwise).
    #[arg(long)]
    pub temperature: Option<f64>,

    /// Nucleus mass.
    #[arg(long, default_value_t = 0.95)]
    pub top_p: f64,

    /// Autoregressive models: tokens per region at most (default 256); DLM
    /// tasks: the canvas length (default: a shipped model's context, else
    /// 256).
    #[arg(long)]
    pub max_tokens: Option<usize>,

    /// Rejections before con-minus gives up / con uses the witness.
    #[arg(long, default_value_t = 100)]
    pub max_rejections: usize,

    /// Diffusion models: a proposal is also refused when some hole could no
    /// longer be filled within its masks (k masks hold at most k tokens);
    /// off by default, as in the paper.
    #[arg(long)]
    pub limit_holes: bool,

    /// After N rejections at one position, compute the position's
    /// allowed-token mask and sample from it (rejections then no longer end
    /// a decode or an infill); `0` (masks ahead): autoregressive infilling
    /// computes every position's mask while the model's forward pass for it
    /// runs (a second thread) and never proposes a refused token (diffusion
    /// models: as 1); `off`: rejection sampling only, as in the paper.
    /// Default: 0 for autoregressive models, 8 for diffusion models.
    #[arg(long, value_name = "N|off", value_parser = parse_mask_after)]
    pub mask_after: Option<MaskAfter>,

    /// Diffusion models: try a step's proposals one by one even where one
    /// check of them all committed decides them (the same tokens, more
    /// checks; for comparison).
    #[arg(long)]
    pub one_by_one: bool,

    /// Answer every proposal by a fresh check, as in the paper: no
    /// proposals together, no insertion-point answers, no replayed hole
    /// exits (the same tokens; for comparison).
    #[arg(long)]
    pub fresh_checks: bool,

    /// Diffusion models on a GPU: start the next forward pass on the
    /// guessed canvas (the step's first proposals committed) while the
    /// step's checks run, instead of after them (the same tokens; off by
    /// default, see the README).
    #[arg(long)]
    pub overlap: bool,

    /// Diffusion models on the DLM tasks: decode exactly as the authors'
    /// code where cdiff's rules differ (as `decode --reference-compat`); the
    /// MRI tasks (infilling regions) refuse it.
    #[arg(long)]
    pub reference_compat: bool,

    /// Diffusion models: mask tokens per region.
    #[arg(long, default_value_t = 32)]
    pub hole_tokens: usize,

    /// Diffusion models: denoising steps (default: as for infill and
    /// decode, half the masks for a shipped model).
    #[arg(long)]
    pub steps: Option<usize>,

    /// Weights' dtype: f32, bf16 or f16.
    #[arg(long, default_value = "f32")]
    pub dtype: String,

    /// Where the model runs: auto, cpu, cuda[:N], metal[:N] (as for decode).
    #[arg(long, default_value = "auto", value_name = "DEVICE")]
    pub device: String,

    /// Compile and run the programs (functional correctness, and g++'s
    /// syntax check).
    #[arg(long, value_enum, default_value = "auto")]
    pub functional: FunctionalArg,

    /// Seconds a compilation may take.
    #[arg(long, value_name = "S", default_value_t = 10.0)]
    pub compile_timeout: f64,

    /// Seconds a test program may run.
    #[arg(long, value_name = "S", default_value_t = 5.0)]
    pub run_timeout: f64,

    /// Workers: instances run in parallel, each worker with its own copy of
    /// the model (CPU only). Records are the same as with one worker; their
    /// times are measured while the workers share the cores.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,

    /// No progress on stderr (a bar on a terminal, else a line per record).
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// Arguments of `cdiff eval merge`.
#[cfg(feature = "models")]
#[derive(Debug, Args)]
pub struct EvalMergeArgs {
    /// Result files (shards); for a key in several, the first file wins.
    #[arg(value_name = "SHARDS", required = true)]
    pub shards: Vec<PathBuf>,

    /// The merged file (overwritten).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// Arguments of `cdiff eval report`.
#[cfg(feature = "models")]
#[derive(Debug, Args)]
pub struct EvalReportArgs {
    /// Result files.
    #[arg(value_name = "RESULTS.jsonl", required = true)]
    pub results: Vec<PathBuf>,

    /// Also list the instances whose program failed, with why.
    #[arg(long)]
    pub failures: bool,

    /// Also write SVG plots into this folder: syntax and functional rates
    /// per model and mode, and the constraint's overhead by number of
    /// regions (MRI).
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
}

/// Most spans one case may cut.
pub const MAX_HOLES: usize = 64;

/// Parses `N` or `LO..HI` (also `LO..=HI`), 1 ≤ LO ≤ HI ≤ [`MAX_HOLES`].
/// [`SamplerArgs::mask_after`]: a count, or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MaskAfter(pub Option<usize>);

/// `N` (a count, 0 for masks ahead) or `off`.
fn parse_mask_after(s: &str) -> Result<MaskAfter, String> {
    match s.trim() {
        "off" => Ok(MaskAfter(None)),
        t => match t.parse::<usize>() {
            Ok(n) => Ok(MaskAfter(Some(n))),
            _ => Err(format!("expected a count or `off`, not `{t}`")),
        },
    }
}

/// A multiple, or `max` for no limit.
fn parse_effort(s: &str) -> Result<u64, String> {
    match s.trim() {
        "max" => Ok(u64::MAX),
        t => t
            .parse::<u64>()
            .map_err(|_| format!("`{s}` is not a whole number or `max`")),
    }
}

/// A number from 0 to 1.
fn parse_fraction(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!("`{s}` is not a number from 0 to 1")),
    }
}

fn parse_holes(s: &str) -> Result<(usize, usize), String> {
    let num = |t: &str| {
        t.trim()
            .parse::<usize>()
            .map_err(|_| format!("`{t}` is not a number (expected N or LO..HI)"))
    };
    let (lo, hi) = match s.split_once("..") {
        Some((a, b)) => (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?),
        None => {
            let n = num(s)?;
            (n, n)
        }
    };
    if lo == 0 || lo > hi || hi > MAX_HOLES {
        return Err(format!("need 1 <= LO <= HI <= {MAX_HOLES}, got {lo}..{hi}"));
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn holes() {
        assert_eq!(parse_holes("1..3"), Ok((1, 3)));
        assert_eq!(parse_holes("2..=2"), Ok((2, 2)));
        assert_eq!(parse_holes("4"), Ok((4, 4)));
        assert!(parse_holes("0..2").is_err());
        assert!(parse_holes("3..1").is_err());
        assert!(parse_holes("x").is_err());
        assert!(parse_holes("1..").is_err());
    }
}

/// Limits of one check, for `check` and `bench`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Work budget of one check (default: the library's, 200,000,000).
    #[arg(long, value_name = "UNITS")]
    pub budget: Option<u64>,

    /// Longest witness built, in terminals (default 10,000,000). Longer
    /// ones are still decided ("completable"), only not written out.
    #[arg(long, value_name = "N")]
    pub max_witness_terminals: Option<u32>,

    /// Longest witness text built, in bytes (default 67,108,864).
    #[arg(long, value_name = "BYTES")]
    pub max_witness_bytes: Option<usize>,

    /// Take the first witness the search meets instead of trying for the
    /// one with the fewest terminals.
    #[arg(long, conflicts_with = "witness_effort")]
    pub first_witness: bool,

    /// Let the witness swallow text: take the one with the fewest
    /// terminals even when a fill opens a comment or string that turns the
    /// text after it into that lexeme (by default the witness has the
    /// fewest terminals plus swallowed bytes).
    #[arg(long)]
    pub witness_may_swallow: bool,

    /// How much more work than finding a first witness the search may spend
    /// to prove a witness shortest, as a multiple (default 2, and 0 for
    /// partial outputs with more than 8 holes, where the proof is out of
    /// reach; `max`: no limit; given, it applies to both). The output says
    /// whether the witness is the shortest.
    #[arg(long, value_name = "N|max", value_parser = parse_effort)]
    pub witness_effort: Option<u64>,

    /// Memory one check may add (e.g. 512M, 4G; default 4G; 0: no limit).
    /// Past it the check stops with an error instead of exhausting memory.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<usize>,
}

/// A size in bytes: a number with an optional K, M or G suffix (powers of
/// 1024).
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m: usize = match c.to_ascii_uppercase() {
                'K' => 1 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("unknown size suffix in {s:?} (K, M or G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    num.trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a size (e.g. 512M, 4G)"))
}
