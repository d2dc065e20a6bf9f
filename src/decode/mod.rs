//! Constrained decoding of diffusion language models (to be written).
