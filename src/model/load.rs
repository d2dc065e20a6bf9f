//! Loading a model directory (Hugging Face layout) or a known alias from the
//! local Hugging Face cache, offline.
//!
//! A model directory holds `config.json`, the weights (`model.safetensors`,
//! or shards listed by `model.safetensors.index.json`), the tokenizer
//! (`tokenizer.json`, or the slow files `vocab.json` + `merges.txt`; see
//! [`Tokenizer::from_dir`]) and optionally `tokenizer_config.json` (chat
//! template, special tokens).
//!
//! Model files are untrusted input: weight files must lie inside the
//! directory, their safetensors headers are checked (float dtypes only,
//! offsets inside the file) and every tensor's name and shape is compared
//! with the config before any weight is read.

use std::collections::HashMap;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use serde_json::Value;

use super::tokenizer::{ChatFormat, Tokenizer};
use super::{dream, llada, Denoiser, SpecialTokens, TextCodec};
use crate::error::{Error, ErrorKind, Result};

/// A model error saying what was being done.
/// A model error from a lower layer's error (candle, safetensors, I/O), on
/// one line: candle appends a backtrace to its message when `RUST_BACKTRACE`
/// is set, and that is kept only then (as asked); otherwise only the first
/// line is, with inner line breaks folded.
pub(crate) fn model_err(context: &str, e: impl Display) -> Error {
    Error::new(
        ErrorKind::Model,
        format!("{context}: {}", one_line(&e.to_string(), wants_backtrace())),
    )
}

/// Whether `RUST_BACKTRACE` asks for backtraces.
fn wants_backtrace() -> bool {
    std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0")
}

/// The first non-blank line of `text`, or all of it with `keep_all`.
fn one_line(text: &str, keep_all: bool) -> String {
    if keep_all {
        return text.to_string();
    }
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

pub(crate) fn model_error(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Model, msg)
}

/// The supported architectures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// Dream (also Dream-Coder and DiffuCoder): Qwen2 body, shifted logits.
    Dream,
    /// LLaDA: LLaMA-style body, OLMo weight names.
    Llada,
}

impl FromStr for Arch {
    type Err = Error;

    /// `dream` or `llada` (any case).
    fn from_str(s: &str) -> Result<Arch> {
        match s.to_ascii_lowercase().as_str() {
            "dream" => Ok(Arch::Dream),
            "llada" => Ok(Arch::Llada),
            _ => Err(model_error(format!(
                "unknown architecture {s:?} (expected dream or llada)"
            ))),
        }
    }
}

/// Parses a `--dtype` value: `f32`, `bf16` or `f16`.
///
/// # Errors
/// [`ErrorKind::Model`] for anything else.
pub fn parse_dtype(s: &str) -> Result<DType> {
    match s.to_ascii_lowercase().as_str() {
        "f32" | "float32" => Ok(DType::F32),
        "bf16" | "bfloat16" => Ok(DType::BF16),
        "f16" | "float16" | "half" => Ok(DType::F16),
        _ => Err(model_error(format!(
            "unknown dtype {s:?} (expected f32, bf16 or f16)"
        ))),
    }
}

/// The architecture a parsed `config.json` describes, from `architectures`
/// (`DreamModel`, `LLaDAModelLM`) or else `model_type` (`Dream`, `llada`).
///
/// # Errors
/// [`ErrorKind::Model`] naming the unrecognized value.
pub fn detect_arch(config: &Value) -> Result<Arch> {
    let mut seen = Vec::new();
    let archs = config.get("architectures").and_then(Value::as_array);
    for a in archs.into_iter().flatten().filter_map(Value::as_str) {
        let l = a.to_ascii_lowercase();
        if l.starts_with("dream") {
            return Ok(Arch::Dream);
        }
        if l.starts_with("llada") {
            return Ok(Arch::Llada);
        }
        seen.push(format!("architectures {a:?}"));
    }
    if let Some(t) = config.get("model_type").and_then(Value::as_str) {
        match t.to_ascii_lowercase().as_str() {
            "dream" => return Ok(Arch::Dream),
            "llada" => return Ok(Arch::Llada),
            _ => seen.push(format!("model_type {t:?}")),
        }
    }
    if seen.is_empty() {
        seen.push("no architectures or model_type".to_string());
    }
    Err(model_error(format!(
        "config.json: unsupported architecture ({}); supported: Dream (DreamModel), LLaDA (LLaDAModelLM)",
        seen.join(", ")
    )))
}

