//! Per-file outlines (definitions, calls, imports, inheritance) in every language, against
//! facts read off the sources by hand.

use engram_code::{outline_file, FileOutline};

fn outline(path: &str, source: &str) -> FileOutline {
    outline_file(path, source).expect("a supported language")
}

fn defs(o: &FileOutline) -> Vec<(&str, &str, u32, bool)> {
    o.definitions
        .iter()
        .map(|d| {
            (
                d.kind.as_str(),
                d.qualified.as_str(),
                d.start_line,
                d.exported,
            )
        })
        .collect()
}

fn calls(o: &FileOutline) -> Vec<(&str, Option<&str>)> {
    o.calls
        .iter()
        .map(|c| (c.callee.as_str(), c.caller.as_deref()))
        .collect()
}

fn imports(o: &FileOutline) -> Vec<(&str, Vec<&str>)> {
    o.imports
        .iter()
        .map(|i| {
            (
                i.specifier.as_str(),
                i.names.iter().map(String::as_str).collect(),
            )
        })
        .collect()
}

fn heritage(o: &FileOutline) -> Vec<(&str, &str, &str)> {
    o.heritage
        .iter()
        .map(|h| (h.child.as_str(), h.kind.as_str(), h.parent.as_str()))
        .collect()
}

#[test]
fn outline_store_rs() {
    let o = outline("src/store.rs", "use crate::db::{Pool, connect};\nmod cache;\n\npub struct Store { pool: Pool }\n\nimpl Store {\n    pub fn open() -> Self { Store { pool: connect() } }\n    fn get(&self) { self.pool.query(); helper(); }\n}\n\nimpl Drop for Store {\n    fn drop(&mut self) {}\n}\n\nfn helper() {}\n");
    assert_eq!(
        defs(&o),
        [
            ("module", "cache", 2, false),
            ("type", "Store", 4, true),
            ("impl", "Store", 6, false),
            ("method", "Store::open", 7, true),
            ("method", "Store::get", 8, false),
            ("impl", "Drop for Store", 11, false),
            ("method", "Store::drop", 12, false),
            ("function", "helper", 15, false)
        ]
    );
    assert_eq!(
        calls(&o),
        [
            ("connect", Some("Store::open")),
            ("helper", Some("Store::get")),
            ("query", Some("Store::get"))
        ]
    );
    assert_eq!(
        imports(&o),
        [
            ("crate::db", vec!["Pool", "connect"]),
            ("mod cache", vec![])
        ]
    );
    assert_eq!(heritage(&o), [("Store", "implements", "Drop")]);
}

#[test]
fn outline_service_py() {
    let o = outline("pkg/service.py", "from .db import connect, Pool\nimport os.path\n\nclass Service(Base, mixins.Logged):\n    def run(self):\n        conn = connect()\n        return self._step(conn)\n\n    def _step(self, c):\n        return c\n\ndef _private():\n    pass\n");
    assert_eq!(
        defs(&o),
        [
            ("class", "Service", 4, true),
            ("method", "Service.run", 5, false),
            ("method", "Service._step", 9, false),
            ("function", "_private", 12, false)
        ]
    );
    assert_eq!(
        calls(&o),
        [
            ("connect", Some("Service.run")),
            ("_step", Some("Service.run"))
        ]
    );
    assert_eq!(
        imports(&o),
        [(".db", vec!["connect", "Pool"]), ("os.path", vec![])]
    );
    assert_eq!(
        heritage(&o),
        [
            ("Service", "extends", "Base"),
            ("Service", "extends", "Logged")
        ]
    );
}

#[test]
fn outline_app_ts() {
    let o = outline("src/app.ts", "import { Store, open } from './store';\nimport Default from \"../lib/util\";\nexport { x } from './x';\nconst fs = require('fs');\n\nexport class App extends Base implements Runnable, Named {\n  run(): void { this.store.save(); open(); }\n}\nexport interface Runnable extends Base2 { run(): void }\nexport const start = () => new App();\nfunction local() {}\n");
    assert_eq!(
        defs(&o),
        [
            ("class", "App", 6, true),
            ("method", "App.run", 7, false),
            ("interface", "Runnable", 9, true),
            ("method", "Runnable.run", 9, false),
            ("function", "start", 10, true),
            ("function", "local", 11, false)
        ]
    );
    assert_eq!(
        calls(&o),
        [
            ("open", Some("App.run")),
            ("save", Some("App.run")),
            ("App", Some("start"))
        ]
    );
    assert_eq!(
        imports(&o),
        [
            ("./store", vec!["Store", "open"]),
            ("../lib/util", vec!["Default"]),
            ("./x", vec!["x"]),
            ("fs", vec![])
        ]
    );
    assert_eq!(
        heritage(&o),
        [
            ("App", "extends", "Base"),
            ("App", "implements", "Runnable"),
            ("App", "implements", "Named"),
            ("Runnable", "extends", "Base2")
        ]
    );
}

