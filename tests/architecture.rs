//! The crate's parts and the rules between them, checked on the source. One table names the
//! parts (by path) and one names the *nevers*: dependencies that must not exist, directly or
//! through any chain of other modules. The scanner resolves every module path of the library
//! (`crate::…`, `self::…`, `super::…`, a child module's name, and the items a module
//! re-exports with `pub use`) to the file that defines it, closes the file graph
//! transitively, and reports a broken never with the chain of files that breaks it.
//! Tests (`#[cfg(test)]` items and modules) may use anything and are not scanned.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// The parts: (name, paths under the crate root, what it owns). A file belongs to the part
/// with the longest matching path (`src/study/document.rs` is `StudyDoc`, the rest of
/// `src/study/` is `Study`).
const PARTS: &[(&str, &[&str], &str)] = &[
    ("Cli", &["src/bin/"], "the servebench binary: parse, call a verb, print, exit"),
    (
        "App",
        &["src/app/"],
        "the verbs (bench, sweep, report, lint-files, simulate, study runs) composed from the parts",
    ),
    (
        "Study",
        &["src/study/"],
        "tuning studies: file, plan, journal, shards, verdicts (values, not text)",
    ),
    (
        "StudyDoc",
        &["src/format/study.rs", "src/format/study/"],
        "STUDY.md and study.json: the renderer above the study it renders",
    ),
    ("Sim", &["src/sim/"], "discrete-event vLLM/H200 model, an Engine"),
    ("SimServe", &["src/sim/serve.rs"], "the simulator behind the HTTP server"),
    ("Http", &["src/http/"], "OpenAI client Engine, SSE, server over any Engine"),
    (
        "Observe",
        &["src/observe/", "src/accuracy/"],
        "server metrics, slices, plots, client accuracy",
    ),
    (
        "Files",
        &["src/load/", "src/merge/", "src/runfile.rs", "src/runfile/"],
        "run file, the one loader, shard merge",
    ),
    ("Import", &["src/import/"], "guidellm / vLLM / SGLang / aiperf readers"),
    (
        "Text",
        &["src/format/text/", "src/format/pyfmt.rs", "src/format/doc.rs"],
        "the byte-exact report block: its vocabulary, layouts, Python number spelling, parser \
         and renderer (shared by the readers and the writers of text reports)",
    ),
    ("Format", &["src/format/"], "every other text: reports, tables, sentences, markdown"),
    (
        "Judge",
        &["src/compare/", "src/lint/", "src/noise/", "src/capacity/"],
        "deltas, intervals, noise verdicts, lints, the capacity search under an SLO",
    ),
    ("Metrics", &["src/metrics/"], "each convention's formulas, once"),
    (
        "Quality",
        &["src/quality/"],
        "eval sets, scorers, accuracy intervals, paired comparisons",
    ),
    ("Stats", &["src/stats/"], "numpy-exact, weighted, streaming statistics"),
    (
        "Driver",
        &["src/driver/", "src/engine.rs", "src/engine/"],
        "Engine trait, workloads, arrivals, load loop",
    ),
    (
        "Data",
        &[
            "src/result.rs",
            "src/result/",
            "src/record.rs",
            "src/record/",
            "src/collector.rs",
            "src/collector/",
            "src/profile.rs",
            "src/rng.rs",
            "src/atomic.rs",
            "src/secret.rs",
        ],
        "result schema, records, collector, profiles, rng, atomic file writes, secret redaction",
    ),
    (
        "Root",
        &["src/lib.rs", "src/guide.rs"],
        "the crate root: module declarations, the re-exported API and the guide",
    ),
];

