pub mod cpp;
