//! The README's "Architecture" rules, checked on the source: which library module may refer
//! to which (`crate::module` paths in code, doc comments and tests aside). A rule broken by a
//! change fails here with the file and line that broke it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// (module, modules it must not refer to, why).
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "result",
        &[
            "format",
            "metrics",
            "compare",
            "lint",
            "import",
            "http",
            "sim",
            "driver",
            "collector",
            "runfile",
        ],
        "the schema holds numbers and metadata only: it knows no renderer, metric or producer",
    ),
    (
        "record",
        &[
            "format",
            "metrics",
            "compare",
            "lint",
            "import",
            "http",
            "sim",
            "driver",
            "collector",
            "engine",
            "result",
        ],
        "raw timings depend on nothing",
    ),
    (
        "rng",
        &[
            "format",
            "metrics",
            "compare",
            "lint",
            "import",
            "http",
            "sim",
            "driver",
            "collector",
            "engine",
            "result",
            "record",
            "stats",
            "noise",
            "profile",
        ],
        "random numbers depend on nothing",
    ),
    (
        "collector",
        &[
            "metrics", "format", "compare", "lint", "import", "http", "sim", "driver", "engine",
        ],
        "collection knows no metric definition and no producer",
    ),
    (
        "engine",
        &[
            "metrics", "format", "compare", "lint", "import", "http", "sim", "driver",
        ],
        "the engine trait sits below the driver and the metrics",
    ),
    (
        "metrics",
        &[
            "format", "compare", "lint", "import", "http", "sim", "driver",
        ],
        "metrics are computed from records, whoever made them, and rendered elsewhere",
    ),
    (
        "stats",
        &[
            "format", "compare", "lint", "import", "http", "sim", "driver", "metrics",
        ],
        "statistics know no metric or renderer",
    ),
    (
        "format",
        &["http", "sim", "driver", "collector", "engine"],
        "renderers and parsers know no producer",
    ),
    (
        "compare",
        &[
            "http",
            "sim",
            "driver",
            "collector",
            "engine",
            "import",
            "format",
        ],
        "comparisons work on results, wherever they came from, and are rendered by `format`",
    ),
    (
        "lint",
        &["http", "sim", "driver", "collector", "engine", "format"],
        "lints work on results and records, wherever they came from, and are rendered by `format`",
    ),
    (
        "noise",
        &[
            "format",
            "http",
            "sim",
            "driver",
            "collector",
            "engine",
            "import",
            "lint",
        ],
        "noise statistics work on results and records, wherever they came from, and are \
         rendered by `format`",
    ),
    (
        "accuracy",
        &[
            "sim",
            "driver",
            "collector",
            "engine",
            "format",
            "compare",
            "lint",
        ],
        "accuracy joins client files to the server's timeline, whoever produced them",
    ),
    (
        "capacity",
        &[
            "format",
            "http",
            "sim",
            "driver",
            "collector",
            "engine",
            "import",
            "lint",
            "study",
        ],
        "the capacity search judges probes, whoever ran them, and is rendered by `format`",
    ),
    (
        "profile",
        &[
            "metrics",
            "compare",
            "lint",
            "import",
            "http",
            "sim",
            "driver",
            "collector",
        ],
        "a profile describes load only",
    ),
];

/// `file`'s path from the crate root, with `/` separators (as the messages and lists name
/// files).
fn rel(file: &Path) -> String {
    file.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to (`src/format/text/parse.rs` → `format`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    Some(first.trim_end_matches(".rs").to_string())
}

/// The text of `source` without comments and without `#[cfg(test)]` modules (tests may use
/// anything), line numbers kept.
fn code_lines(source: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth: i64 = 0;
    let mut pending_test = false;
    for (i, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            pending_test = true;
        }
        let opens = code.matches('{').count() as i64;
        let closes = code.matches('}').count() as i64;
        if pending_test && opens > 0 && skip_depth.is_none() {
            skip_depth = Some(depth);
            pending_test = false;
        }
        if skip_depth.is_none() {
            out.push((i + 1, code.to_string()));
        }
        depth += opens - closes;
        if let Some(d) = skip_depth {
            if depth <= d {
                skip_depth = None;
            }
        }
    }
    out
}

/// The top-level modules a line refers to through `crate::`, including `use crate::{a, b::c}`.
fn referenced(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let after = &rest[at + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or("");
            for part in inner.split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.insert(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                found.insert(name);
            }
        }
        rest = after;
    }
    found
}

