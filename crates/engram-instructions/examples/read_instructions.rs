//! Prints the rules engram reads from instruction files: `read_instructions PATH-IN-PROJECT FILE...`
//! pairs, or a folder of `OWNER__REPO__path` files (the evaluation's naming).

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for arg in &args {
        let path = std::path::PathBuf::from(arg);
        let entries: Vec<std::path::PathBuf> = if path.is_dir() {
            let mut list: Vec<_> = std::fs::read_dir(&path)
                .map(|d| {
                    d.filter_map(|e| e.ok())
                        .map(|e| e.path())
                        .filter(|p| p.is_file())
                        .collect()
                })
                .unwrap_or_default();
            list.sort();
            list
        } else {
            vec![path]
        };
        for entry in entries {
            let name = entry
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let in_project = name
                .splitn(3, "__")
                .nth(2)
                .unwrap_or(&name)
                .replace("__", "/");
            files.push((in_project, entry));
        }
    }
    for (in_project, file) in files {
        let Ok(bytes) = std::fs::read(&file) else {
            continue;
        };
        match engram_instructions::parse(&in_project, &bytes) {
            Ok(read) => {
                println!(
                    "== {} ({}) {} rules, imports {:?}",
                    file.display(),
                    read.format.as_str(),
                    read.rules.len(),
                    read.imports.iter().map(|i| &i.target).collect::<Vec<_>>()
                );
                for rule in &read.rules {
                    println!(
                        "  [{}] L{}-{} {} | {}",
                        rule.memory_type.as_str(),
                        rule.line,
                        rule.end_line,
                        rule.files.join(","),
                        rule.text
                            .replace('\n', " ⏎ ")
                            .chars()
                            .take(160)
                            .collect::<String>()
                    );
                }
            }
            Err(e) => println!("== {}: {e}", file.display()),
        }
    }
}
