//! Diffusion language models (Dream, LLaDA) in candle, and what the decoder
//! needs from a model and its tokenizer.
//!
//! The decoder (`crate::decode`) only sees the two traits below, so it can be
//! tested with small hand-made models and run with the real architectures.

use crate::error::Result;

pub mod dream;
pub mod init;
pub mod llada;
pub mod load;
pub mod tokenizer;
pub mod train;

pub use init::{init_random, Size};
pub use load::{load, parse_dtype, AnyModel, Arch, LoadedModel};
pub use tokenizer::{ChatFormat, ChatMessage, Tokenizer, PLAIN_TEMPLATE};
pub use train::{train, TrainConfig};

/// cdiff's own model, `models/smiles-tiny` in the crate (trained with
/// `cdiff train`, see its README), used by `cdiff decode` without `--model`.
pub const DEFAULT_MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/models/smiles-tiny");

/// The grammar `cdiff decode` uses with [`DEFAULT_MODEL`] when none is given.
pub const DEFAULT_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/smiles.ebnf");

/// A masked-diffusion denoiser: given a canvas of token ids (some of them the
/// mask id), the logits of every position.
pub trait Denoiser {
    /// Width of the logits (the embedding's rows; may exceed the tokenizer's
    /// vocabulary, e.g. Dream: 152,064 rows for 151,667 tokens).
    fn vocab_size(&self) -> usize;

    /// Logits for every position of `tokens`: a `[tokens.len(), vocab_size]`
    /// f32 tensor, row `i` being the distribution of token `i` (Dream's shift
    /// by one is already applied by the model).
    ///
    /// # Errors
    /// A model error (shapes, device, weights).
    fn forward(&mut self, tokens: &[u32]) -> Result<candle_core::Tensor>;
}

/// Special token ids and the size of the real vocabulary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecialTokens {
    /// The mask token of the canvas.
    pub mask: u32,
    /// End of sequence.
    pub eos: u32,
    /// Padding (may equal `eos`).
    pub pad: u32,
    /// Number of real tokens: ids at or past this are never sampled.
    pub n_tokens: usize,
}

/// Text ⇄ token ids, at the byte level (a token may be part of a UTF-8 character).
pub trait TextCodec {
    /// Token ids of `text` (no special tokens added).
    ///
    /// # Errors
    /// A tokenizer error.
    fn encode(&self, text: &[u8]) -> Result<Vec<u32>>;

    /// The bytes token `id` stands for in generated text (empty for special
    /// tokens and ids past the vocabulary).
    fn token_bytes(&self, id: u32) -> &[u8];
}
