//! Diffusion language models (Dream, LLaDA) in candle, and what the decoder
//! needs from a model and its tokenizer.
//!
//! The decoder (`crate::decode`) only sees the two traits below, so it can be
//! tested with small hand-made models and run with the real architectures.

use crate::error::Result;

pub mod causal;
pub mod device;
pub mod dream;
pub mod init;
pub mod init_ar;
pub mod llada;
pub mod load;
pub mod tokenizer;
mod torch_ops;
pub mod train;

pub use causal::{load_causal, ArFamily, CausalModel, FimFormat, LoadedCausal};
pub use device::{device_name, pin_cpu_threads, DeviceSpec};
pub use init::{init_random, Size};
pub use init_ar::init_random_ar;
pub use load::{load, parse_dtype, AnyModel, Arch, LoadedModel};
pub use tokenizer::{ChatFormat, ChatMessage, Tokenizer, PLAIN_TEMPLATE};
pub use train::{train, TrainConfig};

/// A model trained by cdiff and shipped in the crate's `models/` folder
/// (see its `README.md`, the model card), with the grammar it was trained
/// for and the decoding settings its card uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shipped {
    /// Its name, usable as `--model NAME`.
    pub name: &'static str,
    /// Its directory.
    pub dir: &'static str,
    /// The grammar it writes.
    pub grammar: &'static str,
    /// Canvas length of its card's settings (the training context; half as
    /// many steps, one block, random remasking).
    pub max_tokens: usize,
    /// Sampling temperature of its card's settings.
    pub temperature: f64,
    /// File extensions of text in its language (`cdiff infill --hole-marker`
    /// picks the model and grammar by the template's extension).
    pub extensions: &'static [&'static str],
}

/// `models/smiles-tiny`: SMILES, the default of `cdiff decode`.
pub const SMILES_TINY: Shipped = Shipped {
    name: "smiles-tiny",
    dir: DEFAULT_MODEL,
    grammar: DEFAULT_GRAMMAR,
    max_tokens: 64,
    temperature: 1.0,
    extensions: &["smi", "smiles"],
};

/// `models/json-tiny`: JSON documents (also used under a JSON Schema).
pub const JSON_TINY: Shipped = Shipped {
    name: "json-tiny",
    dir: concat!(env!("CARGO_MANIFEST_DIR"), "/models/json-tiny"),
    grammar: concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/json.ebnf"),
    max_tokens: 128,
    temperature: 0.5,
    extensions: &["json"],
};

/// `models/cpp-tiny`: C++ functions (HumanEval-X style), used by `cdiff
/// infill` and `cdiff decode` for `grammars/cpp.ebnf`.
pub const CPP_TINY: Shipped = Shipped {
    name: "cpp-tiny",
    dir: concat!(env!("CARGO_MANIFEST_DIR"), "/models/cpp-tiny"),
    grammar: concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/cpp.ebnf"),
    max_tokens: 512,
    temperature: 0.5,
    extensions: &["cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h"],
};

/// cdiff's own models.
pub const SHIPPED: &[Shipped] = &[SMILES_TINY, JSON_TINY, CPP_TINY];

impl Shipped {
    /// The shipped model called `name` (case-insensitive), if any.
    pub fn by_name(name: &str) -> Option<&'static Shipped> {
        SHIPPED.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// The shipped model whose grammar file has the same file name as
    /// `grammar` (`grammars/json.ebnf` → `json-tiny`), if any.
    pub fn for_grammar(grammar: &std::path::Path) -> Option<&'static Shipped> {
        let name = grammar.file_name()?;
        SHIPPED
            .iter()
            .find(|s| std::path::Path::new(s.grammar).file_name() == Some(name))
    }

    /// The shipped model whose language a file with this name's extension
    /// is in (`infill.cpp` → `cpp-tiny`), if any (case-insensitive).
    pub fn for_extension(file: &std::path::Path) -> Option<&'static Shipped> {
        let ext = file.extension()?.to_str()?.to_ascii_lowercase();
        SHIPPED
            .iter()
            .find(|s| s.extensions.contains(&ext.as_str()))
    }
}

/// cdiff's own SMILES model, `models/smiles-tiny` in the crate (trained with
/// `cdiff train`, see its README), used by `cdiff decode` without `--model`
/// and without a grammar of another shipped model.
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

    /// [`Denoiser::forward`] in the model's own dtype: f32, or a 16-bit
    /// float (bf16, f16) that f32 holds exactly, so converting a row to f32
    /// later gives `forward`'s values bit for bit. A decoder copying rows
    /// off a GPU copies half the bytes. By default, `forward`.
    ///
    /// # Errors
    /// As [`Denoiser::forward`].
    fn forward_native(&mut self, tokens: &[u32]) -> Result<candle_core::Tensor> {
        self.forward(tokens)
    }
}

/// An autoregressive language model with a KV cache (the infilling loop,
/// `crate::infill`, only sees this trait).
pub trait CausalLm {
    /// Width of the logits.
    fn vocab_size(&self) -> usize;

    /// Runs `tokens`, which follow `offset` tokens already in the cache, and
    /// returns the logits of the token after the last one.
    ///
    /// # Errors
    /// A model error.
    fn forward(&mut self, tokens: &[u32], offset: usize) -> Result<Vec<f32>>;

    /// Empties the cache.
    ///
    /// # Errors
    /// A model error.
    fn clear(&mut self) -> Result<()>;
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

    /// The most bytes one token stands for (an upper bound will do: it
    /// limits what a run of masks can hold, see
    /// [`crate::decode::DecodeConfig::limit_holes`]). The default,
    /// `usize::MAX`, says nothing.
    fn max_token_bytes(&self) -> usize {
        usize::MAX
    }

    /// The ids `0..n` as a byte trie for allowed-token masks
    /// ([`crate::mask::Vocabulary`], built from [`TextCodec::token_bytes`]).
    /// The default builds it on every call; a codec that keeps it (the
    /// model's [`Tokenizer`]) builds it once for all the decodes and
    /// infills it serves, and with it the walks the vocabulary keeps per
    /// set of lexer states (27 ms for Qwen2's 151,667 tokens on the README's
    /// 2-core machine, once instead of per infill).
    fn vocabulary(&self, n: usize) -> std::sync::Arc<crate::mask::Vocabulary> {
        std::sync::Arc::new(vocabulary_of(self, n))
    }
}

/// The trie of `codec`'s ids `0..n` (what [`TextCodec::vocabulary`] gives).
pub(crate) fn vocabulary_of<C: TextCodec + ?Sized>(codec: &C, n: usize) -> crate::mask::Vocabulary {
    let tokens: Vec<&[u8]> = (0..n as u32).map(|id| codec.token_bytes(id)).collect();
    crate::mask::Vocabulary::new(&tokens)
}
