//! The `--format text|json` choice that `report`, `lint` and `accuracy` share; each verb's
//! `--format` help says what its text and its JSON hold.

/// Human-readable text (the default) or JSON for tools.
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum TextOrJson {
    /// Human-readable text.
    #[default]
    Text,
    /// JSON, for tools.
    Json,
}