#[test]
fn library_modules_refer_only_to_what_the_architecture_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        if file.starts_with(src.join("bin")) {
            continue;
        }
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some((_, forbidden, why)) = RULES.iter().find(|(m, _, _)| *m == module) else {
            continue;
        };
        checked += 1;
        let source = std::fs::read_to_string(file).unwrap();
        for (line, code) in code_lines(&source) {
            for used in referenced(&code) {
                if forbidden.contains(&used.as_str()) {
                    broken.push(format!(
                        "{}:{line}: `{module}` refers to `crate::{used}` ({why})",
                        rel(file)
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} files checked: the scan lost its way"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_scanner_sees_grouped_uses_and_skips_comments_and_tests() {
    let code = "use crate::{metrics, format::text::Layout};\nlet x = crate::record::Chunk; // crate::http\n#[cfg(test)]\nmod tests {\n    use crate::sim;\n}\nuse crate::stats;";
    let seen: BTreeSet<String> = code_lines(code)
        .iter()
        .flat_map(|(_, c)| referenced(c))
        .collect();
    let want: BTreeSet<String> = ["metrics", "format", "record", "stats"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, want);
}

/// What rendering looks like in code: writing into a sink, appending to a string, a
/// `Display` implementation, serialising for output.
const RENDERING: &[&str] = &[
    "write!(",
    "writeln!(",
    "push_str(",
    "impl fmt::Display",
    "impl std::fmt::Display",
    "impl Display",
    "serde_json::to_string",
];

/// `compare`, `noise` and `lint` hold numbers, decisions and findings; `format` writes them
/// as text (GPUStack's cells, tables, sentences and ladder; the comparison and noise
/// tables; lint's finding lines). `compare` and `noise` build no string at all; `lint`
/// builds only its findings' messages.
#[test]
fn compare_noise_and_lint_render_nothing() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut broken = Vec::new();
    let mut checked = 0;
    for (module, extra) in [
        ("compare", &["format!("][..]),
        ("noise", &["format!("][..]),
        ("lint", &[][..]),
    ] {
        let mut files = Vec::new();
        rust_files(&src.join(module), &mut files);
        files.push(src.join(format!("{module}.rs")));
        files.sort();
        for file in files.iter().filter(|f| f.exists()) {
            checked += 1;
            let source = std::fs::read_to_string(file).unwrap();
            for (line, code) in code_lines(&source) {
                for needle in RENDERING.iter().chain(extra) {
                    if code.contains(needle) {
                        broken.push(format!(
                            "{}:{line}: `{module}` renders (`{needle}`): move it to `format`",
                            rel(file)
                        ));
                    }
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} files checked: the scan lost its way"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Files over the size limit that wait to be split along their seams (issue #12); the list
/// may only shrink.
const OVERSIZED: &[&str] = &[];

/// Most lines a source file may have ("files under ~800 lines, one module per concern").
const MAX_LINES: usize = 800;

#[test]
fn source_files_stay_small_and_open_with_what_they_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut broken = Vec::new();
    for file in &files {
        let rel = rel(file);
        let source = std::fs::read_to_string(file).unwrap();
        let lines = source.lines().count();
        if lines > MAX_LINES && !OVERSIZED.contains(&rel.as_str()) {
            broken.push(format!(
                "{rel}: {lines} lines (more than {MAX_LINES}: split it along its seams)"
            ));
        }
        if lines <= MAX_LINES && OVERSIZED.contains(&rel.as_str()) {
            broken.push(format!(
                "{rel}: {lines} lines now: take it off OVERSIZED in tests/architecture.rs"
            ));
        }
        let opens_with_doc = source
            .lines()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.starts_with("//!"));
        if !opens_with_doc {
            broken.push(format!(
                "{rel}: does not open with a `//!` comment on what it owns"
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Benches, examples and tests share code through the library (or a `mod` of their own
/// directory), never by including another target's files with a path attribute.
#[test]
fn no_target_includes_files_by_path() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["benches", "examples", "tests", "src"] {
        rust_files(&root.join(dir), &mut files);
    }
    let needle = concat!("#[", "path");
    let found: Vec<String> = files
        .iter()
        .filter(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .any(|l| l.trim_start().starts_with(needle))
        })
        .map(|f| rel(f))
        .collect();
    assert!(found.is_empty(), "path-attribute includes in {found:?}");
}

/// Public type names the library still uses twice, each with the files that define it; the
/// list may only shrink (it is empty).
const SHARED_TYPE_NAMES: &[(&str, &[&str])] = &[];

/// "No two public types with one name": every `pub struct`, `pub enum`, `pub type` and
/// `pub trait` of the library (the CLI's private modules aside) has a name of its own.
#[test]
fn public_type_names_are_unique() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut defined: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
        let rel = rel(file);
        let source = std::fs::read_to_string(file).unwrap();
        for (_, code) in code_lines(&source) {
            let code = code.trim_start();
            for kind in ["pub struct ", "pub enum ", "pub type ", "pub trait "] {
                if let Some(rest) = code.strip_prefix(kind) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    defined.entry(name).or_default().push(rel.clone());
                }
            }
        }
    }
    assert!(
        defined.len() >= 50,
        "only {} public types found: the scan lost its way",
        defined.len()
    );
    let mut broken = Vec::new();
    for (name, places) in defined.iter().filter(|(_, p)| p.len() > 1) {
        let allowed = SHARED_TYPE_NAMES
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, files)| files.to_vec());
        if allowed.as_deref() != Some(&places.iter().map(String::as_str).collect::<Vec<_>>()[..]) {
            broken.push(format!("`{name}` is defined in {}", places.join(", ")));
        }
    }
    for (name, _) in SHARED_TYPE_NAMES {
        if defined.get(*name).is_none_or(|p| p.len() < 2) {
            broken.push(format!(
                "`{name}` has one definition now: take it off SHARED_TYPE_NAMES"
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