/// The nevers: (from, to, because). `from → to` must not exist, directly or indirectly.
const NEVERS: &[(&str, &str, &str)] = &[
    (
        "Data",
        "Metrics",
        "schema, records and profiles hold no formula",
    ),
    ("Data", "Format", "the schema knows no rendering"),
    ("Data", "Driver", "profiles and records are plain data"),
    (
        "Data",
        "Judge",
        "the schema holds no noise or compare types",
    ),
    ("Stats", "Metrics", "statistics know no metric"),
    (
        "Stats",
        "Data",
        "statistics know no schema; metrics map into it",
    ),
    ("Metrics", "Format", "numbers before text"),
    ("Metrics", "Judge", "formulas know no verdict"),
    (
        "Driver",
        "Metrics",
        "the load loop returns records; callers compute once",
    ),
    ("Driver", "Sim", "the driver drives any Engine"),
    ("Driver", "Http", "the driver drives any Engine"),
    ("Judge", "Format", "verdicts before their text"),
    ("Judge", "Files", "judges take values, not files"),
    ("Format", "Import", "renderers do not read foreign files"),
    ("Text", "Import", "the block model reads no foreign files"),
    ("Text", "Files", "the block model reads no files"),
    ("Text", "Driver", "the block model knows no producer"),
    ("Text", "Format", "a block knows no report built around it"),
    ("Data", "Text", "the schema knows no rendering"),
    ("Metrics", "Text", "numbers before text"),
    ("Stats", "Text", "statistics know no text"),
    ("Judge", "Text", "verdicts before their text"),
    ("Http", "Text", "transport knows no text"),
    (
        "Sim",
        "Text",
        "the simulator models; the CLI and format print",
    ),
    ("Format", "Files", "renderers do not read files"),
    ("Format", "Driver", "renderers know no producer"),
    ("Import", "Files", "the loader sits above the importers"),
    ("Import", "Format", "importers read; they do not print"),
    (
        "Files",
        "Judge",
        "a saved run is data; lints run on it, not inside it",
    ),
    (
        "Http",
        "Files",
        "transport knows no run files or shard merging",
    ),
    ("Http", "Metrics", "transport knows no metric"),
    ("Http", "Format", "transport knows no text"),
    ("Http", "Sim", "the server serves any Engine"),
    (
        "Sim",
        "Http",
        "only sim::serve puts the simulator behind HTTP",
    ),
    (
        "Sim",
        "Format",
        "the simulator models; the CLI and format print",
    ),
    (
        "Sim",
        "Judge",
        "the simulator models; comparisons are made above it",
    ),
    ("Study", "Format", "study decides; StudyDoc renders"),
    (
        "Quality",
        "Format",
        "accuracies and verdicts before their text",
    ),
    (
        "Http",
        "Quality",
        "the server answers through a function it is given",
    ),
    (
        "Observe",
        "Format",
        "observe measures and draws; text lives in format",
    ),
    (
        "Observe",
        "Sim",
        "observation works whoever produced the run",
    ),
];

/// Every part but the CLI, the application layer and the root: the verbs sit on top of the
/// library, and only the binary (and the root's re-exports) reach them.
fn nevers() -> Vec<(String, String, String)> {
    let mut all: Vec<(String, String, String)> = NEVERS
        .iter()
        .map(|(a, b, w)| (a.to_string(), b.to_string(), w.to_string()))
        .collect();
    for (part, _, _) in PARTS {
        if !["Cli", "App", "Root"].contains(part) {
            all.push((
                part.to_string(),
                "App".to_string(),
                "the verbs compose the parts; no part calls a verb".to_string(),
            ));
        }
    }
    all
}

/// `file`'s path from the crate root, with `/` separators.
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

/// The part a file (path from the crate root) belongs to: the longest matching path.
fn part_of(rel: &str) -> Option<&'static str> {
    PARTS
        .iter()
        .flat_map(|(name, paths, _)| paths.iter().map(move |p| (*name, *p)))
        .filter(|(_, p)| {
            if p.ends_with('/') {
                rel.starts_with(p)
            } else {
                rel == *p
            }
        })
        .max_by_key(|(_, p)| p.len())
        .map(|(name, _)| name)
}

/// `source` with comments, string and character literals blanked (newlines kept, so line
/// numbers stay).
fn strip_literals(source: &str) -> String {
    let c: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |ch: char, out: &mut String| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(c[i], &mut out);
                    i += 1;
                }
            }
        } else if c[i] == 'r' && !ident_before && matches!(c.get(i + 1), Some('"') | Some('#')) && {
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            let mut hashes = 0;
            i += 1;
            out.push(' ');
            while c[i] == '#' {
                hashes += 1;
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                blank(c[i], &mut out);
                i += 1;
            }
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(c[i], &mut out);
                    i += 1;
                }
                if i < c.len() {
                    blank(c[i], &mut out);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            out.push_str("  ");
            i += 2;
            while i < c.len() && c[i] != '\'' {
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            out.push_str("   ");
            i += 3;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// A token of the cleaned source and its line.
#[derive(Debug, Clone, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

fn tokens(clean: &str) -> Vec<Token> {
    let c: Vec<char> = clean.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Token {
                text: c[start..i].iter().collect(),
                line,
            });
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token {
                text: ch.to_string(),
                line,
            });
            i += 1;
        }
    }
    out
}

