//! Tokenizers of the supported models as a [`TextCodec`], and the chat
//! formats the models were trained with.
//!
//! # Tokenizer files
//! [`Tokenizer::from_dir`] reads a model directory the way its download lays
//! it out: `tokenizer.json` (the `tokenizers` crate's format) when present,
//! else the "slow" files of a Qwen2-style byte-level BPE (`vocab.json`,
//! `merges.txt`, and the added tokens of `tokenizer_config.json`'s
//! `added_tokens_decoder` or `added_tokens.json`), which is all that
//! `Dream-org/Dream-v0-Instruct-7B` ships. The slow files are assembled into
//! the same pipeline Qwen2's `tokenizer.json` describes (see
//! [`Tokenizer::from_slow_files`]).
//!
//! # Token bytes
//! The models use byte-level BPE: a token's string is written in GPT-2's
//! byte-to-unicode alphabet (each of the 256 bytes is one printable
//! character). [`Tokenizer`] maps every token back to its raw bytes once, at
//! load time. Tokens outside that alphabet fall back to `<0xHH>` byte tokens
//! or to their UTF-8 text (with SentencePiece's `▁` read as a space).
//! Special added tokens stand for no text (empty); non-special added tokens
//! (e.g. Qwen's `<tool_call>`) stand for their content, as when decoding.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Merges, Vocab, BPE};
use tokenizers::normalizers::{NormalizerWrapper, NFC};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, DecoderWrapper, SplitDelimiterBehavior};

use super::TextCodec;
use crate::error::{Error, ErrorKind, Result};
use crate::mask::Vocabulary;

/// GPT-2's byte-to-unicode table: the printable character standing for each
/// byte in byte-level BPE vocabularies.
///
/// Bytes `!..=~`, `¡..=¬` and `®..=ÿ` stand for themselves; the 68 others
/// take the code points 256, 257, ... in increasing byte order.
pub fn byte_to_char() -> [char; 256] {
    let keeps = |b: u32| {
        (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b)
    };
    let mut table = ['\0'; 256];
    let mut next = 256u32;
    for (b, slot) in table.iter_mut().enumerate() {
        let b = b as u32;
        let code = if keeps(b) {
            b
        } else {
            next += 1;
            next - 1
        };
        *slot = char::from_u32(code).unwrap_or('\0');
    }
    table
}

/// The inverse of [`byte_to_char`].
fn char_to_byte() -> HashMap<char, u8> {
    byte_to_char()
        .iter()
        .enumerate()
        .map(|(b, &c)| (c, b as u8))
        .collect()
}

/// Parses a `<0xHH>` byte-fallback token.
fn byte_fallback(tok: &str) -> Option<u8> {
    let hex = tok.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() == 2 {
        u8::from_str_radix(hex, 16).ok()
    } else {
        None
    }
}

/// The split regex of Qwen2's pre-tokenizer (`Qwen2Tokenizer.pat_str` and
/// the `Split` of its `tokenizer.json`).
pub const QWEN2_SPLIT_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The `tokenizer_class` values whose slow files [`Tokenizer::from_slow_files`]
/// builds (Qwen2's byte-level BPE; Dream, Dream-Coder and DiffuCoder name
/// `DreamTokenizer` or `Qwen2Tokenizer`).
pub const SLOW_CLASSES: &[&str] = &[
    "Qwen2Tokenizer",
    "Qwen2TokenizerFast",
    "DreamTokenizer",
    "DreamTokenizerFast",
];

/// The keys of `tokenizer_config.json` / `special_tokens_map.json` that name
/// special tokens (transformers' `SPECIAL_TOKENS_ATTRIBUTES`).
const SPECIAL_KEYS: &[&str] = &[
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
];

/// A model error about tokenizer files, on one line.
fn tok_err(msg: impl Into<String>) -> Error {
    let msg: String = msg.into();
    Error::new(ErrorKind::Model, msg.replace(['\n', '\r'], " "))
}

/// A Hugging Face tokenizer with the raw bytes of every token precomputed.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bytes: Vec<Vec<u8>>,
    /// The longest entry of `bytes`.
    max_bytes: usize,
    origin: String,
    /// The trie of the first `n` ids, once asked for (see
    /// [`TextCodec::vocabulary`]).
    vocab: Mutex<Option<(usize, Arc<Vocabulary>)>>,
}