/// Either supported model, as one [`Denoiser`].
pub enum AnyModel {
    /// A Dream model.
    Dream(dream::Model),
    /// A LLaDA model.
    Llada(llada::Model),
}

impl AnyModel {
    /// The architecture.
    pub fn arch(&self) -> Arch {
        match self {
            AnyModel::Dream(_) => Arch::Dream,
            AnyModel::Llada(_) => Arch::Llada,
        }
    }
}

impl Denoiser for AnyModel {
    fn vocab_size(&self) -> usize {
        match self {
            AnyModel::Dream(m) => m.vocab_size(),
            AnyModel::Llada(m) => m.vocab_size(),
        }
    }

    fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        match self {
            AnyModel::Dream(m) => m.forward(tokens),
            AnyModel::Llada(m) => m.forward(tokens),
        }
    }

    fn forward_native(&mut self, tokens: &[u32]) -> Result<Tensor> {
        match self {
            AnyModel::Dream(m) => m.forward_native(tokens),
            AnyModel::Llada(m) => m.forward_native(tokens),
        }
    }
}

/// A loaded model with everything generation needs.
pub struct LoadedModel {
    /// The denoiser.
    pub model: AnyModel,
    /// Its tokenizer.
    pub tokenizer: Tokenizer,
    /// Mask, end-of-sequence and padding ids, and the number of real tokens.
    pub special: SpecialTokens,
    /// The Jinja `chat_template` of `tokenizer_config.json`, when present.
    pub chat_template: Option<String>,
    /// The chat format to render prompts with ([`ChatFormat::render`]).
    pub chat_format: ChatFormat,
    /// The directory the files were read from.
    pub dir: PathBuf,
}

impl LoadedModel {
    /// Renders a single user `prompt` in the model's chat format and encodes it.
    ///
    /// # Errors
    /// A tokenizer error.
    pub fn chat_prompt_ids(&self, prompt: &str) -> Result<Vec<u32>> {
        let msgs = [super::tokenizer::ChatMessage::new("user", prompt)];
        let text = self.chat_format.render(&msgs, true);
        self.tokenizer.encode(text.as_bytes())
    }
}

/// Known aliases and their Hugging Face repositories.
pub const ALIASES: &[(&str, &str)] = &[
    ("dream-7b", "Dream-org/Dream-v0-Instruct-7B"),
    ("dream-coder-7b", "Dream-org/Dream-Coder-v0-Instruct-7B"),
    ("diffucoder-7b", "apple/DiffuCoder-7B-Instruct"),
    ("llada-8b", "GSAI-ML/LLaDA-8B-Instruct"),
];

/// The Hugging Face hub cache folders searched, in order: `$HF_HUB_CACHE`,
/// `$HF_HOME/hub`, `~/.cache/huggingface/hub`.
fn hub_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("HF_HUB_CACHE") {
        dirs.push(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("HF_HOME") {
        dirs.push(PathBuf::from(d).join("hub"));
    }
    if let Some(h) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(h).join(".cache/huggingface/hub"));
    }
    dirs
}