/// `tokens` without `#[cfg(test)]` items; also the names of child modules declared under
/// `#[cfg(test)]` (`mod tests;`), whose files are tests too.
fn without_tests(toks: Vec<Token>) -> (Vec<Token>, BTreeSet<String>) {
    let is_test_attr = |t: &[Token]| {
        let s: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        s.starts_with(&["#", "[", "cfg", "(", "test", ")", "]"])
    };
    let mut out = Vec::new();
    let mut test_children = BTreeSet::new();
    let mut i = 0;
    while i < toks.len() {
        if !is_test_attr(&toks[i..]) {
            out.push(toks[i].clone());
            i += 1;
            continue;
        }
        i += 7;
        // Further attributes, then the item up to its `;` or its closing brace.
        while toks.get(i).is_some_and(|t| t.text == "#") {
            let mut depth = 0;
            while let Some(t) = toks.get(i) {
                i += 1;
                match t.text.as_str() {
                    "[" => depth += 1,
                    "]" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
        }
        let item_start = i;
        let mut depth = 0;
        while let Some(t) = toks.get(i) {
            i += 1;
            match t.text.as_str() {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                ";" if depth == 0 => {
                    let words: Vec<&str> = toks[item_start..i]
                        .iter()
                        .map(|t| t.text.as_str())
                        .collect();
                    if let Some(at) = words.iter().position(|w| *w == "mod") {
                        if let Some(name) = words.get(at + 1) {
                            test_children.insert(name.to_string());
                        }
                    }
                    break;
                }
                "{" if depth == 0 => {
                    let mut braces = 1;
                    while let Some(t) = toks.get(i) {
                        i += 1;
                        match t.text.as_str() {
                            "{" => braces += 1,
                            "}" => {
                                braces -= 1;
                                if braces == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    (out, test_children)
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// A path found in the source: its segments, the name it binds (last segment or `as`
/// alias), whether it sits in a `use` item and whether that item is `pub`, and its line.
#[derive(Debug, Clone)]
struct FoundPath {
    segments: Vec<String>,
    binds: String,
    in_use: bool,
    public: bool,
    line: usize,
}

/// Parses `ident (:: (ident | {group} | *))*` at `toks[*i]` with `prefix` before it.
fn parse_path(
    toks: &[Token],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, String)>,
) {
    let mut segs = prefix;
    while let Some(t) = toks.get(*i) {
        if t.text == "{" {
            *i += 1;
            loop {
                match toks.get(*i).map(|t| t.text.as_str()) {
                    Some("}") => {
                        *i += 1;
                        break;
                    }
                    Some(",") => *i += 1,
                    Some("self") => {
                        *i += 1;
                        let name = alias(toks, i)
                            .unwrap_or_else(|| segs.last().cloned().unwrap_or_default());
                        out.push((segs.clone(), name));
                    }
                    Some(s) if is_ident(s) => parse_path(toks, i, segs.clone(), out),
                    Some(_) => *i += 1,
                    None => break,
                }
            }
            return;
        }
        if t.text == "*" {
            *i += 1;
            segs.push("*".into());
            out.push((segs, "*".into()));
            return;
        }
        if !is_ident(&t.text) {
            break;
        }
        segs.push(t.text.clone());
        *i += 1;
        if toks.get(*i).is_some_and(|t| t.text == "::") {
            *i += 1;
            continue;
        }
        break;
    }
    let name = alias(toks, i).unwrap_or_else(|| segs.last().cloned().unwrap_or_default());
    if !segs.is_empty() {
        out.push((segs, name));
    }
}

fn alias(toks: &[Token], i: &mut usize) -> Option<String> {
    if toks.get(*i).is_some_and(|t| t.text == "as") {
        let name = toks.get(*i + 1).map(|t| t.text.clone());
        *i += 2;
        return name;
    }
    None
}

/// Every multi-segment path and every `use` of the token stream.
fn paths(toks: &[Token]) -> Vec<FoundPath> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let after_colons = i > 0 && toks[i - 1].text == "::";
        if t.text == "use" {
            let public = i > 0 && (toks[i - 1].text == "pub" || toks[i - 1].text == ")");
            let line = t.line;
            i += 1;
            if toks.get(i).is_some_and(|t| t.text == "::") {
                i += 1;
            }
            let mut out = Vec::new();
            parse_path(toks, &mut i, Vec::new(), &mut out);
            for (segments, binds) in out {
                found.push(FoundPath {
                    segments,
                    binds,
                    in_use: true,
                    public,
                    line,
                });
            }
        } else if is_ident(&t.text)
            && !after_colons
            && toks.get(i + 1).is_some_and(|n| n.text == "::")
        {
            let line = t.line;
            let mut out = Vec::new();
            parse_path(toks, &mut i, Vec::new(), &mut out);
            for (segments, binds) in out {
                found.push(FoundPath {
                    segments,
                    binds,
                    in_use: false,
                    public: false,
                    line,
                });
            }
        } else {
            i += 1;
        }
    }
    found
}

/// One library file, scanned.
#[derive(Clone)]
struct Scanned {
    rel: String,
    module: Vec<String>,
    paths: Vec<FoundPath>,
    test_children: BTreeSet<String>,
}

/// The library's module tree: module path → file index.
struct Crate {
    files: Vec<Scanned>,
    modules: BTreeMap<Vec<String>, usize>,
}

fn module_path(rel_to_src: &str) -> Vec<String> {
    let trimmed = rel_to_src.trim_end_matches(".rs");
    let mut segs: Vec<String> = trimmed.split('/').map(String::from).collect();
    if segs.last().is_some_and(|s| s == "mod" || s == "lib") {
        segs.pop();
    }
    segs
}

fn scan_crate() -> Crate {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut scanned = Vec::new();
    for file in files.iter().filter(|f| !f.starts_with(src.join("bin"))) {
        let source = std::fs::read_to_string(file).unwrap();
        let (toks, test_children) = without_tests(tokens(&strip_literals(&source)));
        let rel_src = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        scanned.push(Scanned {
            rel: rel(file),
            module: module_path(&rel_src),
            paths: paths(&toks),
            test_children,
        });
    }
    // Files of test-only modules (`#[cfg(test)] mod tests;`) are tests.
    let test_modules: BTreeSet<Vec<String>> = scanned
        .iter()
        .flat_map(|s| {
            s.test_children
                .iter()
                .map(|c| [s.module.clone(), vec![c.clone()]].concat())
        })
        .collect();
    scanned.retain(|s| !test_modules.iter().any(|t| s.module.starts_with(t)));
    let modules = scanned
        .iter()
        .enumerate()
        .map(|(i, s)| (s.module.clone(), i))
        .collect();
    Crate {
        files: scanned,
        modules,
    }
}

impl Crate {
    /// The absolute module path `segments` means in `file` (`None`: another crate, a type's
    /// associated item, a local name).
    fn absolute(&self, file: usize, segments: &[String]) -> Option<Vec<String>> {
        let here = &self.files[file].module;
        let first = segments.first()?;
        let mut base = here.clone();
        let mut rest = segments;
        match first.as_str() {
            "crate" => {
                base.clear();
                rest = &segments[1..];
            }
            "self" => rest = &segments[1..],
            "super" => {
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
            }
            _ => {
                let child = [here.clone(), vec![first.clone()]].concat();
                if !self.modules.contains_key(&child) {
                    // A name brought in by a `use` of this file.
                    let bound = self.files[file]
                        .paths
                        .iter()
                        .find(|p| p.in_use && p.binds == *first && p.segments.len() > 1)?;
                    if bound.segments == segments {
                        return None;
                    }
                    let target = self.absolute(file, &bound.segments)?;
                    return Some([target, segments[1..].to_vec()].concat());
                }
            }
        }
        Some([base, rest.to_vec()].concat())
    }

    /// The file that defines what `absolute` names, following `pub use` re-exports.
    fn resolve(&self, absolute: &[String], depth: usize) -> Option<usize> {
        let (len, &file) = (0..=absolute.len())
            .rev()
            .find_map(|n| self.modules.get(&absolute[..n]).map(|f| (n, f)))?;
        let rest = &absolute[len..];
        if depth < 8 {
            if let Some(name) = rest.first() {
                if let Some(export) = self.files[file]
                    .paths
                    .iter()
                    .find(|p| p.in_use && p.public && p.binds == *name)
                {
                    if let Some(target) = self.absolute(file, &export.segments) {
                        let target = [target, rest[1..].to_vec()].concat();
                        if let Some(to) = self.resolve(&target, depth + 1) {
                            return Some(to);
                        }
                    }
                }
            }
        }
        Some(file)
    }

    /// Each file's direct dependencies on other files, with the line that makes each.
    fn edges(&self) -> Vec<BTreeMap<usize, usize>> {
        (0..self.files.len())
            .map(|f| {
                let mut to = BTreeMap::new();
                for p in &self.files[f].paths {
                    if p.segments.last().is_some_and(|s| s == "*") && !p.in_use {
                        continue;
                    }
                    let segs: Vec<String> =
                        p.segments.iter().filter(|s| *s != "*").cloned().collect();
                    let Some(abs) = self.absolute(f, &segs) else {
                        continue;
                    };
                    if let Some(g) = self.resolve(&abs, 0) {
                        if g != f {
                            to.entry(g).or_insert(p.line);
                        }
                    }
                }
                to
            })
            .collect()
    }
}

/// Every never of the two tables, checked over every chain of module references.
#[test]
fn no_part_reaches_what_it_must_never_use_directly_or_indirectly() {
    let krate = scan_crate();
    let edges = krate.edges();
    let parts: Vec<Option<&str>> = krate.files.iter().map(|f| part_of(&f.rel)).collect();
    let unassigned: Vec<&str> = krate
        .files
        .iter()
        .zip(&parts)
        .filter(|(_, p)| p.is_none())
        .map(|(f, _)| f.rel.as_str())
        .collect();
    assert!(
        unassigned.is_empty(),
        "files in no part of PARTS: {unassigned:?}"
    );
    let edge_count: usize = edges.iter().map(BTreeMap::len).sum();
    assert!(
        krate.files.len() >= 150 && edge_count >= 500,
        "{} files, {edge_count} references: the scan lost its way",
        krate.files.len()
    );
    let nevers = nevers();
    for (from, to, _) in &nevers {
        for name in [from, to] {
            assert!(
                PARTS.iter().any(|(p, _, _)| p == name),
                "never {from} → {to}: no part `{name}`"
            );
        }
    }
    // Per broken never: how many files break it, and the shortest chain that does.
    let mut broken: BTreeMap<(String, String), (usize, Vec<String>, String)> = BTreeMap::new();
    for start in 0..krate.files.len() {
        let from = parts[start].unwrap();
        let forbidden: Vec<&(String, String, String)> =
            nevers.iter().filter(|(f, _, _)| f == from).collect();
        if forbidden.is_empty() {
            continue;
        }
        // Breadth first: the shortest chain to each file.
        let mut came_from: BTreeMap<usize, (usize, usize)> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        let mut seen = BTreeSet::from([start]);
        while let Some(f) = queue.pop_front() {
            for (&g, &line) in &edges[f] {
                if seen.insert(g) {
                    came_from.insert(g, (f, line));
                    queue.push_back(g);
                }
            }
        }
        for &reached in &seen {
            let to = parts[reached].unwrap();
            let Some((_, _, why)) = forbidden.iter().find(|(_, t, _)| t == to) else {
                continue;
            };
            let mut chain = vec![krate.files[reached].rel.clone()];
            let mut at = reached;
            while let Some(&(prev, line)) = came_from.get(&at) {
                chain.push(format!("{}:{line}", krate.files[prev].rel));
                at = prev;
            }
            chain.reverse();
            let entry = broken.entry((from.to_string(), to.to_string())).or_insert((
                0,
                Vec::new(),
                why.clone(),
            ));
            entry.0 += 1;
            if entry.1.is_empty() || chain.len() < entry.1.len() {
                entry.1 = chain;
            }
        }
    }
    let broken: Vec<String> = broken
        .iter()
        .map(|((from, to), (n, chain, why))| {
            format!(
                "{from} → {to} ({why}), {n} paths, e.g. {}",
                chain.join(" → ")
            )
        })
        .collect();
    assert!(
        broken.is_empty(),
        "{} broken:\n{}",
        broken.len(),
        broken.join("\n")
    );
}

/// The resolver on a made-up module tree: grouped and aliased uses, `super`, child modules,
/// a name brought in by `use`, re-exports followed to their source; comments, strings and
/// tests ignored.
#[test]
fn the_scanner_resolves_uses_reexports_and_skips_comments_strings_and_tests() {
    let sources = [
        ("src/lib.rs", "pub mod a; pub mod b; pub mod c; pub use c::deep::Thing;"),
        (
            "src/a.rs",
            "use crate::{b::{self as bee, x}, Thing};\nfn f() { bee::y(); let s = \"crate::c\"; } // crate::c\n#[cfg(test)]\nmod tests { use crate::c; }",
        ),
        ("src/b/mod.rs", "mod inner; pub use inner::Item; pub fn y() { super::c::z(); }"),
        ("src/b/inner.rs", "pub struct Item;"),
        ("src/c/mod.rs", "pub mod deep; fn g() { crate::b::Item; }"),
        ("src/c/deep.rs", "pub struct Thing; #[cfg(test)] mod tests;"),
        ("src/c/deep/tests.rs", "use crate::a;"),
    ];
    let mut files: Vec<Scanned> = sources
        .iter()
        .map(|(path, text)| {
            let (toks, test_children) = without_tests(tokens(&strip_literals(text)));
            Scanned {
                rel: path.to_string(),
                module: module_path(path.trim_start_matches("src/")),
                paths: paths(&toks),
                test_children,
            }
        })
        .collect();
    assert_eq!(
        files[5].test_children,
        BTreeSet::from(["tests".to_string()])
    );
    files.pop();
    let modules = files
        .iter()
        .enumerate()
        .map(|(i, s)| (s.module.clone(), i))
        .collect();
    let krate = Crate { files, modules };
    let named = |f: usize| -> BTreeSet<&str> {
        krate.edges()[f]
            .keys()
            .map(|&g| krate.files[g].rel.as_str())
            .collect()
    };
    assert_eq!(named(1), BTreeSet::from(["src/b/mod.rs", "src/c/deep.rs"]));
    assert_eq!(named(2), BTreeSet::from(["src/b/inner.rs", "src/c/mod.rs"]));
    assert_eq!(named(4), BTreeSet::from(["src/b/inner.rs"]));
    // b/mod.rs → c/mod.rs → b/inner.rs (through b's re-export, which is no dependency of
    // b/mod.rs itself): no circle. inner.rs calling into b/mod.rs closes one.
    assert!(file_cycles(&krate).is_empty());
    let mut circled = Crate {
        files: krate.files.clone(),
        modules: krate.modules.clone(),
    };
    let (toks, _) = without_tests(tokens(&strip_literals(
        "pub struct Item; fn h() { super::y(); }",
    )));
    circled.files[3].paths = paths(&toks);
    assert_eq!(
        file_cycles(&circled),
        [vec!["src/b/inner.rs", "src/b/mod.rs", "src/c/mod.rs"]]
    );
    assert_eq!(part_of("src/format/study.rs"), Some("StudyDoc"));
    assert_eq!(part_of("src/format/text/parse.rs"), Some("Text"));
    assert_eq!(part_of("src/study/plan.rs"), Some("Study"));
    assert_eq!(part_of("src/sim/serve.rs"), Some("SimServe"));
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

/// Every string literal of `source` outside comments, with its line: raw and plain strings
/// (byte strings too), their text as written.
fn string_literals(source: &str) -> Vec<(usize, String)> {
    let c: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let step = |ch: char, i: &mut usize, line: &mut usize| {
        if ch == '\n' {
            *line += 1;
        }
        *i += 1;
    };
    while i < c.len() {
        let ident_before = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    step(c[i], &mut i, &mut line);
                }
            }
        } else if c[i] == 'r' && !ident_before && matches!(c.get(i + 1), Some('"') | Some('#')) && {
            let mut j = i + 1;
            while c.get(j) == Some(&'#') {
                j += 1;
            }
            c.get(j) == Some(&'"')
        } {
            i += 1;
            let mut hashes = 0;
            while c[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            let (start, mut text) = (line, String::new());
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                    i += hashes + 1;
                    break;
                }
                text.push(c[i]);
                step(c[i], &mut i, &mut line);
            }
            out.push((start, text));
        } else if c[i] == '"' {
            i += 1;
            let (start, mut text) = (line, String::new());
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    text.push(c[i]);
                    step(c[i], &mut i, &mut line);
                }
                if i < c.len() {
                    text.push(c[i]);
                    step(c[i], &mut i, &mut line);
                }
            }
            i += 1;
            out.push((start, text));
        } else if c[i] == '\'' && c.get(i + 1) == Some(&'\\') {
            i += 2;
            while i < c.len() && c[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && c.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            step(c[i], &mut i, &mut line);
        }
    }
    out
}

/// Every `--flag` in `text` (two dashes, then a lowercase letter, not inside a word).
fn named_flags(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    (0..b.len().saturating_sub(2))
        .filter_map(|k| {
            let starts = b[k] == b'-' && b[k + 1] == b'-' && b[k + 2].is_ascii_lowercase();
            let free = k == 0 || !(b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'-');
            (starts && free).then(|| {
                let end = text[k + 2..]
                    .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '-'))
                    .map_or(text.len(), |e| k + 2 + e);
                &text[k..end]
            })
        })
        .collect()
}

/// Library code speaks in values, fields and reasons: no string of it names a `--flag` of
/// the CLI (the binary adds the flag, in `src/bin/servebench/flagged.rs`). The verbs
/// (`src/app/`) and the binary are the CLI's; `format` and the files listed here write or
/// read other tools' command lines (guidellm's, vLLM's engine arguments, `nvidia-smi`'s).
#[test]
fn no_library_string_names_a_cli_flag() {
    const OTHER_TOOLS: &[(&str, &str)] = &[
        (
            "src/profile.rs",
            "guidellm's command line, as the seed printed it",
        ),
        ("src/sim/engine_args.rs", "vLLM's engine arguments"),
        ("src/observe/gpu.rs", "nvidia-smi's arguments"),
        (
            "src/study/explain.rs",
            "the study file's documentation, which names `servebench` flags",
        ),
    ];
    // vLLM's engine arguments, which the simulator reads as the values of `--engine-args`
    // and of a study's `flags`, and the example server's `--config`.
    const VLLM_FLAGS: &[&str] = &[
        "--reasoning-parser",
        "--max-model-len",
        "--max-cudagraph-capture-size",
        "--max-num-batched-tokens",
        "--performance-mode",
        "--enable-prefix-caching",
        "--speculative-config",
        "--config",
    ];
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut found = Vec::new();
    for file in files {
        let r = rel(&file);
        let cli = ["src/app/", "src/bin/", "src/format/"]
            .iter()
            .any(|p| r.starts_with(p));
        if cli || r.ends_with("/tests.rs") || OTHER_TOOLS.iter().any(|(f, _)| *f == r) {
            continue;
        }
        let source = std::fs::read_to_string(&file).unwrap();
        // Unit tests may spell flags.
        let code = source
            .find("#[cfg(test)]\nmod tests")
            .map_or(source.as_str(), |k| &source[..k]);
        for (line, text) in string_literals(code) {
            for flag in named_flags(&text) {
                if !VLLM_FLAGS.contains(&flag) {
                    found.push(format!("{r}:{line}: {flag} in \"{text}\""));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library strings that name a flag (say the value; let src/bin/servebench/flagged.rs \
         name the flag):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_flag_scanner_finds_flags_in_strings_only() {
    let src = "// \"--comment\"\nfn f() { let a = \"x --slice: y\"; let b = r#\"--raw\"#; let c = \"a--b 10 -- c\"; }";
    let lits = string_literals(src);
    assert_eq!(lits.len(), 3, "{lits:?}");
    assert_eq!(lits[0].0, 2);
    assert_eq!(named_flags(&lits[0].1), ["--slice"]);
    assert_eq!(named_flags(&lits[1].1), ["--raw"]);
    assert!(named_flags(&lits[2].1).is_empty());
    assert_eq!(
        named_flags("--max-model-len=1 --tokenizer x"),
        ["--max-model-len", "--tokenizer"]
    );
}

/// The circles of imports between files (Tarjan's strongly connected components of the
/// file graph, re-exports left out: a module that re-exports its child's items does not
/// depend on them). Each circle as its files' paths.
fn file_cycles(krate: &Crate) -> Vec<Vec<String>> {
    let n = krate.files.len();
    let edges: Vec<Vec<usize>> = (0..n)
        .map(|f| {
            let mut to = BTreeSet::new();
            for p in krate.files[f]
                .paths
                .iter()
                .filter(|p| !(p.in_use && p.public))
            {
                let segs: Vec<String> = p.segments.iter().filter(|s| *s != "*").cloned().collect();
                if let Some(g) = krate.absolute(f, &segs).and_then(|a| krate.resolve(&a, 0)) {
                    if g != f {
                        to.insert(g);
                    }
                }
            }
            to.into_iter().collect()
        })
        .collect();
    // Tarjan, iteratively.
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut next, mut stack, mut out) = (0, Vec::new(), Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut k)) = work.last_mut() {
            if *k == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = edges[v].get(*k) {
                *k += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut circle = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    circle.push(krate.files[w].rel.clone());
                    if w == v {
                        break;
                    }
                }
                if circle.len() > 1 {
                    circle.sort();
                    out.push(circle);
                }
            }
        }
    }
    out.sort();
    out
}

/// The import circles between files not broken yet, each as its files (sorted). A ratchet:
/// no new circle may appear and none of these may grow; one that is broken must leave this
/// list (the test says so), until it is empty.
const KNOWN_CYCLES: &[&[&str]] = &[
    &[
        "src/app/study.rs",
        "src/app/study/launched.rs",
        "src/app/study/sharded.rs",
    ],
    &[
        "src/driver/conversations.rs",
        "src/driver/datasets.rs",
        "src/driver/mod.rs",
        "src/driver/tokenized.rs",
        "src/driver/workload.rs",
    ],
    &[
        "src/http/client/admin.rs",
        "src/http/client/connection.rs",
        "src/http/client/mod.rs",
        "src/http/client/prompt.rs",
        "src/http/client/stream.rs",
        "src/http/client/wire.rs",
        "src/http/prepare.rs",
    ],
    &[
        "src/http/server/engine_loop.rs",
        "src/http/server/handoff.rs",
        "src/http/server/mod.rs",
        "src/http/server/openai.rs",
        "src/http/server/options.rs",
        "src/http/server/routes.rs",
        "src/http/server/served.rs",
        "src/http/server/stream.rs",
        "src/http/timeline.rs",
    ],
    &[
        "src/load/error.rs",
        "src/load/mod.rs",
        "src/load/sniff.rs",
        "src/load/sweep.rs",
        "src/load/validate.rs",
    ],
    &[
        "src/metrics/fast/figures.rs",
        "src/metrics/fast/mod.rs",
        "src/metrics/fast/peaks.rs",
        "src/metrics/fast/ranks.rs",
        "src/metrics/fast/threads.rs",
        "src/metrics/fast/walk.rs",
        "src/metrics/guidellm.rs",
        "src/metrics/guidellm/events.rs",
        "src/metrics/guidellm/fast.rs",
        "src/metrics/mod.rs",
        "src/metrics/peaks.rs",
        "src/metrics/production.rs",
        "src/metrics/vllm.rs",
    ],
    &[
        "src/sim/config.rs",
        "src/sim/engine.rs",
        "src/sim/engine_args.rs",
        "src/sim/noise.rs",
        "src/sim/run.rs",
    ],
    &[
        "src/study/file.rs",
        "src/study/journal.rs",
        "src/study/merged.rs",
        "src/study/mod.rs",
        "src/study/observe.rs",
        "src/study/plan.rs",
        "src/study/shards.rs",
    ],
];

/// Files import in one direction: no file reaches itself through others' imports (a type
/// two files need lives in the one that owns it). The circles not broken yet are
/// [`KNOWN_CYCLES`]; a new one, or a known one that grew, fails.
#[test]
fn no_new_import_cycles_between_files() {
    let cycles = file_cycles(&scan_crate());
    let known = |c: &Vec<String>| {
        KNOWN_CYCLES
            .iter()
            .any(|k| c.iter().all(|f| k.contains(&f.as_str())))
    };
    let new: Vec<String> = cycles
        .iter()
        .filter(|c| !known(c))
        .map(|c| c.join(" ↔ "))
        .collect();
    assert!(
        new.is_empty(),
        "import circles between files (move the type both need to the file that owns it):\n{}",
        new.join("\n")
    );
    let broken: Vec<String> = KNOWN_CYCLES
        .iter()
        .filter(|k| {
            !cycles
                .iter()
                .any(|c| c.iter().any(|f| k.contains(&f.as_str())))
        })
        .map(|k| k.join(" ↔ "))
        .collect();
    assert!(
        broken.is_empty(),
        "circles broken: take them off KNOWN_CYCLES:\n{}",
        broken.join("\n")
    );
}

/// Inside the crate, paths name the module that owns an item, never the root's re-export
/// of it (`crate::profile::Profile`, not `crate::Profile`): the re-exports are for users,
/// and a path through them hides which module a file really depends on.
#[test]
fn the_crate_imports_from_owning_modules_not_root_reexports() {
    let krate = scan_crate();
    let root = krate
        .files
        .iter()
        .find(|f| f.rel == "src/lib.rs")
        .expect("src/lib.rs");
    let reexported: BTreeSet<&str> = root
        .paths
        .iter()
        .filter(|p| p.in_use && p.public)
        .map(|p| p.binds.as_str())
        .filter(|name| !krate.modules.contains_key(&vec![name.to_string()]))
        .collect();
    assert!(reexported.contains("Profile") && reexported.contains("Convention"));
    let found: Vec<String> = krate
        .files
        .iter()
        .filter(|f| f.rel != "src/lib.rs")
        .flat_map(|f| {
            f.paths
                .iter()
                .filter(|p| p.segments.len() >= 2 && p.segments[0] == "crate")
                .filter(|p| reexported.contains(p.segments[1].as_str()))
                .map(move |p| format!("{}:{}: {}", f.rel, p.line, p.segments.join("::")))
        })
        .collect();
    assert!(
        found.is_empty(),
        "paths through the root's re-exports (name the owning module):\n{}",
        found.join("\n")
    );
}
