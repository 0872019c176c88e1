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
    /// Report style; default: the style each result was parsed from, else the one whose
    /// labels match its convention (vLLM's for vLLM's numbers), else GPUStack's. The vLLM
    /// style refuses guidellm-convention numbers (its labels would misdescribe them).
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
    let mut blocks: Vec<String> = Vec::with_capacity(loaded.len());
    for l in &loaded {
        // Without --style: the style the block was parsed from, else the one whose labels
        // match the result's convention. A block is printed with its own layout when it is
        // of the style asked for.
        let style = match (args.style, &l.layout) {
            (Some(s), _) => s.into(),
            (None, Some(layout)) => layout.style,
            (None, None) if l.result.meta.convention.is_some() => {
                crate::runfile_in::style_for(l.result.meta.convention)
            }
            (None, None) => Style::Gpustack,
        };
        servebench::format::labels::check(&l.result, style)
            .map_err(|e| InputError(format!("{}: {e}", l.origin)))?;
        blocks.push(match &l.layout {
            Some(layout) if layout.style == style => text::render_with(&l.result, layout),
            _ => text::render(&l.result, style),
        });
    }
    Ok(blocks.join("\n\n") + "\n")
}