impl Tokenizer {
    /// Loads the tokenizer of a model directory: `tokenizer.json` when it is
    /// there, else the slow files ([`Tokenizer::from_slow_files`]). A
    /// directory with both uses `tokenizer.json` (Hugging Face repositories
    /// often ship both; they are not compared).
    ///
    /// # Errors
    /// [`ErrorKind::Model`], one line: neither form present (naming the
    /// files looked for), only one of `vocab.json` / `merges.txt`, or a
    /// malformed file.
    pub fn from_dir(dir: &Path) -> Result<Tokenizer> {
        let json = dir.join("tokenizer.json");
        if json.is_file() {
            return Tokenizer::from_file(&json);
        }
        let vocab = dir.join("vocab.json").is_file();
        let merges = dir.join("merges.txt").is_file();
        match (vocab, merges) {
            (true, true) => Tokenizer::from_slow_files(dir),
            (true, false) | (false, true) => Err(tok_err(format!(
                "no tokenizer in {}: it has {} but not {} (and no tokenizer.json)",
                dir.display(),
                if vocab { "vocab.json" } else { "merges.txt" },
                if vocab { "merges.txt" } else { "vocab.json" },
            ))),
            (false, false) => {
                let sp = if dir.join("tokenizer.model").is_file() {
                    " (its tokenizer.model, a SentencePiece model, is not supported)"
                } else {
                    ""
                };
                Err(tok_err(format!(
                    "no tokenizer in {}: looked for tokenizer.json, or vocab.json + merges.txt \
                     (byte-level BPE with tokenizer_config.json / added_tokens.json){sp}",
                    dir.display()
                )))
            }
        }
    }

    /// Loads a `tokenizer.json`.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the file is missing or malformed.
    pub fn from_file(path: &Path) -> Result<Tokenizer> {
        let inner = tokenizers::Tokenizer::from_file(path)
            .map_err(|e| tok_err(format!("cannot load tokenizer {}: {e}", path.display())))?;
        let mut t = Tokenizer::new(inner);
        t.origin = path.display().to_string();
        Ok(t)
    }