/// The snapshot of `repo` (`ORG/NAME`) in a hub cache folder: the one
/// `refs/main` names, else the last (sorted) snapshot holding `config.json`.
fn find_snapshot(hub: &Path, repo: &str) -> Option<PathBuf> {
    let base = hub.join(format!("models--{}", repo.replace('/', "--")));
    if let Ok(r) = std::fs::read_to_string(base.join("refs/main")) {
        let snap = base.join("snapshots").join(r.trim());
        if snap.join("config.json").is_file() {
            return Some(snap);
        }
    }
    let mut snaps: Vec<PathBuf> = std::fs::read_dir(base.join("snapshots"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("config.json").is_file())
        .collect();
    snaps.sort();
    snaps.pop()
}

/// Resolves a model directory, the name of a shipped model (see
/// [`super::SHIPPED`]) or an alias (see [`ALIASES`]; `ORG/NAME` repository
/// names work too) to a local directory, offline.
///
/// # Errors
/// [`ErrorKind::Model`] saying where it looked and how to get the files.
pub fn resolve(dir_or_alias: &str) -> Result<PathBuf> {
    let p = Path::new(dir_or_alias);
    if p.is_dir() {
        return Ok(p.to_path_buf());
    }
    if let Some(s) = super::Shipped::by_name(dir_or_alias) {
        return Ok(PathBuf::from(s.dir));
    }
    let repo = ALIASES
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(dir_or_alias))
        .map(|(_, r)| r.to_string())
        .or_else(|| {
            let parts: Vec<&str> = dir_or_alias.split('/').collect();
            (parts.len() == 2 && parts.iter().all(|s| !s.is_empty()))
                .then(|| dir_or_alias.to_string())
        });
    let Some(repo) = repo else {
        let names: Vec<&str> = super::SHIPPED
            .iter()
            .map(|s| s.name)
            .chain(ALIASES.iter().map(|(a, _)| *a))
            .collect();
        return Err(model_error(format!(
            "model {dir_or_alias:?} is neither a directory nor a known alias ({})",
            names.join(", ")
        )));
    };
    let hubs = hub_dirs();
    for hub in &hubs {
        if let Some(s) = find_snapshot(hub, &repo) {
            return Ok(s);
        }
    }
    let looked: Vec<String> = hubs
        .iter()
        .map(|h| {
            h.join(format!("models--{}", repo.replace('/', "--")))
                .join("snapshots")
                .display()
                .to_string()
        })
        .collect();
    Err(model_error(format!(
        "model {dir_or_alias:?} ({repo}) is not in the local Hugging Face cache (looked in: {}); \
         download it with `huggingface-cli download {repo}` (or pass a model directory)",
        if looked.is_empty() {
            "no cache folder: HF_HUB_CACHE, HF_HOME and HOME are unset".to_string()
        } else {
            looked.join(", ")
        }
    )))
}

pub(crate) fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| model_err(&format!("cannot read {}", path.display()), e))?;
    serde_json::from_str(&text)
        .map_err(|e| model_err(&format!("bad JSON in {}", path.display()), e))
}

/// The safetensors files of a model directory: the shards named by
/// `model.safetensors.index.json`, else `model.safetensors`, else every
/// `*.safetensors` file. Model files are untrusted input, so every file must
/// lie inside the model directory (an index entry that is absolute, has a
/// `..` component or resolves through a symlink to somewhere else is
/// refused; in a Hugging Face cache snapshot, symlinks into the repository's
/// `blobs` folder are what the cache is made of and are followed), and its
/// safetensors header is checked ([`tensor_index`]: well-formed, offsets in
/// the file, only F32, F16 and BF16 tensors).
///
/// # Errors
/// [`ErrorKind::Model`], one line naming the file: bad index, missing
/// shard, a path outside the directory, a bad header or dtype, no weights.
pub fn weight_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let files = weight_paths(dir)?;
    tensor_index(&files)?;
    Ok(files)
}

