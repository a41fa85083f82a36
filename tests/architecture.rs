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
    ("sources", &["model", "bsonx", "util", "error"]),
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