    /// Builds the byte-level BPE of a directory holding the slow tokenizer
    /// files of a Qwen2-style model (what `Dream-org/Dream-v0-Instruct-7B`
    /// ships instead of `tokenizer.json`), as Qwen2's `tokenizer.json`
    /// describes it:
    ///
    /// - model: BPE from `vocab.json` (token → id) and `merges.txt` (one
    ///   `A B` pair per line, a `#version` first line skipped), no byte
    ///   fallback, no unknown token;
    /// - normalizer: NFC;
    /// - pre-tokenizer: a `Split` on [`QWEN2_SPLIT_REGEX`] (behaviour
    ///   `Isolated`), then `ByteLevel` without prefix space or regex;
    /// - decoder: `ByteLevel`;
    /// - added tokens: `tokenizer_config.json`'s `added_tokens_decoder`
    ///   (ids, `special`, `lstrip`, `rstrip`, `normalized`, `single_word`),
    ///   or, when it has none, `added_tokens.json` (ids), special when
    ///   named by `special_tokens_map.json` or `tokenizer_config.json`
    ///   (transformers' legacy rule); special tokens these files name but
    ///   no file gives an id to are appended after the last id. Every added
    ///   token keeps the id the files give it.
    ///
    /// `tokenizer_config.json` may name its class: only [`SLOW_CLASSES`] (or
    /// no class) are built this way.
    ///
    /// # Errors
    /// [`ErrorKind::Model`], one line naming the file: unreadable or
    /// malformed files, a merge of tokens not in the vocabulary, an id given
    /// to two tokens, an unsupported `tokenizer_class`.
    pub fn from_slow_files(dir: &Path) -> Result<Tokenizer> {
        let cfg = read_optional_json(&dir.join("tokenizer_config.json"))?;
        let class = cfg.get("tokenizer_class").and_then(Value::as_str);
        if let Some(c) = class {
            if !SLOW_CLASSES.contains(&c) {
                return Err(tok_err(format!(
                    "{}: tokenizer_class {c:?} without a tokenizer.json: cdiff builds only \
                     Qwen2-style byte-level BPE ({}) from vocab.json + merges.txt",
                    dir.display(),
                    SLOW_CLASSES.join(", ")
                )));
            }
        }
        let vocab = read_vocab(&dir.join("vocab.json"))?;
        let merges = read_merges(&dir.join("merges.txt"))?;
        let added = added_tokens(dir, &cfg, &vocab)?;
        let mut bpe_vocab = Vocab::default();
        bpe_vocab.reserve(vocab.len() + added.len());
        for (tok, &id) in &vocab {
            bpe_vocab.insert(tok.clone(), id);
        }
        // Added tokens enter the model's vocabulary with their ids, so that
        // `add_tokens` keeps those ids (it numbers new tokens consecutively
        // from the vocabulary's size, which a gap in the ids would shift).
        for (id, t) in &added {
            bpe_vocab.insert(t.content.clone(), *id);
        }
        let bpe = BPE::builder()
            .vocab_and_merges(bpe_vocab, merges)
            .build()
            .map_err(|e| {
                tok_err(format!(
                    "bad BPE in {} (vocab.json + merges.txt): {e}",
                    dir.display()
                ))
            })?;
        let split = Split::new(
            SplitPattern::Regex(QWEN2_SPLIT_REGEX.to_string()),
            SplitDelimiterBehavior::Isolated,
            false,
        )
        .map_err(|e| tok_err(format!("Qwen2 split regex: {e}")))?;
        let pre = Sequence::new(vec![
            PreTokenizerWrapper::Split(split),
            PreTokenizerWrapper::ByteLevel(ByteLevel::new(false, true, false)),
        ]);
        let mut inner = tokenizers::Tokenizer::new(bpe);
        inner
            .with_normalizer(Some(NormalizerWrapper::NFC(NFC)))
            .map_err(|e| tok_err(format!("tokenizer normalizer: {e}")))?;
        inner.with_pre_tokenizer(Some(PreTokenizerWrapper::Sequence(pre)));
        inner.with_decoder(Some(DecoderWrapper::ByteLevel(ByteLevelDecoder::new(
            true, true, true,
        ))));
        inner
            .add_tokens(added.into_iter().map(|(_, t)| t))
            .map_err(|e| tok_err(format!("added tokens of {}: {e}", dir.display())))?;
        let mut t = Tokenizer::new(inner);
        t.origin = format!("{} (vocab.json + merges.txt)", dir.display());
        Ok(t)
    }

    /// Wraps a loaded tokenizer, computing every token's bytes.
    pub fn new(inner: tokenizers::Tokenizer) -> Tokenizer {
        let vocab = inner.get_vocab(true);
        let n = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
        let added = inner.get_added_tokens_decoder();
        let inverse = char_to_byte();
        let mut bytes = vec![Vec::new(); n];
        for (tok, &id) in &vocab {
            let b = match added.get(&id) {
                Some(a) if a.special => Vec::new(),
                Some(a) => a.content.as_bytes().to_vec(),
                None => {
                    let mapped: Option<Vec<u8>> =
                        tok.chars().map(|c| inverse.get(&c).copied()).collect();
                    match mapped {
                        Some(m) => m,
                        None => match byte_fallback(tok) {
                            Some(b) => vec![b],
                            None => tok.replace('\u{2581}', " ").into_bytes(),
                        },
                    }
                }
            };
            bytes[id as usize] = b;
        }
        Tokenizer {
            inner,
            max_bytes: bytes.iter().map(Vec::len).max().unwrap_or(0),
            bytes,
            origin: "a tokenizer built in memory".to_string(),
            vocab: Mutex::default(),
        }
    }

    /// Where the tokenizer was read from (a `tokenizer.json` path, or a
    /// directory and its slow files), for messages.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Number of token ids (the largest id plus one, added tokens included).
    pub fn n_tokens(&self) -> usize {
        self.bytes.len()
    }

    /// The id of a token given by its string (e.g. `"<|mask|>"`).
    pub fn token_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}