/// [`weight_files`] without the header checks.
fn weight_paths(dir: &Path) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    if index.is_file() {
        let v = read_json(&index)?;
        let map = v
            .get("weight_map")
            .and_then(Value::as_object)
            .ok_or_else(|| model_error(format!("{}: no \"weight_map\" object", index.display())))?;
        let mut files: Vec<&str> = Vec::new();
        for (tensor, f) in map {
            files.push(f.as_str().ok_or_else(|| {
                model_error(format!(
                    "{}: weight_map entry {tensor:?} is not a file name",
                    index.display()
                ))
            })?);
        }
        files.sort_unstable();
        files.dedup();
        if files.is_empty() {
            return Err(model_error(format!(
                "{}: empty weight_map",
                index.display()
            )));
        }
        let mut out = Vec::new();
        for f in files {
            let relative = Path::new(f);
            let plain = !f.is_empty()
                && relative
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !plain {
                return Err(model_error(format!(
                    "{}: weight_map names {f:?}, which is not a file inside the model directory \
                     (absolute paths and .. are refused)",
                    index.display()
                )));
            }
            let p = dir.join(relative);
            if !p.is_file() {
                return Err(model_error(format!(
                    "shard {} named by {} is missing",
                    p.display(),
                    index.display()
                )));
            }
            check_inside(dir, &p, &format!("{} names {f:?}, which", index.display()))?;
            out.push(p);
        }
        return Ok(out);
    }
    let single = dir.join("model.safetensors");
    if single.is_file() {
        check_inside(dir, &single, &single.display().to_string())?;
        return Ok(vec![single]);
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| model_err(&format!("cannot list {}", dir.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(model_error(format!(
            "no weights in {} (model.safetensors, or shards with model.safetensors.index.json)",
            dir.display()
        )));
    }
    for p in &out {
        check_inside(dir, p, &p.display().to_string())?;
    }
    Ok(out)
}

/// Checks that `file` (a path under `dir`) resolves to a file inside `dir`,
/// or, when `dir` is a Hugging Face cache snapshot
/// (`models--ORG--NAME/snapshots/REV`), inside that repository's `blobs`.
/// `what` starts the message ("X is a symlink to ...").
fn check_inside(dir: &Path, file: &Path, what: &str) -> Result<()> {
    let canon = |p: &Path| {
        p.canonicalize()
            .map_err(|e| model_err(&format!("cannot resolve {}", p.display()), e))
    };
    let root = canon(dir)?;
    let target = canon(file)?;
    if target.starts_with(&root) {
        return Ok(());
    }
    let blobs = root.parent().and_then(|snapshots| {
        let repo = snapshots.parent()?;
        let is_snapshot = snapshots.file_name()? == "snapshots"
            && repo.file_name()?.to_str()?.starts_with("models--");
        is_snapshot.then(|| repo.join("blobs"))
    });
    if blobs.is_some_and(|b| target.starts_with(b)) {
        return Ok(());
    }
    Err(model_error(format!(
        "{what} resolves to {}, outside the model directory {} (weights must lie inside it)",
        target.display(),
        root.display()
    )))
}

/// A tensor as a safetensors header describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorEntry {
    /// The file holding it.
    pub file: PathBuf,
    /// Its dtype as the header spells it (`F32`, `BF16`, ...).
    pub dtype: String,
    /// Its shape.
    pub shape: Vec<usize>,
}

/// Largest safetensors header read (the format's own limit is 100 MB).
const MAX_HEADER: u64 = 100_000_000;

/// The dtypes cdiff reads weights in.
const FLOAT_DTYPES: &[&str] = &["F32", "F16", "BF16"];

/// Reads the header of one safetensors file and checks it: a JSON object of
/// tensors with a float dtype (F32, F16, BF16), a shape and data offsets that
/// lie in the file and match the shape's byte size, without overlaps.
///
/// # Errors
/// [`ErrorKind::Model`], one line naming the file and tensor.
pub fn safetensors_header(path: &Path) -> Result<Vec<(String, TensorEntry)>> {
    use std::io::Read;
    let bad =
        |what: String| model_error(format!("bad safetensors file {}: {what}", path.display()));
    let mut f = std::fs::File::open(path)
        .map_err(|e| model_err(&format!("cannot open {}", path.display()), e))?;
    let len = f
        .metadata()
        .map_err(|e| model_err(&format!("cannot read {}", path.display()), e))?
        .len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n)
        .map_err(|_| bad("shorter than its 8-byte header length".to_string()))?;
    let n = u64::from_le_bytes(n);
    if n > MAX_HEADER || n > len - 8 {
        return Err(bad(format!(
            "header length {n} exceeds the file ({len} bytes) or the 100 MB limit"
        )));
    }
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header)
        .map_err(|e| bad(format!("cannot read the header: {e}")))?;
    let v: Value =
        serde_json::from_slice(&header).map_err(|e| bad(format!("the header is not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| bad("the header is not a JSON object".to_string()))?;
    let data_len = len - 8 - n;
    let mut out = Vec::new();
    let mut spans = Vec::new();
    for (name, t) in obj {
        if name == "__metadata__" {
            continue;
        }
        let dtype = t
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("tensor {name} has no dtype")))?;
        if !FLOAT_DTYPES.contains(&dtype) {
            return Err(model_error(format!(
                "tensor {name} in {} has dtype {dtype}; only F32, F16 and BF16 weights are accepted",
                path.display()
            )));
        }
        let shape: Vec<usize> = t
            .get("shape")
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .map(|d| d.as_u64().and_then(|d| usize::try_from(d).ok()))
                    .collect()
            })
            .ok_or_else(|| bad(format!("tensor {name} has no valid shape")))?;
        let offsets: Vec<u64> = t
            .get("data_offsets")
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_u64).collect())
            .ok_or_else(|| bad(format!("tensor {name} has no valid data_offsets")))?;
        let elt = if dtype == "F32" { 4u64 } else { 2 };
        let bytes = shape
            .iter()
            .try_fold(elt, |acc, &d| acc.checked_mul(d as u64));
        let ok = offsets.len() == 2
            && offsets[0] <= offsets[1]
            && offsets[1] <= data_len
            && bytes == Some(offsets[1] - offsets[0]);
        if !ok {
            return Err(bad(format!(
                "tensor {name} ({dtype} {shape:?}) has data_offsets {offsets:?} that do not fit its \
                 size or the file's {data_len} data bytes"
            )));
        }
        spans.push((offsets[0], offsets[1], name.clone()));
        out.push((
            name.clone(),
            TensorEntry {
                file: path.to_path_buf(),
                dtype: dtype.to_string(),
                shape,
            },
        ));
    }
    spans.sort();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(bad(format!("tensors {} and {} overlap", w[0].2, w[1].2)));
        }
    }
    Ok(out)
}

