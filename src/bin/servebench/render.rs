//! `servebench render FILE [--style gpustack|vllm]`: results → "Serving Benchmark Result"
//! blocks, separated by one blank line.

use servebench::format::text::{self, Style};

use crate::input::{self, InputError};

/// The report styles, as typed on the command line.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum StyleArg {
    /// GPUStack's performance-lab block.
    Gpustack,
    /// `vllm bench serve`'s report.
    Vllm,
}

impl From<StyleArg> for Style {
    fn from(s: StyleArg) -> Style {
        match s {
            StyleArg::Gpustack => Style::Gpustack,
            StyleArg::Vllm => Style::Vllm,
        }
    }
}

/// Arguments of `servebench render`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A JSON result or array of results (as `servebench parse` writes), or a text report;
    /// `-` or /dev/stdin reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
    /// Report style; default: the style each result was parsed from (GPUStack if none).
    #[arg(long, value_enum)]
    style: Option<StyleArg>,
}

/// Each result rendered, blocks separated by a blank line, the output ending in a newline.
pub fn run(args: &Args) -> Result<String, InputError> {
    let loaded = input::load(&args.file)?;
    if loaded.is_empty() {
        return Err(InputError(format!(
            "{}: no results",
            input::display_name(&args.file)
        )));
    }
    let blocks: Vec<String> = loaded
        .iter()
        .map(|l| match args.style {
            // The block's own layout when it is of the style asked for (or none was asked).
            Some(s) => match &l.layout {
                Some(layout) if layout.style == Style::from(s) => {
                    text::render_with(&l.result, layout)
                }
                _ => text::render(&l.result, s.into()),
            },
            None => match &l.layout {
                Some(layout) => text::render_with(&l.result, layout),
                None => text::render(&l.result, Style::Gpustack),
            },
        })
        .collect();
    Ok(blocks.join("\n\n") + "\n")
}