impl TextCodec for Tokenizer {
    /// Token ids of `text`, no BOS/EOS added. Invalid UTF-8 is replaced by
    /// U+FFFD first (the `tokenizers` API takes strings). Added tokens written
    /// in the text (e.g. `<|im_start|>`) become their ids, which is what a
    /// rendered chat prompt needs.
    fn encode(&self, text: &[u8]) -> Result<Vec<u32>> {
        let text = String::from_utf8_lossy(text);
        let enc = self
            .inner
            .encode(text.as_ref(), false)
            .map_err(|e| Error::new(ErrorKind::Model, format!("tokenizer: {e}")))?;
        Ok(enc.get_ids().to_vec())
    }

    fn token_bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], |b| b.as_slice())
    }

    fn max_token_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Built once per `n` and kept (a different `n` replaces it).
    fn vocabulary(&self, n: usize) -> Arc<Vocabulary> {
        let mut kept = self.vocab.lock().unwrap_or_else(PoisonError::into_inner);
        match &*kept {
            Some((m, v)) if *m == n => v.clone(),
            _ => {
                let v = Arc::new(super::vocabulary_of(self, n));
                *kept = Some((n, v.clone()));
                v
            }
        }
    }
}

/// A JSON file that may be absent (`Value::Null` then).
fn read_optional_json(path: &Path) -> Result<Value> {
    if !path.is_file() {
        return Ok(Value::Null);
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| tok_err(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| tok_err(format!("bad JSON in {}: {e}", path.display())))
}

/// `vocab.json`: an object of token → id, ids distinct.
fn read_vocab(path: &Path) -> Result<HashMap<String, u32>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| tok_err(format!("cannot read {}: {e}", path.display())))?;
    let vocab: HashMap<String, u32> = serde_json::from_str(&text).map_err(|e| {
        tok_err(format!(
            "bad {} (expected an object of token -> id): {e}",
            path.display()
        ))
    })?;
    let mut by_id: HashMap<u32, &str> = HashMap::with_capacity(vocab.len());
    for (tok, &id) in &vocab {
        if let Some(other) = by_id.insert(id, tok) {
            let (a, b) = if other < tok.as_str() {
                (other, tok.as_str())
            } else {
                (tok.as_str(), other)
            };
            return Err(tok_err(format!(
                "{}: id {id} is given to both {a:?} and {b:?}",
                path.display()
            )));
        }
    }
    Ok(vocab)
}

/// `merges.txt`: one `A B` pair per line; a first line starting with
/// `#version` and blank lines are skipped (as transformers reads it).
fn read_merges(path: &Path) -> Result<Merges> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| tok_err(format!("cannot read {}: {e}", path.display())))?;
    let mut merges = Merges::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || (i == 0 && line.starts_with("#version")) {
            continue;
        }
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), None) => merges.push((a.to_string(), b.to_string())),
            _ => {
                return Err(tok_err(format!(
                    "{} line {}: expected two tokens separated by a space, found {line:?}",
                    path.display(),
                    i + 1
                )))
            }
        }
    }
    Ok(merges)
}

/// A special token's string in a tokenizer config: a string or
/// `{"content": ...}`.
fn token_content(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Object(o) => o.get("content").and_then(Value::as_str),
        _ => None,
    }
}

/// The special tokens a config object names (bos, eos, ..., and
/// `additional_special_tokens`), in order.
fn named_specials(cfg: &Value, out: &mut Vec<String>) {
    for key in SPECIAL_KEYS {
        if let Some(s) = cfg.get(*key).and_then(token_content) {
            out.push(s.to_string());
        }
    }
    if let Some(list) = cfg
        .get("additional_special_tokens")
        .and_then(Value::as_array)
    {
        out.extend(list.iter().filter_map(token_content).map(str::to_string));
    }
}