/// Every tensor of the weight files, by name, from their headers (see
/// [`safetensors_header`]).
///
/// # Errors
/// [`ErrorKind::Model`]: a bad header, a non-float dtype, or a tensor in two
/// files.
pub fn tensor_index(files: &[PathBuf]) -> Result<HashMap<String, TensorEntry>> {
    let mut all: HashMap<String, TensorEntry> = HashMap::new();
    for f in files {
        for (name, e) in safetensors_header(f)? {
            if let Some(prev) = all.get(&name) {
                return Err(model_error(format!(
                    "tensor {name} is in two weight files, {} and {}",
                    prev.file.display(),
                    f.display()
                )));
            }
            all.insert(name, e);
        }
    }
    Ok(all)
}

/// Checks that every tensor `expected` names is in `index` with its shape.
/// `hint` says which config fields a tensor's shape comes from.
///
/// # Errors
/// [`ErrorKind::Model`] naming the first missing or misshapen tensor.
pub fn check_tensors(
    index: &HashMap<String, TensorEntry>,
    expected: &[(String, Vec<usize>)],
    config: &Path,
    hint: impl Fn(&str) -> &'static str,
) -> Result<()> {
    for (name, shape) in expected {
        let Some(e) = index.get(name) else {
            return Err(model_error(format!(
                "tensor {name} is missing from the weights (config {} needs it)",
                config.display()
            )));
        };
        if &e.shape != shape {
            return Err(model_error(format!(
                "tensor {name} in {} has shape {:?} but config {} needs {shape:?}{}",
                e.file.display(),
                e.shape,
                config.display(),
                hint(name)
            )));
        }
    }
    Ok(())
}

/// A token id from a config value: a number, or the first of a list.
pub(crate) fn id_of(v: Option<&Value>) -> Option<u32> {
    match v? {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::Array(a) => id_of(a.first()),
        _ => None,
    }
}

/// A token's string in `tokenizer_config.json`: a string or `{"content": ...}`.
pub(crate) fn token_str(v: Option<&Value>) -> Option<&str> {
    match v? {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content").and_then(Value::as_str),
        _ => None,
    }
}

