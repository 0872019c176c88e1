//! `servebench export --format parquet RUN --out FILE`: a run file's records in a format
//! other tools load ([`servebench::runfile::parquet`]: one row per request, the run's
//! metadata in the file's key-value metadata). Parquet needs the `parquet` cargo feature.

use std::path::PathBuf;

use crate::input::InputError;

/// The formats `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Apache Parquet: one row per request, chunk times as a list column.
    Parquet,
}

/// `servebench export` flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The output format.
    #[arg(long, value_enum)]
    format: Format,
    /// A servebench run file.
    run: PathBuf,
    /// Where to write (atomically).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// Writes the export; a line saying what was written is the output.
pub fn run(args: &Args) -> Result<String, InputError> {
    let run = servebench::runfile::RunFile::read(&args.run)
        .map_err(|e| InputError(format!("{}: {e}", args.run.display())))?;
    match args.format {
        Format::Parquet => parquet(&run, args),
    }
}

#[cfg(feature = "parquet")]
fn parquet(run: &servebench::runfile::RunFile, args: &Args) -> Result<String, InputError> {
    let bytes = servebench::runfile::parquet::write(run, Vec::new())
        .map_err(|e| InputError(format!("{}: {e}", args.out.display())))?;
    servebench::atomic::write(&args.out, &bytes)
        .map_err(|e| InputError(format!("{}: {e}", args.out.display())))?;
    Ok(format!(
        "{} requests of {} written to {} ({} bytes, Parquet)\n",
        run.records.len(),
        args.run.display(),
        args.out.display(),
        bytes.len()
    ))
}

#[cfg(not(feature = "parquet"))]
fn parquet(_: &servebench::runfile::RunFile, _: &Args) -> Result<String, InputError> {
    Err(InputError(
        "--format parquet: this servebench was built without the `parquet` feature \
         (cargo install servebench --features parquet)"
            .into(),
    ))
}