/// The added tokens of a slow tokenizer directory, by id (see
/// [`Tokenizer::from_slow_files`]).
fn added_tokens(
    dir: &Path,
    cfg: &Value,
    vocab: &HashMap<String, u32>,
) -> Result<Vec<(u32, AddedToken)>> {
    let cfg_path = dir.join("tokenizer_config.json");
    let map_path = dir.join("special_tokens_map.json");
    let list_path = dir.join("added_tokens.json");
    let mut specials = Vec::new();
    named_specials(cfg, &mut specials);
    named_specials(&read_optional_json(&map_path)?, &mut specials);
    let mut added: Vec<(u32, AddedToken)> = Vec::new();
    let source: PathBuf;
    if let Some(decoder) = cfg.get("added_tokens_decoder") {
        source = cfg_path.clone();
        let obj = decoder.as_object().ok_or_else(|| {
            tok_err(format!(
                "{}: added_tokens_decoder is not an object",
                cfg_path.display()
            ))
        })?;
        for (key, t) in obj {
            let bad = |what: &str| {
                tok_err(format!(
                    "{}: added_tokens_decoder entry {key:?}: {what}",
                    cfg_path.display()
                ))
            };
            let id: u32 = key.parse().map_err(|_| bad("the key is not a token id"))?;
            let content = t
                .get("content")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("no \"content\" string"))?;
            let flag =
                |name: &str, default: bool| t.get(name).and_then(Value::as_bool).unwrap_or(default);
            let special = flag("special", false);
            let token = AddedToken::from(content, special)
                .single_word(flag("single_word", false))
                .lstrip(flag("lstrip", false))
                .rstrip(flag("rstrip", false))
                .normalized(flag("normalized", !special));
            added.push((id, token));
        }
    } else if list_path.is_file() {
        source = list_path.clone();
        let text = std::fs::read_to_string(&list_path)
            .map_err(|e| tok_err(format!("cannot read {}: {e}", list_path.display())))?;
        let list: HashMap<String, u32> = serde_json::from_str(&text).map_err(|e| {
            tok_err(format!(
                "bad {} (expected an object of token -> id): {e}",
                list_path.display()
            ))
        })?;
        for (content, id) in list {
            let special = specials.contains(&content);
            added.push((id, AddedToken::from(content, special)));
        }
    } else {
        source = dir.to_path_buf();
    }
    added.sort_by_key(|(id, _)| *id);
    // An id given twice, or to another token of the vocabulary; a token
    // given two ids.
    let by_id: HashMap<u32, &str> = vocab.iter().map(|(t, &id)| (id, t.as_str())).collect();
    let mut seen: HashMap<&str, u32> = HashMap::new();
    for w in added.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(tok_err(format!(
                "{}: id {} is given to both {:?} and {:?}",
                source.display(),
                w[0].0,
                w[0].1.content,
                w[1].1.content
            )));
        }
    }
    for (id, t) in &added {
        if let Some(other) = by_id.get(id) {
            if *other != t.content {
                return Err(tok_err(format!(
                    "{}: added token {:?} has id {id}, which vocab.json gives to {other:?}",
                    source.display(),
                    t.content
                )));
            }
        }
        if let Some(&v) = vocab.get(&t.content) {
            if v != *id {
                return Err(tok_err(format!(
                    "{}: added token {:?} has id {id} but vocab.json gives it id {v}",
                    source.display(),
                    t.content
                )));
            }
        }
        if let Some(prev) = seen.insert(t.content.as_str(), *id) {
            return Err(tok_err(format!(
                "{}: token {:?} is given two ids, {prev} and {id}",
                source.display(),
                t.content
            )));
        }
    }
    // Special tokens named but given no id: appended (transformers adds them
    // to the vocabulary the same way).
    let mut next = vocab
        .values()
        .chain(added.iter().map(|(id, _)| id))
        .map(|&id| id + 1)
        .max()
        .unwrap_or(0);
    let mut extra = Vec::new();
    for s in specials {
        let known = vocab.contains_key(&s)
            || added.iter().any(|(_, t)| t.content == s)
            || extra
                .iter()
                .any(|(_, t): &(u32, AddedToken)| t.content == s);
        if !known && !s.is_empty() {
            extra.push((next, AddedToken::from(s, true)));
            next += 1;
        }
    }
    added.extend(extra);
    Ok(added)
}

/// A chat message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChatMessage {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl ChatMessage {
    /// A message of `role` saying `content`.
    pub fn new(role: &str, content: &str) -> ChatMessage {
        ChatMessage {
            role: role.to_string(),
            content: content.to_string(),
        }
    }
}