/// Loads a model directory or alias (see [`resolve`]) on `device` in `dtype`.
///
/// # Errors
/// [`ErrorKind::Model`]: files not found, bad or unsupported config, missing
/// tensors, a tokenizer with more tokens than the embedding has rows, or
/// special ids out of range.
pub fn load(dir_or_alias: &str, device: &Device, dtype: DType) -> Result<LoadedModel> {
    let dir = resolve(dir_or_alias)?;
    let cfg_path = dir.join("config.json");
    if !cfg_path.is_file() {
        return Err(model_error(format!("{} not found", cfg_path.display())));
    }
    let cfg = read_json(&cfg_path)?;
    let arch = detect_arch(&cfg)?;
    let tokenizer = Tokenizer::from_dir(&dir)?;
    let tok_cfg_path = dir.join("tokenizer_config.json");
    let tok_cfg = if tok_cfg_path.is_file() {
        read_json(&tok_cfg_path)?
    } else {
        Value::Null
    };
    let bad_cfg =
        |e: serde_json::Error| model_err(&format!("bad config {}", cfg_path.display()), e);
    let (rows, rows_field) = match arch {
        Arch::Dream => {
            let c: dream::Config = serde_json::from_value(cfg.clone()).map_err(bad_cfg)?;
            c.validate()?;
            (c.vocab_size, "vocab_size")
        }
        Arch::Llada => {
            let c: llada::Config = serde_json::from_value(cfg.clone()).map_err(bad_cfg)?;
            c.validate()?;
            let field = if c.embedding_size.is_some() {
                "embedding_size"
            } else {
                "vocab_size"
            };
            (c.embedding_rows(), field)
        }
    };
    let n_tokens = tokenizer.n_tokens();
    if n_tokens > rows {
        return Err(model_error(format!(
            "tokenizer {} has {n_tokens} tokens but config {} gives the embedding only {rows} rows \
             ({rows_field}); ids past the embedding could not be embedded",
            tokenizer.origin(),
            cfg_path.display()
        )));
    }
    let by_name = |key: &str| token_str(tok_cfg.get(key)).and_then(|s| tokenizer.token_id(s));
    let default_mask = match arch {
        Arch::Dream => "<|mask|>",
        Arch::Llada => "<|mdm_mask|>",
    };
    let mask = id_of(cfg.get("mask_token_id"))
        .or_else(|| by_name("mask_token"))
        .or_else(|| tokenizer.token_id(default_mask))
        .ok_or_else(|| model_error(format!("{}: no mask token id", dir.display())))?;
    let eos = id_of(cfg.get("eos_token_id"))
        .or_else(|| by_name("eos_token"))
        .ok_or_else(|| model_error(format!("{}: no eos token id", dir.display())))?;
    let pad = id_of(cfg.get("pad_token_id"))
        .or_else(|| by_name("pad_token"))
        .unwrap_or(eos);
    for (what, id) in [("mask", mask), ("eos", eos), ("pad", pad)] {
        if id as usize >= n_tokens {
            return Err(model_error(format!(
                "{what} token id {id} is past the tokenizer's {n_tokens} tokens"
            )));
        }
    }
    let chat_template = tok_cfg
        .get("chat_template")
        .and_then(Value::as_str)
        .map(str::to_string);
    let chat_format = chat_template
        .as_deref()
        .and_then(ChatFormat::detect)
        .unwrap_or(match arch {
            Arch::Dream => ChatFormat::ChatMl,
            Arch::Llada => ChatFormat::Llada,
        });
    let files = weight_paths(&dir)?;
    // Headers first: dtypes, shapes and names are checked against the config
    // before any tensor is read.
    let index = tensor_index(&files)?;
    let expected = super::init::tensor_shapes(arch, &cfg)?;
    let hint = |name: &str| -> &'static str {
        match arch {
            Arch::Dream if name.contains("embed_tokens") || name.starts_with("lm_head") => {
                " (rows: vocab_size, columns: hidden_size)"
            }
            Arch::Llada
                if name.ends_with("wte.weight") || name.ends_with("transformer.ff_out.weight") =>
            {
                " (rows: embedding_size, else vocab_size; columns: d_model)"
            }
            _ => "",
        }
    };
    check_tensors(&index, &expected, &cfg_path, hint)?;
    // SAFETY: the files are memory-mapped read-only; they must not be
    // modified while the model is loaded (as with every mmap-based loader).
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&files, dtype, device) }
        .map_err(|e| model_err(&format!("cannot map weights in {}", dir.display()), e))?;
    let model = match arch {
        Arch::Dream => {
            let c: dream::Config = serde_json::from_value(cfg).map_err(bad_cfg)?;
            AnyModel::Dream(dream::Model::new(&c, vb)?)
        }
        Arch::Llada => {
            let c: llada::Config = serde_json::from_value(cfg).map_err(bad_cfg)?;
            AnyModel::Llada(llada::Model::new(&c, vb)?)
        }
    };
    Ok(LoadedModel {
        model,
        tokenizer,
        special: SpecialTokens {
            mask,
            eos,
            pad,
            n_tokens,
        },
        chat_template,
        chat_format,
        dir,
    })
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn candle_backtraces_are_cut_unless_asked_for() {
        let with_trace = "cannot find tensor lm_head.weight\n   0: candle_core::error::Error::bt\n";
        assert_eq!(
            one_line(with_trace, false),
            "cannot find tensor lm_head.weight"
        );
        assert_eq!(one_line(with_trace, true), with_trace);
        assert_eq!(one_line("\n  first\nsecond", false), "first");
    }
}
