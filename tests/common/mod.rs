pub mod cpp;
pub mod shared;
