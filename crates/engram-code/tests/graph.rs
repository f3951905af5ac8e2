//! The layer-1 graph across files, in every language, against hand-verified facts: imports
//! resolved to repository files (relative paths, Python packages, Rust `mod`/`use`, Go
//! packages, TS path aliases), calls and inheritance linked across files, containment.

use engram_code::{build_graph, outline_file, CodeGraph, FileSet};

fn graph(files: &[(&str, &str)]) -> CodeGraph {
    let outlines: Vec<_> = files
        .iter()
        .map(|(p, s)| outline_file(p, s).expect("supported"))
        .collect();
    let set = FileSet::new(files.iter().map(|(p, _)| *p));
    build_graph(&outlines, &set)
}

fn has(g: &CodeGraph, kind: &str, from: &str, to: &str) -> bool {
    g.edges_of(kind).contains(&(from, to))
}

#[test]
fn typescript_relative_alias_and_index_imports() {
    let g = graph(&[
        ("src/app.ts", "import { open } from './store';\nimport { log } from '@/util/log';\nimport * as m from './models';\nexport class App extends Base { run() { open(); log('x'); } }\n"),
        ("src/store.ts", "export function open() {}\nexport class Base {}\n"),
        ("src/util/log.ts", "export const log = (m: string) => console.log(m);\n"),
        ("src/models/index.ts", "export interface User {}\n"),
        ("src/other.ts", "export function open() {}\n"),
    ]);
    assert!(has(&g, "imports", "file:src/app.ts", "file:src/store.ts"));
    assert!(has(
        &g,
        "imports",
        "file:src/app.ts",
        "file:src/util/log.ts"
    ));
    assert!(has(
        &g,
        "imports",
        "file:src/app.ts",
        "file:src/models/index.ts"
    ));
    // `open` exists twice; the imported file wins.
    assert!(has(
        &g,
        "calls",
        "src/app.ts#method:App.run",
        "src/store.ts#function:open"
    ));
    assert!(!has(
        &g,
        "calls",
        "src/app.ts#method:App.run",
        "src/other.ts#function:open"
    ));
    assert!(has(
        &g,
        "calls",
        "src/app.ts#method:App.run",
        "src/util/log.ts#function:log"
    ));
    assert!(has(
        &g,
        "extends",
        "src/app.ts#class:App",
        "src/store.ts#class:Base"
    ));
    assert!(has(
        &g,
        "contains",
        "src/app.ts#class:App",
        "src/app.ts#method:App.run"
    ));
    assert!(has(
        &g,
        "contains",
        "file:src/app.ts",
        "src/app.ts#class:App"
    ));
    assert!(has(
        &g,
        "exports",
        "file:src/store.ts",
        "src/store.ts#function:open"
    ));
}

#[test]
fn file_links_pair_the_files_of_cross_file_edges() {
    let g = graph(&[
        ("src/app.ts", "import { open } from './store';\nexport class App extends Base { run() { open(); } }\n"),
        ("src/store.ts", "export function open() {}\nexport class Base {}\n"),
        ("src/lonely.ts", "export function alone() { return 1; }\n"),
    ]);
    let links = g.file_links();
    let links: Vec<(&str, &str)> = links
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    // Imports, calls and extends from app.ts all land in store.ts: one pair. Containment
    // never leaves a file, and lonely.ts has no edge to another file.
    assert_eq!(links, [("src/app.ts", "src/store.ts")]);
    // From a subset of files: the links starting there. `src/app` is a prefix of
    // `src/app.ts`'s ids, not its file.
    let from = |files: &[&str]| g.file_links_from(&files.iter().copied().collect());
    assert_eq!(from(&["src/app.ts"]), g.file_links());
    assert!(from(&["src/store.ts", "src/lonely.ts"]).is_empty());
    assert!(from(&["src/app"]).is_empty());
    assert!(has(
        &g,
        "contains",
        "file:src/lonely.ts",
        "src/lonely.ts#function:alone"
    ));
}