/// The chat formats of the supported models, rendered directly (no Jinja
/// engine): the output equals what the models' `chat_template`s produce for
/// plain text messages (no tools).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatFormat {
    /// Qwen2 ChatML (Dream, Dream-Coder, DiffuCoder):
    /// `<|im_start|>role\ncontent<|im_end|>\n` per message, a default system
    /// message (`You are a helpful assistant.`) when the first message is not
    /// a system message, then `<|im_start|>assistant\n`.
    ChatMl,
    /// LLaDA's LLaMA-3-style format: `<|startoftext|>` then, per message,
    /// `<|start_header_id|>role<|end_header_id|>\n\n` + trimmed content +
    /// `<|eot_id|>`, then `<|start_header_id|>assistant<|end_header_id|>\n\n`.
    Llada,
    /// No template: the contents of the messages, concatenated (small
    /// unconditional models such as cdiff's own `models/smiles-tiny`, whose
    /// `chat_template` is [`PLAIN_TEMPLATE`]).
    Plain,
}

/// The `chat_template` of models without a chat format: the messages'
/// contents, concatenated ([`ChatFormat::Plain`]).
pub const PLAIN_TEMPLATE: &str = "{% for m in messages %}{{ m['content'] }}{% endfor %}";

impl ChatFormat {
    /// Recognizes the format a Jinja `chat_template` string writes.
    pub fn detect(template: &str) -> Option<ChatFormat> {
        if template.contains("<|im_start|>") {
            Some(ChatFormat::ChatMl)
        } else if template.contains("<|start_header_id|>") {
            Some(ChatFormat::Llada)
        } else if template.trim() == PLAIN_TEMPLATE {
            Some(ChatFormat::Plain)
        } else {
            None
        }
    }

    /// Renders `messages`, followed by the assistant header when
    /// `add_generation_prompt` (LLaDA's template always adds it).
    pub fn render(&self, messages: &[ChatMessage], add_generation_prompt: bool) -> String {
        let mut out = String::new();
        match self {
            ChatFormat::ChatMl => {
                let mut rest = messages;
                match messages.first() {
                    Some(m) if m.role == "system" => {
                        out.push_str(&format!("<|im_start|>system\n{}<|im_end|>\n", m.content));
                        rest = &messages[1..];
                    }
                    _ => {
                        out.push_str("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n")
                    }
                }
                for m in rest {
                    out.push_str(&format!(
                        "<|im_start|>{}\n{}<|im_end|>\n",
                        m.role, m.content
                    ));
                }
                if add_generation_prompt {
                    out.push_str("<|im_start|>assistant\n");
                }
            }
            ChatFormat::Llada => {
                out.push_str("<|startoftext|>");
                for m in messages {
                    out.push_str(&format!(
                        "<|start_header_id|>{}<|end_header_id|>\n\n{}<|eot_id|>",
                        m.role,
                        m.content.trim()
                    ));
                }
                if add_generation_prompt {
                    out.push_str("<|start_header_id|>assistant<|end_header_id|>\n\n");
                }
            }
            ChatFormat::Plain => {
                for m in messages {
                    out.push_str(&m.content);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_table_is_a_bijection_onto_printables() {
        let t = byte_to_char();
        let inv = char_to_byte();
        assert_eq!(inv.len(), 256);
        assert_eq!(t[b'a' as usize], 'a');
        assert_eq!(t[b' ' as usize], '\u{120}');
        assert_eq!(t[b'\n' as usize], '\u{10a}');
        assert_eq!(t[0], '\u{100}');
        assert_eq!(t[0xad], '\u{143}');
        for (b, c) in t.iter().enumerate() {
            assert_eq!(inv[c] as usize, b);
            assert!(!c.is_whitespace() && !c.is_control());
        }
    }

    #[test]
    fn chat_formats() {
        let msgs = [ChatMessage::new("user", " Hi ")];
        assert_eq!(
            ChatFormat::ChatMl.render(&msgs, true),
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n\
             <|im_start|>user\n Hi <|im_end|>\n<|im_start|>assistant\n"
        );
        assert_eq!(
            ChatFormat::Llada.render(&msgs, true),
            "<|startoftext|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>\
             <|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let sys = [
            ChatMessage::new("system", "S"),
            ChatMessage::new("user", "U"),
        ];
        assert_eq!(
            ChatFormat::ChatMl.render(&sys, false),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n"
        );
        assert_eq!(
            ChatFormat::detect("x<|im_start|>y"),
            Some(ChatFormat::ChatMl)
        );
        assert_eq!(
            ChatFormat::detect("{{'<|start_header_id|>'}}"),
            Some(ChatFormat::Llada)
        );
        assert_eq!(ChatFormat::detect("plain"), None);
    }
}
