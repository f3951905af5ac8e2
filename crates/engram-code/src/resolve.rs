//! Import resolution inside one repository: which file an import refers to, good enough to
//! link files for each language. Works on the set of paths the host indexed; never touches a
//! file system.

use std::collections::{BTreeSet, HashMap};

use crate::{Import, Language};

/// The repository's files, for resolving imports between them.
#[derive(Debug, Default, Clone)]
pub struct FileSet {
    files: BTreeSet<String>,
    /// Directory → its files (for Go packages).
    dirs: HashMap<String, Vec<String>>,
}

impl FileSet {
    /// A set of repository-relative paths (`/`-separated).
    pub fn new<I: IntoIterator<Item = S>, S: Into<String>>(paths: I) -> Self {
        let mut set = FileSet::default();
        for path in paths {
            let path = normalize(&path.into());
            set.dirs
                .entry(parent(&path).to_owned())
                .or_default()
                .push(path.clone());
            set.files.insert(path);
        }
        set
    }

    /// Whether `path` is in the set.
    pub fn contains(&self, path: &str) -> bool {
        self.files.contains(path)
    }

    /// The files `import` in `from` (a file of `language`) refers to; empty for packages
    /// outside the repository (`react`, `os`, `fmt`).
    pub fn resolve(&self, from: &str, language: Language, import: &Import) -> Vec<String> {
        let spec = import.specifier.as_str();
        match language {
            Language::TypeScript | Language::Tsx | Language::JavaScript => {
                self.resolve_js(from, spec).into_iter().collect()
            }
            Language::Python => self.resolve_python(from, spec, &import.names),
            Language::Rust => self.resolve_rust(from, spec).into_iter().collect(),
            Language::Go => self.resolve_go(spec),
        }
    }

    fn first_existing(&self, candidates: impl IntoIterator<Item = String>) -> Option<String> {
        candidates
            .into_iter()
            .map(|c| normalize(&c))
            .find(|c| self.files.contains(c))
    }

    fn resolve_js(&self, from: &str, spec: &str) -> Option<String> {
        let base = if spec.starts_with("./") || spec.starts_with("../") {
            join(parent(from), spec)
        } else if let Some(rest) = spec.strip_prefix("@/").or_else(|| spec.strip_prefix("~/")) {
            // The common `paths` alias for the source root.
            format!("src/{rest}")
        } else if spec.starts_with("src/") || spec.starts_with('/') {
            spec.trim_start_matches('/').to_owned()
        } else {
            return None;
        };
        // `import "./x.js"` in TypeScript means `./x.ts`.
        let stem = ["js", "jsx", "mjs", "cjs"]
            .iter()
            .find_map(|e| base.strip_suffix(&format!(".{e}")))
            .map(str::to_owned);
        let mut candidates = vec![base.clone()];
        for root in [Some(base.clone()), stem].into_iter().flatten() {
            for ext in ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs"] {
                candidates.push(format!("{root}.{ext}"));
            }
            for ext in ["ts", "tsx", "js", "jsx"] {
                candidates.push(format!("{root}/index.{ext}"));
            }
        }
        self.first_existing(candidates)
    }

    fn resolve_python(&self, from: &str, spec: &str, names: &[String]) -> Vec<String> {
        let dots = spec.chars().take_while(|&c| c == '.').count();
        let module = &spec[dots..];
        let bases: Vec<String> = if dots > 0 {
            let mut dir = parent(from).to_owned();
            for _ in 1..dots {
                dir = parent(&dir).to_owned();
            }
            vec![join(&dir, &module.replace('.', "/"))]
        } else {
            // Absolute: from the repository root, `src/`, or any folder that holds it.
            let rel = module.replace('.', "/");
            let first = format!("{}/", rel.split('/').next().unwrap_or(&rel));
            let mut roots: BTreeSet<String> = ["".to_owned(), "src/".to_owned()].into();
            for f in &self.files {
                if let Some(i) = f.find(&first) {
                    if i == 0 || f.as_bytes()[i - 1] == b'/' {
                        roots.insert(f[..i].to_owned());
                    }
                }
            }
            roots.into_iter().map(|r| format!("{r}{rel}")).collect()
        };
        for base in bases {
            let base = base.trim_end_matches('/').to_owned();
            let module_file =
                self.first_existing([format!("{base}.py"), format!("{base}/__init__.py")]);
            // `from pkg import mod` imports modules, not only names.
            let submodules: Vec<String> = names
                .iter()
                .filter_map(|n| {
                    self.first_existing([
                        format!("{base}/{n}.py"),
                        format!("{base}/{n}/__init__.py"),
                    ])
                })
                .collect();
            if module_file.is_some() || !submodules.is_empty() {
                return module_file.into_iter().chain(submodules).collect();
            }
        }
        Vec::new()
    }

    fn resolve_rust(&self, from: &str, spec: &str) -> Option<String> {
        let dir = parent(from);
        let stem = file_stem(from);
        // Where this file's child modules live.
        let module_dir = if matches!(stem, "mod" | "lib" | "main") {
            dir.to_owned()
        } else {
            join(dir, stem)
        };
        if let Some(name) = spec.strip_prefix("mod ") {
            return self.first_existing([
                format!("{module_dir}/{name}.rs"),
                format!("{module_dir}/{name}/mod.rs"),
            ]);
        }
        let mut segments: Vec<&str> = spec.split("::").collect();
        let start = match segments.first().copied() {
            Some("crate") => {
                segments.remove(0);
                self.crate_root(from)?
            }
            Some("super") => {
                segments.remove(0);
                parent(&module_dir).to_owned()
            }
            Some("self") => {
                segments.remove(0);
                module_dir
            }
            _ => return None,
        };
        // The longest module path that is a file: `crate::a::b::Item` → a/b.rs or a.rs.
        for len in (1..=segments.len()).rev() {
            let rel = segments[..len].join("/");
            if let Some(found) =
                self.first_existing([format!("{start}/{rel}.rs"), format!("{start}/{rel}/mod.rs")])
            {
                return Some(found);
            }
        }
        // `use crate::Item` refers to the crate root itself.
        self.first_existing([format!("{start}/lib.rs"), format!("{start}/main.rs")])
    }

    /// The folder holding the crate root (`lib.rs` / `main.rs`) above `from`.
    fn crate_root(&self, from: &str) -> Option<String> {
        let mut dir = parent(from).to_owned();
        loop {
            if self.files.contains(&join(&dir, "lib.rs"))
                || self.files.contains(&join(&dir, "main.rs"))
            {
                return Some(dir);
            }
            if dir.is_empty() {
                return None;
            }
            dir = parent(&dir).to_owned();
        }
    }

    /// A Go import path names a package folder; the repository's folder whose path is the
    /// longest suffix of it is that package.
    fn resolve_go(&self, spec: &str) -> Vec<String> {
        let best = self
            .dirs
            .keys()
            .filter(|d| !d.is_empty() && (spec == d.as_str() || spec.ends_with(&format!("/{d}"))))
            .max_by_key(|d| d.len());
        best.map(|d| {
            let mut files: Vec<String> = self.dirs[d]
                .iter()
                .filter(|f| f.ends_with(".go") && !f.ends_with("_test.go"))
                .cloned()
                .collect();
            files.sort();
            files
        })
        .unwrap_or_default()
    }
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split('.').next().unwrap_or(name)
}

fn join(dir: &str, rel: &str) -> String {
    if dir.is_empty() {
        rel.to_owned()
    } else {
        format!("{dir}/{rel}")
    }
}

/// Removes `.` and resolves `..` segments; a path escaping the root keeps no `..`.
fn normalize(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    out.join("/")
}
