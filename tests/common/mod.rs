pub mod cpp;
pub mod scratch;
pub mod shared;
