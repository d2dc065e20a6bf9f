//! Tokenizers of the supported models (Hugging Face `tokenizer.json` files,
//! loaded with the `tokenizers` crate) as a [`TextCodec`], and the two chat
//! formats the models were trained with.
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
use std::path::Path;

use super::TextCodec;
use crate::error::{Error, ErrorKind, Result};

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

/// A Hugging Face tokenizer with the raw bytes of every token precomputed.
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bytes: Vec<Vec<u8>>,
}

impl Tokenizer {
    /// Loads a `tokenizer.json`.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] when the file is missing or malformed.
    pub fn from_file(path: &Path) -> Result<Tokenizer> {
        let inner = tokenizers::Tokenizer::from_file(path).map_err(|e| {
            Error::new(
                ErrorKind::Model,
                format!("cannot load tokenizer {}: {e}", path.display()),
            )
        })?;
        Ok(Tokenizer::new(inner))
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
        Tokenizer { inner, bytes }
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