#[test]
fn outline_view_tsx() {
    let o = outline(
        "src/View.tsx",
        "import React from 'react';\nexport function View() { return <div>{format()}</div>; }\n",
    );
    assert_eq!(defs(&o), [("function", "View", 2, true)]);
    assert_eq!(calls(&o), [("format", Some("View"))]);
    assert_eq!(imports(&o), [("react", vec!["React"])]);
    assert_eq!(heritage(&o), []);
}

#[test]
fn outline_index_js() {
    let o = outline("lib/index.js", "const { helper } = require('./helper');\nclass Cache extends Map { get(k) { return helper(k); } }\nmodule.exports = Cache;\n");
    assert_eq!(
        defs(&o),
        [
            ("class", "Cache", 2, false),
            ("method", "Cache.get", 2, false)
        ]
    );
    assert_eq!(calls(&o), [("helper", Some("Cache.get"))]);
    assert_eq!(imports(&o), [("./helper", vec![])]);
    assert_eq!(heritage(&o), [("Cache", "extends", "Map")]);
}

#[test]
fn outline_store_go() {
    let o = outline("store/store.go", "package store\n\nimport (\n\t\"fmt\"\n\t\"example.com/app/db\"\n)\n\ntype Store struct{ pool *db.Pool }\n\nfunc (s *Store) Get(key string) string { fmt.Println(key); return s.lookup(key) }\n\nfunc (s *Store) lookup(k string) string { return k }\n\nfunc New() *Store { return &Store{pool: db.Open()} }\n");
    assert_eq!(
        defs(&o),
        [
            ("type", "Store", 8, true),
            ("method", "Store.Get", 10, true),
            ("method", "Store.lookup", 12, false),
            ("function", "New", 14, true)
        ]
    );
    assert_eq!(
        calls(&o),
        [
            ("Println", Some("Store.Get")),
            ("lookup", Some("Store.Get")),
            ("Open", Some("New"))
        ]
    );
    assert_eq!(
        imports(&o),
        [("fmt", vec![]), ("example.com/app/db", vec![])]
    );
    assert_eq!(heritage(&o), []);
}

/// Hostile nesting, thousands of levels deep, in every language: outlining and chunking
/// finish (no stack overflow) on a thread with a small stack, and no text is lost.
#[test]
fn files_nested_thousands_of_levels_deep_are_outlined_and_chunked() {
    let depth = 5_000;
    let sources = [
        (
            "deep.py",
            format!("x = {}1{}\n", "[".repeat(depth), "]".repeat(depth)),
        ),
        (
            "deep.js",
            format!("const x = {}1{};\n", "(".repeat(depth), ")".repeat(depth)),
        ),
        (
            "deep.ts",
            "function f() {\n".repeat(depth) + &"}\n".repeat(depth),
        ),
        (
            "deep.rs",
            format!(
                "fn main() {{ {}1{} }}\n",
                "{".repeat(depth),
                "}".repeat(depth)
            ),
        ),
        (
            "deep.go",
            format!(
                "package p\nvar x = {}1{}\n",
                "(".repeat(depth),
                ")".repeat(depth)
            ),
        ),
        ("broken.py", "def f(:\n    [".repeat(depth)),
    ];
    let worker = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut outliner = engram_code::Outliner::new();
            for (path, source) in &sources {
                let outline = outliner
                    .outline(path, source)
                    .expect("a supported language");
                assert_eq!(outline.path, *path);
                let options = engram_code::ChunkOptions::default();
                let chunks = engram_code::chunk_file(path, source, &options);
                let mut covered = vec![false; source.len()];
                for chunk in &chunks {
                    covered[chunk.start_byte..chunk.end_byte].fill(true);
                }
                let lost = source
                    .bytes()
                    .zip(&covered)
                    .filter(|(b, c)| !b.is_ascii_whitespace() && !**c)
                    .count();
                assert_eq!(lost, 0, "{path}: {lost} bytes in no chunk");
            }
        })
        .unwrap();
    worker.join().expect("no stack overflow");
}
