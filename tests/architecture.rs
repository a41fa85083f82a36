//! The module graph: dependencies between top-level modules point one way
//! (source → sample → metrics → score → report, with cli → app on top), as
//! `src/lib.rs` and the code map (docs/maintainers.md) say. Read from the code's own
//! `crate::` paths (test modules excluded); a new edge must be added to
//! `ALLOWED` on purpose, and no edge may close a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each module and the modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("error", &["util"]),
    ("util", &[]),
    ("bsonx", &[]),
    ("model", &["bsonx", "util"]),
    ("targeting", &["model", "bsonx"]),
    ("sample", &["model", "bsonx", "util"]),
    ("propose", &["model", "bsonx", "util"]),
    // sources -> targeting: workload's light read shapes a plain filter from its text with
    // targeting::shapes's one implementation (issue 52), not a second copy.
    ("sources", &["targeting", "model", "bsonx", "util", "error"]),
    ("metrics", &["sample", "targeting", "model", "bsonx", "util"]),
    // rules -> metrics: write_targeting asks metrics::key_updates whether an update changes the key.
    ("rules", &["targeting", "metrics", "model", "util"]),
    ("score", &["rules", "metrics", "model", "util"]),
    ("policy", &["score", "rules", "metrics", "targeting", "model", "util", "error"]),
    // plan -> rules: the plan's failing transactions use write_targeting's verdict (issue 48).
    ("plan", &["rules", "model", "bsonx", "util"]),
    ("report", &["plan", "policy", "rules", "score", "metrics", "model", "util"]),
    ("pipeline", &["sources", "sample", "targeting", "metrics", "rules", "score", "report", "propose", "model", "bsonx", "util", "error"]),
    (
        "app",
        &["pipeline", "plan", "sources", "sample", "metrics", "rules", "score", "policy", "report", "propose", "model", "util", "error"],
    ),
    ("cli", &["app", "report", "model", "util", "error"]),
];

/// `#[macro_export]` macros and the module that defines each.
const MACROS: &[(&str, &str)] = &[("labels", "util")];

fn top_module(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?;
    match first {
        "main.rs" | "lib.rs" | "bin" => None,
        f => Some(f.trim_end_matches(".rs").to_string()),
    }
}

/// `src/`, and every `.rs` file under it.
fn source_files() -> (PathBuf, Vec<PathBuf>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().and_then(|e| e.to_str()) == Some("rs") {
                files.push(path);
            }
        }
    }
    (src, files)
}

/// `crate::x` paths outside `#[cfg(test)]` code, per top-level module.
fn edges() -> BTreeMap<String, BTreeSet<String>> {
    let (src, files) = source_files();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files.iter().filter(|p| p.file_name().unwrap() != "tests.rs") {
        let Some(top) = top_module(path.strip_prefix(&src).unwrap()) else { continue };
        let text = std::fs::read_to_string(path).unwrap();
        let before_tests = text.split("#[cfg(test)]").next().unwrap();
        let code: String = before_tests.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        let deps = out.entry(top.clone()).or_default();
        deps.extend(crate_modules(&code).into_iter().filter(|m| *m != top));
    }
    out
}

/// The top-level modules `code` names through `crate::`: `crate::a::X`, `crate::b!`
/// (an exported macro, counted as the module that defines it), and each head of a grouped
/// import, `use crate::{c::Y, d::{Z, W}}`.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_').collect() };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            // Split the group at its top-level commas; each part starts with a module name.
            let (mut depth, mut start) = (0usize, 0usize);
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.insert(ident(group[start..j].trim()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.insert(ident(group[start..j].trim()));
                        start = j + 1;
                    }
                    _ => {}
                }
            }
            continue;
        }
        let name = ident(rest);
        let name = match rest[name.len()..].starts_with('!') {
            true => MACROS.iter().find(|m| m.0 == name).map(|m| m.1.to_string()).unwrap_or(name),
            false => name,
        };
        found.insert(name);
    }
    found.remove("");
    found.remove("self");
    found
}

#[test]
fn grouped_imports_and_macros_are_read() {
    let code = "use crate::{metrics::{self, Settings}, model::ShardKey,\n    report};\nlet x = crate::sample::Sample::new(&k);\nlabels!(a);\ncrate::labels!(b);";
    let got: Vec<String> = crate_modules(code).into_iter().collect();
    assert_eq!(got, ["metrics", "model", "report", "sample", "util"]);
}

