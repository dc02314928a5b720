//! `docs/reliability.md` backs every guarantee with the tests named beside it; this test holds
//! the page to that: every test it names exists, as a `#[test]` function of the file named, and
//! no test file is named without a test.
//!
//! The page's references are inline code spans: `` `file.rs: first_test` `` (the names may be
//! comma-separated in the span and may continue on the next line), followed by more names in
//! spans of their own, separated by commas only: `` `file.rs: a`, `b`, `c` ``. A file name
//! alone is a test of `cli/tests/` or `tests/tests/` (the page says so); any other file is
//! given with its path from the workspace root. A span that names a file under a `tests/`
//! directory and no test in it is refused: it points at a file, not at what proves the claim.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Where a file name without a path is looked for.
const BARE_NAME_DIRS: [&str; 2] = ["cli/tests", "tests/tests"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the CLI crate sits in the workspace").to_path_buf()
}

/// One test the page names, with the line it is named on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    file: String,
    test: String,
    line: usize,
}

/// An inline code span: its text, the text between it and the previous span, its line.
struct Span<'a> {
    text: &'a str,
    before: &'a str,
    line: usize,
}

/// The page with fenced code blocks blanked out (their lines kept, so line numbers hold).
fn without_fences(doc: &str) -> String {
    let mut fenced = false;
    let lines: Vec<&str> = doc
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                ""
            } else if fenced {
                ""
            } else {
                l
            }
        })
        .collect();
    lines.join("\n")
}

fn spans(text: &str) -> Vec<Span<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    let mut consumed = 0;
    let mut before_start = 0;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else { break };
        let start = consumed + open + 1;
        let line = 1 + text[..start].matches('\n').count();
        out.push(Span { text: &text[start..start + len], before: &text[before_start..consumed + open], line });
        consumed = start + len + 1;
        before_start = consumed;
        rest = &text[consumed..];
    }
    out
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_rust_path(s: &str) -> bool {
    s.ends_with(".rs") && s.chars().all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c))
}

/// `file.rs: a, b` → the file and its names; `None` when the span is not a reference.
fn reference(span: &str) -> Option<(&str, Vec<&str>)> {
    let (file, names) = span.split_once(':')?;
    if !is_rust_path(file) {
        return None;
    }
    let names: Vec<&str> = names.split(',').map(str::trim).collect();
    names.iter().all(|n| is_identifier(n)).then_some((file, names))
}

/// Every test the page names, and every span that names a test file without a test.
fn references(doc: &str) -> (Vec<Reference>, Vec<(usize, String)>) {
    let text = without_fences(doc);
    let mut refs = Vec::new();
    let mut bare = Vec::new();
    let mut current: Option<&str> = None;
    for span in spans(&text) {
        if span.before.trim() != "," {
            current = None;
        }
        if let Some((file, names)) = reference(span.text) {
            current = Some(file);
            refs.extend(names.into_iter().map(|n| Reference { file: file.into(), test: n.into(), line: span.line }));
        } else if let (Some(file), true) = (current, is_identifier(span.text)) {
            refs.push(Reference { file: file.into(), test: span.text.into(), line: span.line });
        } else {
            current = None;
            // A name without a path is a test file by the page's convention.
            let test_file =
                !span.text.contains('/') || Path::new(span.text).components().any(|c| c.as_os_str() == "tests");
            if is_rust_path(span.text) && test_file {
                bare.push((span.line, span.text.to_owned()));
            }
        }
    }
    (refs, bare)
}

/// The file a reference names, or why it names none.
fn locate(root: &Path, file: &str) -> Result<PathBuf, String> {
    if file.contains('/') {
        let path = root.join(file);
        return if path.is_file() { Ok(path) } else { Err(format!("there is no {file}")) };
    }
    let found: Vec<PathBuf> = BARE_NAME_DIRS.iter().map(|d| root.join(d).join(file)).filter(|p| p.is_file()).collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("there is no {file} in {}; give its path", BARE_NAME_DIRS.join(" or "))),
        _ => Err(format!("{file} is in both {}; give its path", BARE_NAME_DIRS.join(" and "))),
    }
}

/// True when `source` defines `fn name` under a `#[test]` attribute (among the attributes and
/// comments right above it: `#[ignore]`, doc comments, a proptest block's `#[test]`).
fn defines_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    lines.iter().enumerate().any(|(i, line)| {
        let Some(rest) = line.trim_start().strip_prefix("fn ") else { return false };
        let Some(after) = rest.strip_prefix(name) else { return false };
        if !after.trim_start().starts_with(['(', '<']) {
            return false;
        }
        lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
            .any(|l| l.starts_with("#[test"))
    })
}

/// What is wrong with the page's references, one line each.
fn problems(root: &Path, doc: &str) -> (usize, Vec<String>) {
    let (refs, bare) = references(doc);
    let mut out: Vec<String> = bare
        .into_iter()
        .map(|(line, file)| format!("line {line}: `{file}` names a test file but no test in it"))
        .collect();
    let unique: BTreeSet<(String, String)> = refs.iter().map(|r| (r.file.clone(), r.test.clone())).collect();
    for r in &refs {
        match locate(root, &r.file) {
            Err(why) => out.push(format!("line {}: `{}: {}`: {why}", r.line, r.file, r.test)),
            Ok(path) => {
                let source = std::fs::read_to_string(&path).unwrap_or_default();
                if !defines_test(&source, &r.test) {
                    let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                    out.push(format!("line {}: {shown} has no test `{}`", r.line, r.test));
                }
            }
        }
    }
    (unique.len(), out)
}

#[test]
fn every_test_the_reliability_page_names_exists() {
    let root = workspace();
    let doc = std::fs::read_to_string(root.join("docs/reliability.md")).expect("docs/reliability.md");
    let (named, problems) = problems(&root, &doc);
    assert!(problems.is_empty(), "docs/reliability.md:\n{}", problems.join("\n"));
    // The page names tests for its guarantees and every fault: far more than a handful. A
    // parser that found none would pass the loop above without checking anything.
    assert!(named > 50, "only {named} tests found on the page: is the reference format still the one parsed here?");
}

/// The reader itself, on a page of known references.
#[test]
fn the_reference_reader_follows_the_pages_format() {
    let doc = "Guarantee (`a.rs: first_test`,\n   `second_test`; `x/tests/b.rs:\n   third, fourth`) and \
               `not_a_test` after a word; `c.rs: t` in the real kernel, `d/tests/e.rs`, `f/src/g.rs`.\n\
               ```sh\n`h.rs: fenced`\n```\n`i.rs`";
    let (refs, bare) = references(doc);
    let got: Vec<(&str, &str, usize)> = refs.iter().map(|r| (r.file.as_str(), r.test.as_str(), r.line)).collect();
    assert_eq!(
        got,
        [
            ("a.rs", "first_test", 1),
            ("a.rs", "second_test", 2),
            ("x/tests/b.rs", "third", 2),
            ("x/tests/b.rs", "fourth", 2),
            ("c.rs", "t", 3)
        ]
    );
    assert_eq!(bare, [(3, "d/tests/e.rs".to_owned()), (7, "i.rs".to_owned())]);

    let source = "#[test]\n#[ignore = \"guest\"]\nfn guest_only() {}\nfn helper() {}\n\
                  proptest! {\n    /// doc\n    #[test]\n    fn random(x in 0..1) {}\n}\n#[test]\nfn generic<T>() {}";
    for name in ["guest_only", "random", "generic"] {
        assert!(defines_test(source, name), "{name}");
    }
    for name in ["helper", "guest", "rand", "missing"] {
        assert!(!defines_test(source, name), "{name}");
    }
}
