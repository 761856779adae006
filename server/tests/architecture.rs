//! The layout's promises (DESIGN §1), checked on every test run so they stay
//! true:
//!
//! - gRPC handlers validate, convert and call the engine: no file under
//!   `server/src/grpc/` names `crate::store`;
//! - no import circles: no file of `server/src` imports a file that imports
//!   it back (a `use crate::…` or a `crate::…` path in code; a module's
//!   `mod.rs` is the file of that module);
//! - no source file of the workspace is longer than [`MAX_LINES`].

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// TEMPORARY, to be emptied once the other branches of issue 26 are merged:
/// files (or folders, ending in `/`) that other engineers are splitting or
/// reworking right now. An offence that involves one of them is not
/// reported. Paths are relative to the workspace's root.
const PENDING_ON_OTHER_BRANCHES: &[&str] = &[];

/// The most lines a source file may have: past it, a file does more than
/// one thing.
const MAX_LINES: usize = 900;

/// The folders whose source files are held to [`MAX_LINES`], relative to
/// the workspace's root (`tests/tests`, the end-to-end tests, are not).
const SOURCE_DIRS: &[&str] = &["server/src", "client/src", "src", "tests/src"];

#[test]
fn grpc_handlers_never_name_the_store() {
    let sources = server_sources();
    let offenders: Vec<String> = sources
        .files
        .iter()
        .filter(|file| file.starts_with("grpc/"))
        .filter(|file| {
            sources.imports[*file]
                .iter()
                .any(|path| path.first().is_some_and(|m| m == "store"))
        })
        .map(|file| format!("server/src/{file}"))
        .filter(|path| !pending(path))
        .collect();
    assert!(
        offenders.is_empty(),
        "gRPC handlers call the engine, never the store; these files under server/src/grpc/ \
         use crate::store:\n  {}",
        offenders.join("\n  ")
    );
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let sources = server_sources();
    let graph = sources.file_graph();
    let mut circles = Vec::new();
    for (file, imported) in &graph {
        for other in imported {
            let back = graph.get(other).is_some_and(|theirs| theirs.contains(file));
            if back && file < other {
                let (a, b) = (format!("server/src/{file}"), format!("server/src/{other}"));
                if !pending(&a) && !pending(&b) {
                    circles.push(format!("{a} <-> {b}"));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "import circles (each file imports the other; a lower layer reaches a higher one only \
         through a trait it defines):\n  {}",
        circles.join("\n  ")
    );
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let root = workspace_root();
    let mut offenders = Vec::new();
    for dir in SOURCE_DIRS {
        for file in rust_files(&root.join(dir)) {
            let relative = relative_path(&root, &file);
            if is_test_file(&relative) || pending(&relative) {
                continue;
            }
            let lines = read(&file).lines().count();
            if lines > MAX_LINES {
                offenders.push(format!("{relative}: {lines} lines"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "source files longer than {MAX_LINES} lines (split each into modules that do one \
         thing):\n  {}",
        offenders.join("\n  ")
    );
}

#[test]
fn use_trees_are_read_path_by_path() {
    let paths = crate_paths(
        "use crate::domain::{Memory, episode::{Episode, Step}};\n\
         use crate::store::Store as _;\n\
         fn f() { crate::engine::search::run(); }",
    );
    let joined: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "domain::Memory",
            "domain::episode::Episode",
            "domain::episode::Step",
            "store::Store",
            "engine::search::run",
        ]
    );
}

#[test]
fn comments_strings_and_macros_name_no_import() {
    let paths = crate_paths(
        "//! See [`crate::store`].\n\
         /* crate::index */\n\
         const A: &str = \"crate::grpc\";\n\
         const B: &str = r#\"crate::engine\"#;\n\
         const C: char = '\"'; fn f<'a>(x: &'a str) {}\n\
         macro_rules! m { () => { $crate::jobs::run() } }",
    );
    assert!(paths.is_empty(), "{paths:?}");
}

/// Whether `path` (relative to the workspace's root) is on
/// [`PENDING_ON_OTHER_BRANCHES`].
fn pending(path: &str) -> bool {
    PENDING_ON_OTHER_BRANCHES
        .iter()
        .any(|entry| path == *entry || (entry.ends_with('/') && path.starts_with(entry)))
}

/// Test code, which the length limit leaves alone: a `tests.rs`, a
/// `*_tests.rs`, or a file in a `tests` folder.
fn is_test_file(relative: &str) -> bool {
    let mut parts = relative.split('/').skip(1);
    let name = relative.rsplit('/').next().unwrap_or(relative);
    name == "tests.rs" || name.ends_with("_tests.rs") || parts.any(|part| part == "tests")
}

/// The server crate's files (relative to `server/src`) and the `crate::`
/// paths each names.
struct Sources {
    files: BTreeSet<String>,
    imports: BTreeMap<String, Vec<Vec<String>>>,
}

impl Sources {
    /// Which files each file imports: a path names the file of its longest
    /// prefix that is a module with a file of its own.
    fn file_graph(&self) -> BTreeMap<String, BTreeSet<String>> {
        self.imports
            .iter()
            .map(|(file, paths)| {
                let imported = paths
                    .iter()
                    .filter_map(|path| self.file_of(path))
                    .filter(|imported| imported != file && imported != "lib.rs")
                    .collect();
                (file.clone(), imported)
            })
            .collect()
    }

    fn file_of(&self, path: &[String]) -> Option<String> {
        let mut found = None;
        for end in 1..=path.len() {
            let module = path[..end].join("/");
            let file = [format!("{module}.rs"), format!("{module}/mod.rs")]
                .into_iter()
                .find(|candidate| self.files.contains(candidate));
            match file {
                Some(file) => found = Some(file),
                None => break,
            }
        }
        found
    }
}

fn server_sources() -> Sources {
    let src = workspace_root().join("server/src");
    let mut files = BTreeSet::new();
    let mut imports = BTreeMap::new();
    for file in rust_files(&src) {
        let relative = relative_path(&src, &file);
        imports.insert(relative.clone(), crate_paths(&read(&file)));
        files.insert(relative);
    }
    Sources { files, imports }
}

/// Every `crate::…` path the code names, after `crate::`: each path of a
/// `use crate::…` tree, and each path written out elsewhere.
fn crate_paths(source: &str) -> Vec<Vec<String>> {
    let code = without_comments_and_literals(source);
    let mut paths = Vec::new();
    let mut rest_of_code = String::with_capacity(code.len());
    let mut at = 0;
    while let Some(found) = find_word(&code, "use", at) {
        let after_use = code[found + 3..].trim_start();
        // `impl Trait + use<'a>` captures; it imports nothing.
        if after_use.starts_with('<') {
            rest_of_code.push_str(&code[at..found + 3]);
            at = found + 3;
            continue;
        }
        let start = code.len() - after_use.len();
        rest_of_code.push_str(&code[at..found]);
        let end = code[start..].find(';').map_or(code.len(), |i| start + i);
        if let Some(tree) = code[start..end].strip_prefix("crate::") {
            expand_tree(tree, &mut Vec::new(), &mut paths);
        }
        at = end;
    }
    rest_of_code.push_str(&code[at..]);
    let mut from = 0;
    while let Some(found) = find_word(&rest_of_code, "crate", from) {
        from = found + "crate".len();
        let mut path = Vec::new();
        let mut tail = &rest_of_code[from..];
        while let Some(next) = tail.strip_prefix("::") {
            let segment: String = next
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if segment.is_empty() {
                break;
            }
            tail = &next[segment.len()..];
            path.push(segment);
        }
        if !path.is_empty() {
            paths.push(path);
        }
    }
    paths
}

/// Adds the paths of a use tree (`a::{b, c::d as e}`) under `prefix`.
fn expand_tree(tree: &str, prefix: &mut Vec<String>, paths: &mut Vec<Vec<String>>) {
    for item in split_top_level(tree) {
        let item = item.trim();
        let (head, group) = match item.find('{') {
            Some(open) => (
                &item[..open],
                Some(&item[open + 1..item.rfind('}').unwrap_or(item.len())]),
            ),
            None => (item.split(" as ").next().unwrap_or(item), None),
        };
        let segments: Vec<String> = head
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty() && *s != "self" && *s != "*")
            .map(str::to_owned)
            .collect();
        let depth = prefix.len();
        prefix.extend(segments);
        match group {
            Some(group) => expand_tree(group, prefix, paths),
            None if !prefix.is_empty() => paths.push(prefix.clone()),
            None => {}
        }
        prefix.truncate(depth);
    }
}

/// `tree`'s items separated by the commas outside braces.
fn split_top_level(tree: &str) -> Vec<&str> {
    let (mut items, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in tree.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(&tree[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&tree[start..]);
    items
}

/// Where `word` next occurs from `from` as a word of its own (not part of
/// an identifier, nor `$crate`).
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut at = from;
    while let Some(i) = text[at..].find(word) {
        let start = at + i;
        let end = start + word.len();
        let before = text[..start].chars().next_back().is_some_and(is_ident);
        let after = text[end..].chars().next().is_some_and(is_ident);
        if !before && !after {
            return Some(start);
        }
        at = end;
    }
    None
}

/// `source` with comments removed and string and character literals
/// emptied, so that only code names paths.
fn without_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some((hashes, body_from)) = raw_string_at(&chars, i) {
            let closing: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body: String = chars[body_from..].iter().collect();
            let body_chars = body
                .find(&closing)
                .map_or(body.len(), |end| body[..end].chars().count());
            out.push_str("\"\"");
            i = body_from + body_chars + closing.chars().count();
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // The backslash and the character it escapes, then up to the quote.
            i += 3;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            out.push_str("' '");
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// At a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at
/// `i`: how many `#` close it, and where its text starts.
fn raw_string_at(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let previous_is_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    let hashes_from = match (chars[i], chars.get(i + 1)) {
        ('r', _) => i + 1,
        ('b', Some('r')) => i + 2,
        _ => return None,
    };
    let hashes = chars[hashes_from..]
        .iter()
        .take_while(|&&h| h == '#')
        .count();
    let quote = hashes_from + hashes;
    (!previous_is_ident && chars.get(quote) == Some(&'"')).then_some((hashes, quote + 1))
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the server crate sits in the workspace")
        .to_path_buf()
}

/// The `.rs` files under `dir`, in a stable order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let entries = fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("cannot list {}: {e}", folder.display()));
        for entry in entries {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// `file` relative to `base`, with `/` between folders.
fn relative_path(base: &Path, file: &Path) -> String {
    let relative = file.strip_prefix(base).expect("a file under its folder");
    relative
        .components()
        .map(|part| part.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn read(file: &Path) -> String {
    fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
}