#[test]
fn every_dependency_is_allowed() {
    let allowed: BTreeMap<&str, BTreeSet<&str>> = ALLOWED.iter().map(|(m, d)| (*m, d.iter().copied().collect())).collect();
    let mut wrong = Vec::new();
    for (module, deps) in edges() {
        let Some(ok) = allowed.get(module.as_str()) else {
            wrong.push(format!("module {module} is not in ALLOWED: place it in the layering"));
            continue;
        };
        for d in deps {
            if !ok.contains(d.as_str()) {
                wrong.push(format!("{module} -> {d}"));
            }
        }
    }
    assert!(wrong.is_empty(), "dependencies against the layering (tests/architecture.rs ALLOWED):\n{}", wrong.join("\n"));
}

#[test]
fn the_allowed_graph_has_no_cycle() {
    // Depth-first search over ALLOWED: what the code may do must be acyclic too.
    let graph: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    fn visit<'a>(n: &'a str, g: &BTreeMap<&'a str, &'a [&'a str]>, path: &mut Vec<&'a str>, done: &mut BTreeSet<&'a str>) {
        if let Some(i) = path.iter().position(|p| *p == n) {
            panic!("cycle: {} -> {n}", path[i..].join(" -> "));
        }
        if done.contains(n) {
            return;
        }
        path.push(n);
        for d in g.get(n).copied().unwrap_or(&[]) {
            visit(d, g, path, done);
        }
        path.pop();
        done.insert(n);
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        visit(n, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_checker_sees_the_modules() {
    // Guards the checker itself: it must find the edges we know exist.
    let e = edges();
    assert!(e["pipeline"].contains("metrics") && e["metrics"].contains("sample") && e["cli"].contains("app"), "{e:?}");
    assert!(e.len() >= 14, "{:?}", e.keys());
}

/// The code map (docs/maintainers.md) and its "where each JSON number is computed" table name
/// files; each must exist (a file moved or renamed without the map is a newcomer's dead end).
#[test]
fn every_file_the_code_map_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("docs/maintainers.md")).unwrap();
    let start = readme.find("\n## Code map").expect("docs/maintainers.md has a Code map");
    let end = readme[start + 1..].find("\n## ").map_or(readme.len(), |e| start + 1 + e);
    let mut missing = Vec::new();
    let mut checked = 0;
    for row in readme[start..end].lines().filter(|l| l.starts_with("| `")) {
        let ticks: Vec<&str> = row.split('`').skip(1).step_by(2).collect();
        // A code-map row's first cell is its folder: bare file names in it are under it.
        let base = ticks.first().filter(|t| t.ends_with('/')).copied().unwrap_or("");
        for t in ticks {
            let path = if t.starts_with("src/") || t.starts_with("tests/") || t.starts_with("scripts/") {
                t.to_string()
            } else if base.is_empty() || !(t.ends_with(".rs") || t.ends_with('/')) || t.contains(' ') {
                continue;
            } else {
                format!("{base}{t}")
            };
            checked += 1;
            if !root.join(&path).exists() && !root.join(base).join(t).exists() {
                missing.push(path);
            }
        }
    }
    assert!(checked > 60, "the reader found only {checked} paths: has the map's table format changed?");
    assert!(missing.is_empty(), "the Code map names files that do not exist: {missing:?}");
}

/// Files along their seams, visibility narrow: no source file over 800 lines, and at most
/// 150 `pub` items outside `lib.rs` (the rest `pub(crate)` or private), so that rustc reports
/// dead code and a reader knows what the tests, examples and fuzz targets rely on.
#[test]
fn files_stay_short_and_visibility_narrow() {
    let (src, files) = source_files();
    let (mut long, mut public) = (Vec::new(), 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        if text.lines().count() > 800 {
            long.push(format!("{} ({} lines)", path.strip_prefix(&src).unwrap().display(), text.lines().count()));
        }
        if path.file_name().unwrap() != "lib.rs" {
            let items = ["fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod ", "use "];
            public += text
                .lines()
                .filter(|l| l.trim_start().strip_prefix("pub ").is_some_and(|r| items.iter().any(|i| r.starts_with(i))))
                .count();
        }
    }
    assert!(long.is_empty(), "split these along their seams: {long:?}");
    assert!(public <= 150, "{public} pub items outside lib.rs: make them pub(crate) unless tests/, examples/ or fuzz/ need them");
}

/// A file's module path: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `lib.rs`, `main.rs` and
/// `bin/` are the crate root (""), which the graphs below leave out.
fn module_path(rel: &Path) -> String {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let file = parts.pop().unwrap_or_default();
    if parts.first().is_some_and(|p| p == "bin") || (parts.is_empty() && (file == "lib.rs" || file == "main.rs")) {
        return String::new();
    }
    if file != "mod.rs" {
        parts.push(file.trim_end_matches(".rs").to_string());
    }
    parts.join("::")
}

/// Each `crate::` and `super::` path of `code` as its segments after the anchor, grouped imports
/// expanded (`crate::a::{b::X, c::{Y, Z}}` is `a b X`, `a c Y`, `a c Z`), with the number of
/// `super::` climbs (`None` for `crate::`). `pub(in crate::x)` is a visibility, not a use.
/// A path starting with one of the file's own `children` (`use key::X;`, `dense::f()` in a
/// `mod.rs`) counts too, as zero climbs with the child as its first segment: a parent that uses
/// its children while they use it back is a circle like any other (issue 50).
fn anchored_paths(code: &str, children: &BTreeSet<String>) -> Vec<(Option<usize>, Vec<String>)> {
    fn is_ident(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }
    /// The paths of one use tree at the start of `s`: segments, then a group or an end.
    fn tree(s: &str) -> Vec<Vec<String>> {
        let mut segs = Vec::new();
        let mut rest = s.trim_start();
        loop {
            if let Some(group) = rest.strip_prefix('{') {
                let (mut depth, mut start, mut out) = (0usize, 0usize, Vec::new());
                for (j, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' | ',' if depth == 0 => {
                            for t in tree(&group[start..j]) {
                                out.push(segs.iter().cloned().chain(t).collect());
                            }
                            if c == '}' {
                                break;
                            }
                            start = j + 1;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                return out;
            }
            let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
            if name.is_empty() {
                break;
            }
            rest = rest[name.len()..].trim_start();
            if name != "self" {
                segs.push(name);
            }
            match rest.strip_prefix("::") {
                Some(r) => rest = r.trim_start(),
                None => break,
            }
        }
        vec![segs]
    }
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(found) = code[i..].find(|c: char| c.is_ascii_alphabetic() || c == '_') {
        let at = i + found;
        let name: String = code[at..].chars().take_while(|c| is_ident(*c)).collect();
        i = at + name.len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(is_ident) || code[..at].trim_end().ends_with("(in") {
            continue;
        }
        let (mut rest, mut climbs) = (&code[at..], None);
        if let Some(r) = rest.strip_prefix("crate::") {
            rest = r;
        } else if children.contains(&name) && before != Some(':') && rest[name.len()..].starts_with("::") {
            // A child's path from its parent: the child is the path's first segment.
            climbs = Some(0);
        } else {
            while let Some(r) = rest.strip_prefix("super::") {
                rest = r;
                climbs = Some(climbs.unwrap_or(0) + 1);
            }
            if climbs.is_none() {
                continue;
            }
        }
        i = (code.len() - rest.len()).max(at + name.len());
        out.extend(tree(rest).into_iter().map(|p| (climbs, p)));
    }
    out
}

/// The file-level import graph: each source file's module and the modules (files) its
/// `crate::`/`super::` paths and its own child paths reach, each path resolved to the longest module prefix it names.
/// Test code is left out as in `edges` (`tests.rs` files, and everything after a file's first
/// `#[cfg(test)]`); the crate root is left out. Re-exports are not followed: `super::X` is an
/// edge to the parent file even when the parent only re-exports `X`.
fn file_edges() -> BTreeMap<String, BTreeSet<String>> {
    let (src, files) = source_files();
    let modules: BTreeSet<String> = files.iter().map(|p| module_path(p.strip_prefix(&src).unwrap())).collect();
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for path in files.iter().filter(|p| p.file_name().unwrap() != "tests.rs") {
        let rel = path.strip_prefix(&src).unwrap();
        let me = module_path(rel);
        if me.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let before_tests = text.split("#[cfg(test)]").next().unwrap();
        let code: String = before_tests.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
        // `super::` inside an inline module would climb from that module, not the file's.
        assert!(
            !code.lines().any(|l| {
                let t = l.trim_start().trim_start_matches("pub(crate) ").trim_start_matches("pub ");
                t.starts_with("mod ") && t.trim_end().ends_with('{')
            }),
            "{}: an inline module outside tests; give it its own file (this checker reads one module per file)",
            rel.display()
        );
        let here: Vec<&str> = me.split("::").collect();
        let children: BTreeSet<String> = modules
            .iter()
            .filter_map(|m| m.strip_prefix(&format!("{me}::")))
            .filter(|rest| !rest.contains("::"))
            .map(str::to_string)
            .collect();
        let deps = out.entry(me.clone()).or_default();
        for (climbs, segs) in anchored_paths(&code, &children) {
            let mut full: Vec<&str> = match climbs {
                None => Vec::new(),
                Some(n) => here[..here.len().saturating_sub(n)].to_vec(),
            };
            full.extend(segs.iter().map(String::as_str));
            let target = (0..=full.len()).rev().map(|n| full[..n].join("::")).find(|m| modules.contains(m) || m.is_empty()).unwrap();
            if !target.is_empty() && target != me {
                deps.insert(target);
            }
        }
    }
    out
}

/// The circles of a graph: one path per strongly connected component of more than one module
/// (Tarjan), each printed as `a -> b -> … -> a`.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    struct State<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        comps: Vec<Vec<&'a str>>,
    }
    fn connect<'a>(v: &'a str, s: &mut State<'a>) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        for w in s.g.get(v).into_iter().flatten() {
            if !s.index.contains_key(w.as_str()) {
                connect(w, s);
                let lw = s.low[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.stack.contains(&w.as_str()) {
                let iw = s.index[w.as_str()];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let at = s.stack.iter().position(|x| *x == v).unwrap();
            let comp = s.stack.split_off(at);
            if comp.len() > 1 {
                s.comps.push(comp);
            }
        }
    }
    let mut s = State { g: graph, index: BTreeMap::new(), low: BTreeMap::new(), stack: Vec::new(), comps: Vec::new() };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            connect(v, &mut s);
        }
    }
    // Within each component, the shortest way back from its first module to itself (breadth first).
    let mut out = Vec::new();
    for comp in &s.comps {
        let members: BTreeSet<&str> = comp.iter().copied().collect();
        let start = *members.iter().next().unwrap();
        let mut came: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        'search: while let Some(v) = queue.pop_front() {
            for w in graph.get(v).into_iter().flatten().map(String::as_str).filter(|w| members.contains(w)) {
                if w == start {
                    let mut path = vec![v];
                    while let Some(p) = came.get(path.last().unwrap()).copied() {
                        path.push(p);
                    }
                    path.reverse();
                    path.push(start);
                    let rest: Vec<&str> = members.iter().copied().filter(|m| !path.contains(m)).collect();
                    let more = match rest.is_empty() {
                        true => String::new(),
                        false => format!(" (in a knot with {})", rest.join(", ")),
                    };
                    out.push(format!("{}{more}", path.join(" -> ")));
                    break 'search;
                }
                if !came.contains_key(w) && w != start {
                    came.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
    }
    out
}

#[test]
fn use_trees_are_read_with_their_anchor() {
    let code = "use super::super::{read, log::QueryLog};\nuse crate::a::{b::X, c::{self, Y}};\npub(in crate::sources) fn f() { crate::util::x(); super::g(); }";
    let show = |code: &str, children: &[&str]| -> Vec<String> {
        let children = children.iter().map(|c| c.to_string()).collect();
        anchored_paths(code, &children).iter().map(|(c, p)| format!("{c:?} {}", p.join("::"))).collect()
    };
    assert_eq!(
        show(code, &[]),
        ["Some(2) read", "Some(2) log::QueryLog", "None a::b::X", "None a::c", "None a::c::Y", "None util::x", "Some(1) g"]
    );
    // A parent's own child paths count; a path that only ends in a child's name does not.
    let parent = "use key::Counts;\nlet d = dense::Dense::new();\nuse crate::other::key::Y;\nlet k = key;\nmonkey::z();";
    assert_eq!(show(parent, &["key", "dense"]), ["Some(0) key::Counts", "Some(0) dense::Dense::new", "None other::key::Y"]);
    assert_eq!(module_path(Path::new("a/b/mod.rs")), "a::b");
    assert_eq!(module_path(Path::new("a/b.rs")), "a::b");
    assert_eq!(module_path(Path::new("lib.rs")), "");
}

#[test]
fn circles_are_found_and_named() {
    let g = |edges: &[(&str, &str)]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            m.entry(a.to_string()).or_default().insert(b.to_string());
            m.entry(b.to_string()).or_default();
        }
        m
    };
    assert!(circles(&g(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
    assert_eq!(circles(&g(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])), ["a -> b -> c -> a"]);
}

/// No circle of imports between files: a file's module never reaches, through `crate::` and
/// `super::` paths, a module that reaches it back (issue 50). Each circle is named.
#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let g = file_edges();
    assert!(
        g["sources::queries::sessions"].contains("sources::queries::placement"),
        "the checker must see sessions.rs use its sibling through super::: {g:?}"
    );
    assert!(g["sample"].contains("sample::key"), "the checker must see sample/mod.rs use its child key.rs: {g:?}");
    let found = circles(&g);
    assert!(
        found.is_empty(),
        "circles of imports between files (src/ module paths):\n{}",
        found.iter().map(|c| c.as_str()).collect::<Vec<_>>().join("\n")
    );
}

/// One job per file: no source file over 600 lines (issue 50), split along meaning.
#[test]
fn no_source_file_over_600_lines() {
    let (src, files) = source_files();
    let mut long: Vec<String> = files
        .iter()
        .map(|p| (p, std::fs::read_to_string(p).unwrap().lines().count()))
        .filter(|(_, n)| *n > 600)
        .map(|(p, n)| format!("{} ({n} lines)", p.strip_prefix(&src).unwrap().display()))
        .collect();
    long.sort();
    assert!(long.is_empty(), "split these by meaning (one job per file): {long:?}");
}
