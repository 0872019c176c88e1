//! `servebench render FILE [--style gpustack|vllm]`: any file servebench reads → "Serving
//! Benchmark Result" blocks, separated by one blank line (default style: the block's own,
//! else GPUStack's for guidellm-convention numbers and vLLM's for vLLM-convention ones).

use servebench::format::text::{self, Style};
use servebench::result::Convention;

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
    /// Any file servebench reads: a JSON result or array of results (as `servebench parse`
    /// writes), a text report, a run file, a guidellm, vLLM, SGLang or aiperf file; `-` or
    /// /dev/stdin reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
    /// Report style; default: the style each result was parsed from, else the one whose
    /// labels fit its convention (vLLM's for vLLM's numbers). The vLLM style refuses
    /// guidellm-convention numbers (its labels would misdescribe them).
    #[arg(long, value_enum)]
    style: Option<StyleArg>,
}

/// Each result rendered, blocks separated by a blank line, the output ending in a newline.
pub fn run(args: &Args) -> Result<String, InputError> {
    let loaded = input::load(&args.file)?;
    let mut blocks: Vec<String> = Vec::with_capacity(loaded.len());
    for l in &loaded {
        let style = match (args.style, &l.layout, l.result.meta.convention) {
            (Some(s), _, _) => s.into(),
            (None, Some(layout), _) => layout.style,
            // An imported file or a run file: the style of its numbers' convention.
            (None, None, Some(Convention::Vllm)) => Style::Vllm,
            (None, None, _) => Style::Gpustack,
        };
        // Never one convention's numbers under the other's labels.
        servebench::format::labels::check(&l.result, style)
            .map_err(|e| InputError(format!("{}: {e}", l.provenance.origin())))?;
        // The block's own layout when it is of the style asked for (or none was asked).
        blocks.push(match &l.layout {
            Some(layout) if layout.style == style => text::render_with(&l.result, layout),
            _ => text::render(&l.result, style),
        });
    }
    Ok(blocks.join("\n\n") + "\n")
}