#[test]
fn python_relative_absolute_and_package_imports() {
    let g = graph(&[
        ("app/service.py", "from .db import connect\nfrom app.models import user\nimport app.util\n\nclass Service(user.Base):\n    def run(self):\n        return connect()\n"),
        ("app/db.py", "def connect():\n    pass\n"),
        ("app/models/__init__.py", ""),
        ("app/models/user.py", "class Base:\n    pass\n"),
        ("app/util.py", "X = 1\n"),
    ]);
    assert!(has(&g, "imports", "file:app/service.py", "file:app/db.py"));
    assert!(has(
        &g,
        "imports",
        "file:app/service.py",
        "file:app/models/__init__.py"
    ));
    assert!(has(
        &g,
        "imports",
        "file:app/service.py",
        "file:app/models/user.py"
    ));
    assert!(has(
        &g,
        "imports",
        "file:app/service.py",
        "file:app/util.py"
    ));
    assert!(has(
        &g,
        "calls",
        "app/service.py#method:Service.run",
        "app/db.py#function:connect"
    ));
    assert!(has(
        &g,
        "extends",
        "app/service.py#class:Service",
        "app/models/user.py#class:Base"
    ));
}

#[test]
fn rust_mod_and_use_paths() {
    let g = graph(&[
        ("crates/x/src/lib.rs", "mod store;\npub mod db;\n"),
        ("crates/x/src/store.rs", "use crate::db::Pool;\nuse super::db;\n\npub struct Store;\n\nimpl Store {\n    pub fn open() -> Pool { Pool::connect() }\n}\n\nimpl Shared for Store {}\n"),
        ("crates/x/src/db/mod.rs", "pub struct Pool;\nimpl Pool { pub fn connect() -> Pool { Pool } }\npub trait Shared {}\n"),
    ]);
    assert!(has(
        &g,
        "imports",
        "file:crates/x/src/lib.rs",
        "file:crates/x/src/store.rs"
    ));
    assert!(has(
        &g,
        "imports",
        "file:crates/x/src/store.rs",
        "file:crates/x/src/db/mod.rs"
    ));
    // `impl Store` methods hang under the struct.
    assert!(has(
        &g,
        "contains",
        "crates/x/src/store.rs#type:Store",
        "crates/x/src/store.rs#method:Store::open"
    ));
    assert!(has(
        &g,
        "calls",
        "crates/x/src/store.rs#method:Store::open",
        "crates/x/src/db/mod.rs#method:Pool::connect"
    ));
    assert!(has(
        &g,
        "implements",
        "crates/x/src/store.rs#type:Store",
        "crates/x/src/db/mod.rs#trait:Shared"
    ));
}

#[test]
fn go_packages_by_import_path() {
    let g = graph(&[
        (
            "cmd/app/main.go",
            "package main\n\nimport \"example.com/shop/store\"\n\nfunc main() { store.New() }\n",
        ),
        (
            "store/store.go",
            "package store\n\nfunc New() *Store { return &Store{} }\n",
        ),
        ("store/types.go", "package store\n\ntype Store struct{}\n"),
        ("store/store_test.go", "package store\n"),
    ]);
    assert!(has(
        &g,
        "imports",
        "file:cmd/app/main.go",
        "file:store/store.go"
    ));
    assert!(has(
        &g,
        "imports",
        "file:cmd/app/main.go",
        "file:store/types.go"
    ));
    assert!(!has(
        &g,
        "imports",
        "file:cmd/app/main.go",
        "file:store/store_test.go"
    ));
    assert!(has(
        &g,
        "calls",
        "cmd/app/main.go#function:main",
        "store/store.go#function:New"
    ));
}

#[test]
fn javascript_require_and_unresolved_packages() {
    let g = graph(&[
        ("lib/index.js", "const helper = require('./helper');\nconst fs = require('fs');\nfunction main() { return helper(); }\n"),
        ("lib/helper.js", "function helper() {}\nmodule.exports = helper;\n"),
    ]);
    assert_eq!(
        g.edges_of("imports"),
        vec![("file:lib/index.js", "file:lib/helper.js")]
    );
    assert!(has(
        &g,
        "calls",
        "lib/index.js#function:main",
        "lib/helper.js#function:helper"
    ));
}
